/*===- test_util.h - assertions for the plain-C runtime tests ----*- C -*-===*/

#ifndef DLC_TEST_UTIL_H
#define DLC_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlc/runtime.h"

/* Fails the whole test program at the first broken expectation: the later
 * checks usually depend on the earlier ones. */
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* `call` returns `expected`; prints the status name and `message` if not. */
#define CHECK_STATUS(call, expected, message)                                  \
  do {                                                                         \
    dlc_status_t check_status_ = (call);                                       \
    if (check_status_ != (expected)) {                                         \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s: %s\n", __FILE__,    \
              __LINE__, #call, dlc_status_name(check_status_),                 \
              dlc_status_name(expected), (message));                           \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define CHECK_OK(call, message) CHECK_STATUS(call, DLC_OK, message)

/* `text` contains `part`. */
#define CHECK_CONTAINS(text, part)                                             \
  do {                                                                         \
    if (!strstr((text), (part))) {                                             \
      fprintf(stderr, "%s:%d: '%s' does not contain '%s'\n", __FILE__,         \
              __LINE__, (text), (part));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* A context whose built-in GPU drivers get these options (NULL: their
 * defaults), with the system allocator. */
static inline dlc_status_t
dlc_test_context_create(const struct dlc_vulkan_driver_options_t *vulkan,
                        const struct dlc_cuda_driver_options_t *cuda,
                        dlc_context_t **out_context) {
  dlc_context_options_t options;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.vulkan = vulkan;
  options.cuda = cuda;
  return dlc_context_create(&options, out_context);
}

#endif /* DLC_TEST_UTIL_H */
