/*===- vulkan_device.h - the loader, the instance and the devices -*- C -*-===*
 *
 * What the models of one Vulkan driver share: the loader opened with dlopen,
 * one VkInstance, and one VkDevice with one compute queue per physical
 * device. All of it is created the first time something needs it (a probe
 * or a model load) and kept until the driver is destroyed, because creating
 * an instance and a device costs tens of milliseconds.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_VULKAN_DEVICE_H
#define DLC_VULKAN_DEVICE_H

#include <stdint.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "../common.h"
#include "dlc/driver.h"

#define DLC_VK_FEATURE_MASK                                                    \
  ((uint64_t)(DLCX_FEATURE_VK_FLOAT16 | DLCX_FEATURE_VK_INT8_STORAGE |         \
              DLCX_FEATURE_VK_INT8_DOT | DLCX_FEATURE_VK_SUBGROUP |            \
              DLCX_FEATURE_VK_INT64 | DLCX_FEATURE_VK_FLOAT64))

/* Resolved with vkGetInstanceProcAddr(instance, ...). */
#define DLC_VK_INSTANCE_FUNCTIONS(X)                                           \
  X(vkDestroyInstance)                                                         \
  X(vkEnumeratePhysicalDevices)                                                \
  X(vkGetPhysicalDeviceProperties)                                             \
  X(vkGetPhysicalDeviceProperties2)                                            \
  X(vkGetPhysicalDeviceFeatures2)                                              \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                  \
  X(vkGetPhysicalDeviceMemoryProperties)                                       \
  X(vkEnumerateDeviceExtensionProperties)                                      \
  X(vkCreateDevice)                                                            \
  X(vkGetDeviceProcAddr)

/* Resolved with vkGetDeviceProcAddr, which skips the loader's dispatch. */
#define DLC_VK_DEVICE_FUNCTIONS(X)                                             \
  X(vkDestroyDevice)                                                           \
  X(vkGetDeviceQueue)                                                          \
  X(vkCreateBuffer)                                                            \
  X(vkDestroyBuffer)                                                           \
  X(vkGetBufferMemoryRequirements)                                             \
  X(vkAllocateMemory)                                                          \
  X(vkFreeMemory)                                                              \
  X(vkBindBufferMemory)                                                        \
  X(vkMapMemory)                                                               \
  X(vkCreateShaderModule)                                                      \
  X(vkDestroyShaderModule)                                                     \
  X(vkCreateDescriptorSetLayout)                                               \
  X(vkDestroyDescriptorSetLayout)                                              \
  X(vkCreatePipelineLayout)                                                    \
  X(vkDestroyPipelineLayout)                                                   \
  X(vkCreateComputePipelines)                                                  \
  X(vkDestroyPipeline)                                                         \
  X(vkCreateDescriptorPool)                                                    \
  X(vkDestroyDescriptorPool)                                                   \
  X(vkAllocateDescriptorSets)                                                  \
  X(vkUpdateDescriptorSets)                                                    \
  X(vkCreateCommandPool)                                                       \
  X(vkDestroyCommandPool)                                                      \
  X(vkAllocateCommandBuffers)                                                  \
  X(vkBeginCommandBuffer)                                                      \
  X(vkEndCommandBuffer)                                                        \
  X(vkCmdBindPipeline)                                                         \
  X(vkCmdBindDescriptorSets)                                                   \
  X(vkCmdDispatch)                                                             \
  X(vkCmdPipelineBarrier)                                                      \
  X(vkCmdCopyBuffer)                                                           \
  X(vkCmdFillBuffer)                                                           \
  X(vkCmdResetQueryPool)                                                       \
  X(vkCmdWriteTimestamp)                                                       \
  X(vkCreateQueryPool)                                                         \
  X(vkDestroyQueryPool)                                                        \
  X(vkGetQueryPoolResults)                                                     \
  X(vkCreateFence)                                                             \
  X(vkDestroyFence)                                                            \
  X(vkResetFences)                                                             \
  X(vkWaitForFences)                                                           \
  X(vkQueueSubmit)

#define DLC_VK_DECLARE(name) PFN_##name name;
typedef struct dlc_vk_instance_fn_t {
  DLC_VK_INSTANCE_FUNCTIONS(DLC_VK_DECLARE)
} dlc_vk_instance_fn_t;
typedef struct dlc_vk_device_fn_t {
  DLC_VK_DEVICE_FUNCTIONS(DLC_VK_DECLARE)
} dlc_vk_device_fn_t;
#undef DLC_VK_DECLARE

typedef struct dlc_vk_device_t {
  VkPhysicalDevice physical;
  VkPhysicalDeviceProperties properties; /* name, limits, timestampPeriod */
  VkPhysicalDeviceMemoryProperties memory;
  uint32_t api_version;    /* what both the instance and the device speak */
  uint32_t queue_family;   /* UINT32_MAX: the device cannot compute */
  uint32_t timestamp_bits; /* of that family; 0: no timestamps */
  uint64_t features;       /* DLCX_FEATURE_VK_* offered, less the mask */
  /* Loop iterations an invocation may run before the driver ends its
   * loops (Mesa's lavapipe: 65535, shared by all loops); 0: no limit. */
  uint32_t loop_iteration_limit;
  uint32_t extensions; /* DLC_VK_EXT_* bits to enable for `features` */
  /* Inputs, outputs and weights go through staging buffers: the device's
   * memory is not both device-local and host-visible, or the user asked. */
  int staging;
  /* Created on first use, under the driver's lock. */
  VkDevice device;
  VkQueue queue;
  dlc_vk_device_fn_t fn;
  dlc_mutex_t queue_lock; /* vkQueueSubmit needs the queue to itself */
} dlc_vk_device_t;

typedef struct dlc_vk_driver_t {
  dlc_driver_t driver; /* first: the vtable's address is the state's */
  dlc_allocator_t allocator;
  dlc_mutex_t lock; /* the loader, the instance and device creation */
  void *library;
  VkInstance instance;
  dlc_vk_instance_fn_t fn;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
  VkDebugUtilsMessengerEXT messenger;
  dlc_vk_device_t *devices;
  uint32_t device_count;
  /* dlc_vulkan_driver_options_t, the strings copied (NULL: the default). */
  char *library_path;
  char *device_filter;
  int validate;
  int force_staging;
  uint64_t masked_features;
  /* Validation messages arrive on any thread, also inside calls that hold
   * `lock`, so they have a lock of their own. */
  dlc_mutex_t validation_lock;
  uint32_t validation_errors;
  uint32_t validation_reported;
  char validation_first[384];
} dlc_vk_driver_t;

/* Initialises the locks of a zeroed driver state; 0 on failure. */
int dlc_vk_driver_init(dlc_vk_driver_t *vk);
/* Destroys the devices and the instance and closes the loader. */
void dlc_vk_driver_fini(dlc_vk_driver_t *vk);

/* Opens the loader and creates the instance unless done, then picks the
 * device `index` counts to (among those the device filter names) and checks
 * that it can run compute work. Does not create the VkDevice. */
dlc_status_t dlc_vk_select(dlc_vk_driver_t *vk, uint32_t index,
                           dlc_message_t *message,
                           dlc_vk_device_t **out_device);

/* Creates the VkDevice and its queue unless done. */
dlc_status_t dlc_vk_device_open(dlc_vk_driver_t *vk, dlc_vk_device_t *device,
                                dlc_message_t *message);

/* With validation on: DLC_ERROR_DEVICE, and the first message, when
 * validation errors arrived since the last check. */
dlc_status_t dlc_vk_validation_check(dlc_vk_driver_t *vk,
                                     dlc_message_t *message);

/* "VK_ERROR_DEVICE_LOST", ... */
const char *dlc_vk_result_name(VkResult result);
/* The status a failed call with `result` maps to. */
dlc_status_t dlc_vk_status(VkResult result);
/* "shaderFloat16 and storageBuffer16BitAccess", ... for one feature bit. */
const char *dlc_vk_feature_name(uint64_t feature);

/* The index of a memory type in `type_bits` with all of `required`, with
 * `preferred` too if one has it; -1 when none has `required`. */
int dlc_vk_memory_type(const dlc_vk_device_t *device, uint32_t type_bits,
                       VkMemoryPropertyFlags required,
                       VkMemoryPropertyFlags preferred);

#endif /* DLC_VULKAN_DEVICE_H */
