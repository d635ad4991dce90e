/*===- cuda_driver.h - the CUDA driver ---------------------------*- C -*-===*
 *
 * Runs artifacts whose kernels are PTX (DLCX_TARGET_CUDA) on NVIDIA GPUs
 * through the CUDA driver API. libcuda.so.1 is opened with dlopen the first
 * time a model or a probe needs it; no CUDA SDK is needed to build the
 * runtime, and where the library or a device is missing, loads report
 * DLC_ERROR_UNAVAILABLE naming what is missing.
 *
 * dlc_context_create registers this driver in builds that contain it
 * (DLC_RUNTIME_ENABLE_CUDA), with the options in dlc_context_options_t.cuda.
 * The library reads no environment variable of its own; dlc-run maps
 * DLC_CUDA_LIBRARY onto the options (runtime/README.md). CUDA's own
 * variables (CUDA_VISIBLE_DEVICES, the JIT cache settings) apply
 * as usual.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_CUDA_DRIVER_H
#define DLC_CUDA_DRIVER_H

#include "dlc/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dlc_cuda_driver_options_t {
  uint32_t struct_size; /* sizeof(dlc_cuda_driver_options_t) */
  /* The CUDA driver library to open; NULL or "": libcuda.so.1. */
  const char *library;
} dlc_cuda_driver_options_t;

/* `allocator` may be NULL for the system one, `options` NULL for the
 * defaults (the string is copied). Creating the driver loads nothing.
 * Destroy with dlc_driver_destroy after every context that registered it. */
dlc_status_t
dlc_cuda_driver_create_with_options(const dlc_allocator_t *allocator,
                                    const dlc_cuda_driver_options_t *options,
                                    dlc_driver_t **out_driver);

/* dlc_cuda_driver_create_with_options with the defaults. */
dlc_status_t dlc_cuda_driver_create(const dlc_allocator_t *allocator,
                                    dlc_driver_t **out_driver);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_CUDA_DRIVER_H */
