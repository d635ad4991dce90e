/*===- stub_driver.h - a driver that prepares nothing ------------*- C -*-===*
 *
 * Registered over the built-in drivers so that a test or the fuzzer
 * exercises validation alone, without loading (possibly mutated) code.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_TEST_STUB_DRIVER_H
#define DLC_TEST_STUB_DRIVER_H

#include "dlc/driver.h"

/* Fills `out_driver` (application-owned storage) for `target`. */
void dlc_test_stub_driver(dlcx_target_t target, dlc_driver_t *out_driver);

#endif /* DLC_TEST_STUB_DRIVER_H */
