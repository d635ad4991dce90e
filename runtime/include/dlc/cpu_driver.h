/*===- cpu_driver.h - the CPU driver -----------------------------*- C -*-===*
 *
 * Runs artifacts whose kernels are native code (DLCX_TARGET_CPU). Two ways to
 * get at the code, with the same C API for the application:
 *
 *  - hosted (Linux and other systems with a dynamic loader): the artifact's
 *    CODE section is a position-independent ELF shared object, loaded with
 *    dlopen at model load. dlc_context_create registers this driver.
 *  - static (bare metal, or no dynamic loader): the application links the
 *    kernel object code itself and hands the driver a table of
 *    {symbol name, function}; the CODE section is not used.
 *
 * Native code from an artifact runs with the privileges of the process. The
 * loader validates the container and the ELF layout, not what the code does:
 * load CPU artifacts only from sources you would run programs from.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_CPU_DRIVER_H
#define DLC_CPU_DRIVER_H

#include <stddef.h>

#include "dlc/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dlc_cpu_symbol_t {
  const char *name; /* the kernel's name in the artifact */
  dlcx_cpu_kernel_fn fn;
} dlc_cpu_symbol_t;

/* The dlopen-based driver. `allocator` may be NULL for the system one. In a
 * build without a dynamic loader, model loads through it fail with
 * DLC_ERROR_UNSUPPORTED. Destroy with dlc_driver_destroy. */
dlc_status_t dlc_cpu_driver_create(const dlc_allocator_t *allocator,
                                   dlc_driver_t **out_driver);

/* A driver that resolves kernels in `symbols` (borrowed: it must outlive the
 * driver) instead of loading code. Register it with
 * dlc_context_register_driver, then destroy it with dlc_driver_destroy
 * after the context. A kernel missing from the table fails the model load
 * with a message naming it. */
dlc_status_t dlc_cpu_driver_create_static(const dlc_allocator_t *allocator,
                                          const dlc_cpu_symbol_t *symbols,
                                          size_t symbol_count,
                                          dlc_driver_t **out_driver);

/* The static driver for kernels dlc-compile compiled: the object and the
 * kernel table source (`dlc_kernels`, `dlc_kernel_count`,
 * `dlc_kernels_fingerprint`) that `dlc-compile --emit=obj` writes. Kernel
 * names repeat across models (main_k0_...), so a name alone does not show
 * that a linked function is the artifact's kernel: a model load fails,
 * saying so, unless the artifact's CPU code fingerprint (format 1.3)
 * equals `fingerprint`, i.e. it was compiled to the same object. */
dlc_status_t dlc_cpu_driver_create_linked(const dlc_allocator_t *allocator,
                                          const dlc_cpu_symbol_t *symbols,
                                          size_t symbol_count,
                                          uint64_t fingerprint,
                                          dlc_driver_t **out_driver);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_CPU_DRIVER_H */
