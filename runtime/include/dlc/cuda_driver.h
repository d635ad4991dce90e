/*===- cuda_driver.h - the CUDA driver ---------------------------*- C -*-===*
 *
 * Runs artifacts whose kernels are PTX (DLCX_TARGET_CUDA) on NVIDIA GPUs
 * through the CUDA driver API. libcuda.so.1 is opened with dlopen the first
 * time a model or a probe needs it; no CUDA SDK is needed to build the
 * runtime, and where the library or a device is missing, loads report
 * DLC_ERROR_UNAVAILABLE naming what is missing.
 *
 * dlc_context_create registers this driver in builds that contain it
 * (DLC_RUNTIME_ENABLE_CUDA). Environment variable, optional:
 *   DLC_CUDA_LIBRARY   the library to open instead of libcuda.so.1
 * CUDA's own variables (CUDA_VISIBLE_DEVICES, the JIT cache settings) apply
 * as usual.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_CUDA_DRIVER_H
#define DLC_CUDA_DRIVER_H

#include "dlc/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `allocator` may be NULL for the system one. Creating the driver loads
 * nothing. Destroy with dlc_driver_destroy after every context that
 * registered it. */
dlc_status_t dlc_cuda_driver_create(const dlc_allocator_t *allocator,
                                    dlc_driver_t **out_driver);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_CUDA_DRIVER_H */
