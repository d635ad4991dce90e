/*===- vulkan_driver.h - the Vulkan driver -----------------------*- C -*-===*
 *
 * Runs artifacts whose kernels are SPIR-V compute shaders
 * (DLCX_TARGET_VULKAN) on any Vulkan 1.1 device. The Vulkan loader
 * (libvulkan.so.1) is opened with dlopen the first time a model or a probe
 * needs it, so an application that never loads a Vulkan artifact never
 * loads Vulkan, and one binary runs where Vulkan is present and reports
 * DLC_ERROR_UNAVAILABLE, naming what is missing, where it is not.
 *
 * dlc_context_create registers this driver in builds that contain it
 * (DLC_RUNTIME_ENABLE_VULKAN). Environment variables, all optional:
 *   DLC_VULKAN_LIBRARY   the loader to open instead of libvulkan.so.1
 *   DLC_VULKAN_DEVICE    only devices whose name contains this text count;
 *                        dlc_model_options_t.device_index picks among them
 *   DLC_VULKAN_VALIDATE  1: enable VK_LAYER_KHRONOS_validation when it is
 *                        installed, print every validation message to
 *                        stderr, and fail the next model or session call
 *                        after a validation error with DLC_ERROR_DEVICE
 *   DLC_VULKAN_STAGING   1: copy inputs, outputs and weights through staging
 *                        buffers even where device memory is host-visible
 *                        (the discrete-GPU path, on any device)
 *   DLC_VULKAN_MASK_FEATURES  a DLCX_FEATURE_VK_* mask (e.g. 0x1100) to
 *                        treat as missing: those device features are neither
 *                        reported nor enabled, as on a smaller device
 * They are read when the driver first opens the loader (the device mask and
 * staging choice when it first opens each device), once per driver.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_VULKAN_DRIVER_H
#define DLC_VULKAN_DRIVER_H

#include "dlc/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `allocator` may be NULL for the system one. Creating the driver loads
 * nothing. Destroy with dlc_driver_destroy after every context that
 * registered it. */
dlc_status_t dlc_vulkan_driver_create(const dlc_allocator_t *allocator,
                                      dlc_driver_t **out_driver);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_VULKAN_DRIVER_H */
