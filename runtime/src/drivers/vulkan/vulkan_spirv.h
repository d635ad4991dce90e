/*===- vulkan_spirv.h - what the driver checks in a SPIR-V module -*- C -*-===*/

#ifndef DLC_VULKAN_SPIRV_H
#define DLC_VULKAN_SPIRV_H

#include <stdint.h>

#include "dlc/driver.h"

typedef struct dlc_vk_spirv_info_t {
  uint32_t version;       /* 0x00010300 for SPIR-V 1.3 */
  uint32_t local_size[3]; /* from OpExecutionMode LocalSize, if declared */
  int has_local_size;
} dlc_vk_spirv_info_t;

/* Checks the header of the module `code` and its instructions up to the
 * first function, and finds the GLCompute entry point `name` (kernel
 * `index` in messages): a Vulkan implementation trusts its input, so a
 * truncated module or a missing entry point must be caught here. */
dlc_status_t dlc_vk_spirv_inspect(const uint8_t *code, uint64_t size,
                                  uint32_t index, const char *name,
                                  dlc_vk_spirv_info_t *out_info,
                                  dlc_message_t *message);

#endif /* DLC_VULKAN_SPIRV_H */
