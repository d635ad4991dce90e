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
 * (DLC_RUNTIME_ENABLE_VULKAN), with the options in
 * dlc_context_options_t.vulkan. The library reads no DLC_* variable;
 * dlc-run maps DLC_VULKAN_* variables onto these options (runtime/README.md).
 *===----------------------------------------------------------------------===*/

#ifndef DLC_VULKAN_DRIVER_H
#define DLC_VULKAN_DRIVER_H

#include "dlc/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dlc_vulkan_driver_options_t {
  uint32_t struct_size; /* sizeof(dlc_vulkan_driver_options_t) */
  /* The Vulkan loader to open; NULL or "": libvulkan.so.1. */
  const char *library;
  /* Only devices whose name contains this text count, and
   * dlc_model_options_t.device_index picks among them; NULL: every device. */
  const char *device_filter;
  /* Nonzero: enable VK_LAYER_KHRONOS_validation where it is installed,
   * print every validation message to stderr, and fail the next model or
   * session call after a validation error with DLC_ERROR_DEVICE. */
  uint32_t validate;
  /* Nonzero: copy inputs, outputs and weights through staging buffers even
   * where device memory is host-visible (the discrete-GPU path, on any
   * device). */
  uint32_t force_staging;
  /* DLCX_FEATURE_VK_* bits (e.g. 0x1100) to treat as missing: those device
   * features are neither reported nor enabled, as on a smaller device. */
  uint64_t masked_features;
} dlc_vulkan_driver_options_t;

/* `allocator` may be NULL for the system one, `options` NULL for the
 * defaults (the strings are copied). Creating the driver loads nothing.
 * Destroy with dlc_driver_destroy after every context that registered it. */
dlc_status_t dlc_vulkan_driver_create_with_options(
    const dlc_allocator_t *allocator,
    const dlc_vulkan_driver_options_t *options, dlc_driver_t **out_driver);

/* dlc_vulkan_driver_create_with_options with the defaults. */
dlc_status_t dlc_vulkan_driver_create(const dlc_allocator_t *allocator,
                                      dlc_driver_t **out_driver);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_VULKAN_DRIVER_H */
