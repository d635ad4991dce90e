/*===- vulkan_driver.c - run SPIR-V kernels on a Vulkan device ------------===*
 *
 * Model prepare builds one VkShaderModule per code blob, one VkPipeline per
 * kernel (one pipeline layout per binding count: kernel argument i is the
 * storage buffer at set 0, binding i) and uploads the weights once. Session
 * create allocates the arena, one descriptor set per launch pointing into
 * the arena and the weights, and records ONE command buffer with the input
 * copies, every dispatch, the barriers between dependent dispatches and the
 * output copies. A run is a vkQueueSubmit and a fence wait.
 *
 * Where device memory is host-visible (integrated GPUs, lavapipe) the arena
 * and the weights are mapped and the staging copies are left out.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dlc/vulkan_driver.h"
#include "vulkan_device.h"
#include "vulkan_spirv.h"

#define DLC_VK_NO_OFFSET UINT64_MAX

typedef struct dlc_vk_buffer_t {
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkDeviceSize size;
  uint8_t *map; /* host-visible buffers: mapped for their lifetime */
} dlc_vk_buffer_t;

typedef struct dlc_vk_module_t {
  uint64_t offset; /* the code blob in CODE */
  uint64_t size;
  VkShaderModule module;
} dlc_vk_module_t;

typedef struct dlc_vk_layout_t {
  uint32_t binding_count;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout pipeline_layout;
} dlc_vk_layout_t;

typedef struct dlc_vk_model_t {
  dlc_allocator_t allocator; /* the context's: models and sessions */
  dlc_vk_driver_t *vk;
  dlc_vk_device_t *device;
  const dlc_artifact_t *artifact;
  dlc_vk_module_t *modules; /* one per distinct code blob */
  uint32_t module_count;
  dlc_vk_layout_t *layouts; /* one per distinct binding count */
  uint32_t layout_count;
  uint32_t *kernel_layouts; /* per kernel: an index into layouts */
  VkPipeline *pipelines;    /* per kernel */
  dlc_vk_buffer_t constants;
} dlc_vk_model_t;

typedef struct dlc_vk_session_t {
  dlc_vk_model_t *model;
  dlc_vk_buffer_t arena;
  dlc_vk_buffer_t staging;   /* staging devices only */
  uint64_t *staging_offsets; /* per tensor: its place in staging, if any */
  VkDescriptorPool descriptor_pool;
  VkDescriptorSet *sets; /* per launch; none for launches without bindings */
  VkCommandPool command_pool;
  VkCommandBuffer commands;
  VkFence fence;
  VkQueryPool queries; /* profiling: the start, then two per launch */
  uint64_t *ticks;
  dlc_kernel_timing_t *timings;
  uint32_t timing_count; /* 0 until the first run */
} dlc_vk_session_t;

/* A zeroed table of `count` elements (at least one, so that empty tables
 * still get a distinct pointer), or NULL. */
static void *dlc_vk_calloc(const dlc_allocator_t *allocator, uint64_t count,
                           size_t element_size) {
  void *ptr;
  if (count == 0)
    count = 1;
  if (count > (uint64_t)((size_t)-1 / element_size))
    return NULL;
  ptr = allocator->alloc(allocator->self, (size_t)count * element_size, 16);
  if (ptr)
    memset(ptr, 0, (size_t)count * element_size);
  return ptr;
}

static void dlc_vk_free(const dlc_allocator_t *allocator, void *ptr) {
  allocator->free(allocator->self, ptr);
}

/*===--- buffers and one-off submissions --------------------------------===*/

static void dlc_vk_buffer_destroy(const dlc_vk_device_t *d,
                                  dlc_vk_buffer_t *buffer) {
  if (buffer->buffer)
    d->fn.vkDestroyBuffer(d->device, buffer->buffer, NULL);
  if (buffer->memory) /* also unmaps */
    d->fn.vkFreeMemory(d->device, buffer->memory, NULL);
  memset(buffer, 0, sizeof(*buffer));
}

/* A buffer of at least `size` bytes bound to memory with `required` flags
 * (and `preferred` ones if a type has them), mapped when host-visible. */
static dlc_status_t
dlc_vk_buffer_create(const dlc_vk_device_t *d, uint64_t size,
                     VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                     VkMemoryPropertyFlags preferred, const char *what,
                     dlc_message_t *message, dlc_vk_buffer_t *out) {
  VkBufferCreateInfo info;
  VkMemoryRequirements requirements;
  VkMemoryAllocateInfo allocate;
  VkResult result;
  void *map = NULL;
  int type;

  memset(out, 0, sizeof(*out));
  if (size > UINT64_MAX - 3)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "the %s (%" PRIu64 " bytes) is too large", what,
                           size);
  /* Never empty, and whole words: vkCmdFillBuffer with VK_WHOLE_SIZE then
   * covers every byte. */
  out->size = size ? (size + 3) / 4 * 4 : 4;
  memset(&info, 0, sizeof(info));
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = out->size;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  result = d->fn.vkCreateBuffer(d->device, &info, NULL, &out->buffer);
  if (result != VK_SUCCESS) {
    out->buffer = VK_NULL_HANDLE;
    return dlc_message_set(message, dlc_vk_status(result),
                           "cannot create the %s buffer (%" PRIu64
                           " bytes): %s",
                           what, size, dlc_vk_result_name(result));
  }
  d->fn.vkGetBufferMemoryRequirements(d->device, out->buffer, &requirements);
  type =
      dlc_vk_memory_type(d, requirements.memoryTypeBits, required, preferred);
  if (type < 0) {
    dlc_vk_buffer_destroy(d, out);
    return dlc_message_set(message, DLC_ERROR_DEVICE,
                           "Vulkan device '%s' has no memory type with flags "
                           "0x%x for the %s",
                           d->properties.deviceName, (unsigned)required, what);
  }
  memset(&allocate, 0, sizeof(allocate));
  allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate.allocationSize = requirements.size;
  allocate.memoryTypeIndex = (uint32_t)type;
  result = d->fn.vkAllocateMemory(d->device, &allocate, NULL, &out->memory);
  if (result != VK_SUCCESS) {
    out->memory = VK_NULL_HANDLE;
    dlc_vk_buffer_destroy(d, out);
    return dlc_message_set(
        message, dlc_vk_status(result),
        "cannot allocate %" PRIu64 " bytes of device memory for the %s: %s",
        (uint64_t)requirements.size, what, dlc_vk_result_name(result));
  }
  result = d->fn.vkBindBufferMemory(d->device, out->buffer, out->memory, 0);
  if (result == VK_SUCCESS && (required & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
    result =
        d->fn.vkMapMemory(d->device, out->memory, 0, VK_WHOLE_SIZE, 0, &map);
  if (result != VK_SUCCESS) {
    dlc_vk_buffer_destroy(d, out);
    return dlc_message_set(message, dlc_vk_status(result),
                           "cannot bind or map the memory of the %s: %s", what,
                           dlc_vk_result_name(result));
  }
  out->map = (uint8_t *)map;
  return DLC_OK;
}

static void dlc_vk_barrier(const dlc_vk_device_t *d, VkCommandBuffer commands,
                           VkPipelineStageFlags src_stages,
                           VkAccessFlags src_access,
                           VkPipelineStageFlags dst_stages,
                           VkAccessFlags dst_access) {
  VkMemoryBarrier barrier;
  memset(&barrier, 0, sizeof(barrier));
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  d->fn.vkCmdPipelineBarrier(commands, src_stages, dst_stages, 0, 1, &barrier,
                             0, NULL, 0, NULL);
}

/* What a one-off submission does: copy `source` to `target`, or fill
 * `target` with zeros when `source` is NULL; then make it visible to the
 * dispatches and copies of later submissions on the queue. */
typedef struct dlc_vk_transfer_t {
  const dlc_vk_buffer_t *source;
  const dlc_vk_buffer_t *target;
} dlc_vk_transfer_t;

static dlc_status_t dlc_vk_transfer(dlc_vk_device_t *d,
                                    const dlc_vk_transfer_t *transfer,
                                    const char *what, dlc_message_t *message) {
  VkCommandPoolCreateInfo pool_info;
  VkCommandBufferAllocateInfo buffer_info;
  VkCommandBufferBeginInfo begin;
  VkFenceCreateInfo fence_info;
  VkSubmitInfo submit;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkResult result;

  memset(&pool_info, 0, sizeof(pool_info));
  pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool_info.queueFamilyIndex = d->queue_family;
  memset(&buffer_info, 0, sizeof(buffer_info));
  buffer_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  buffer_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  buffer_info.commandBufferCount = 1;
  memset(&begin, 0, sizeof(begin));
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  memset(&fence_info, 0, sizeof(fence_info));
  fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;

  result = d->fn.vkCreateCommandPool(d->device, &pool_info, NULL, &pool);
  if (result == VK_SUCCESS) {
    buffer_info.commandPool = pool;
    result = d->fn.vkAllocateCommandBuffers(d->device, &buffer_info, &commands);
  }
  if (result == VK_SUCCESS)
    result = d->fn.vkBeginCommandBuffer(commands, &begin);
  if (result == VK_SUCCESS) {
    if (transfer->source) {
      VkBufferCopy region;
      region.srcOffset = 0;
      region.dstOffset = 0;
      region.size = transfer->target->size;
      d->fn.vkCmdCopyBuffer(commands, transfer->source->buffer,
                            transfer->target->buffer, 1, &region);
    } else {
      d->fn.vkCmdFillBuffer(commands, transfer->target->buffer, 0,
                            VK_WHOLE_SIZE, 0);
    }
    /* A barrier's second scope reaches later submissions to the queue. */
    dlc_vk_barrier(
        d, commands, VK_PIPELINE_STAGE_TRANSFER_BIT,
        VK_ACCESS_TRANSFER_WRITE_BIT,
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    result = d->fn.vkEndCommandBuffer(commands);
  }
  if (result == VK_SUCCESS)
    result = d->fn.vkCreateFence(d->device, &fence_info, NULL, &fence);
  if (result == VK_SUCCESS) {
    memset(&submit, 0, sizeof(submit));
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands;
    dlc_mutex_lock(&d->queue_lock);
    result = d->fn.vkQueueSubmit(d->queue, 1, &submit, fence);
    dlc_mutex_unlock(&d->queue_lock);
  }
  if (result == VK_SUCCESS)
    result = d->fn.vkWaitForFences(d->device, 1, &fence, VK_TRUE, UINT64_MAX);
  if (fence)
    d->fn.vkDestroyFence(d->device, fence, NULL);
  if (pool) /* frees `commands` */
    d->fn.vkDestroyCommandPool(d->device, pool, NULL);
  if (result != VK_SUCCESS)
    return dlc_message_set(message, dlc_vk_status(result), "cannot %s: %s",
                           what, dlc_vk_result_name(result));
  return DLC_OK;
}

/*===--- model ----------------------------------------------------------===*/

static void dlc_vk_model_release(void *model_ptr) {
  dlc_vk_model_t *model = (dlc_vk_model_t *)model_ptr;
  const dlc_allocator_t *allocator;
  const dlc_vk_device_t *d;
  uint32_t i;
  if (!model)
    return;
  allocator = &model->allocator;
  d = model->device;
  for (i = 0; model->pipelines && i < model->artifact->kernel_count; ++i)
    if (model->pipelines[i])
      d->fn.vkDestroyPipeline(d->device, model->pipelines[i], NULL);
  for (i = 0; i < model->layout_count; ++i) {
    if (model->layouts[i].pipeline_layout)
      d->fn.vkDestroyPipelineLayout(d->device,
                                    model->layouts[i].pipeline_layout, NULL);
    if (model->layouts[i].set_layout)
      d->fn.vkDestroyDescriptorSetLayout(d->device,
                                         model->layouts[i].set_layout, NULL);
  }
  for (i = 0; i < model->module_count; ++i)
    d->fn.vkDestroyShaderModule(d->device, model->modules[i].module, NULL);
  dlc_vk_buffer_destroy(d, &model->constants);
  dlc_vk_free(allocator, model->pipelines);
  dlc_vk_free(allocator, model->kernel_layouts);
  dlc_vk_free(allocator, model->layouts);
  dlc_vk_free(allocator, model->modules);
  dlc_vk_free(allocator, model);
}

/* What can be checked without a device: the features this driver knows,
 * and every kernel's SPIR-V. */
static dlc_status_t dlc_vk_check_artifact(const dlc_artifact_t *a,
                                          uint32_t *out_spirv_version,
                                          dlc_message_t *message) {
  uint64_t features = a->header->target_features;
  uint32_t i;
  *out_spirv_version = 0;
  if (features & ~DLC_VK_FEATURE_MASK)
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "the artifact needs target features 0x%" PRIx64
                           " that the Vulkan driver does not know",
                           features & ~DLC_VK_FEATURE_MASK);
  for (i = 0; i < a->kernel_count; ++i) {
    const dlcx_kernel_t *k = &a->kernels[i];
    const char *name = a->strings + k->name;
    dlc_vk_spirv_info_t info;
    dlc_status_t status;
    if (k->code_format != DLCX_CODE_SPIRV)
      return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                             "kernel %" PRIu32 " ('%s'): code_format %" PRIu32
                             " is not SPIR-V",
                             i, name, k->code_format);
    status = dlc_vk_spirv_inspect(a->code ? a->code + k->code_offset : NULL,
                                  k->code_size, i, name, &info, message);
    if (status != DLC_OK)
      return status;
    if (info.has_local_size && (info.local_size[0] != k->workgroup_size[0] ||
                                info.local_size[1] != k->workgroup_size[1] ||
                                info.local_size[2] != k->workgroup_size[2]))
      return dlc_message_set(
          message, DLC_ERROR_INVALID_ARTIFACT,
          "kernel %" PRIu32 " ('%s'): workgroup_size is %" PRIu32 "x%" PRIu32
          "x%" PRIu32 " but its SPIR-V declares a local size of %" PRIu32
          "x%" PRIu32 "x%" PRIu32,
          i, name, k->workgroup_size[0], k->workgroup_size[1],
          k->workgroup_size[2], info.local_size[0], info.local_size[1],
          info.local_size[2]);
    if (info.version > *out_spirv_version)
      *out_spirv_version = info.version;
  }
  return DLC_OK;
}

/* What the chosen device must offer: features, SPIR-V version, limits. */
static dlc_status_t dlc_vk_check_device(const dlc_artifact_t *a,
                                        const dlc_vk_device_t *d,
                                        uint32_t spirv_version,
                                        dlc_message_t *message) {
  const VkPhysicalDeviceLimits *limits = &d->properties.limits;
  const char *device = d->properties.deviceName;
  uint64_t missing = a->header->target_features & ~d->features;
  uint32_t max_spirv = d->api_version >= VK_MAKE_VERSION(1, 3, 0)   ? 0x10600u
                       : d->api_version >= VK_MAKE_VERSION(1, 2, 0) ? 0x10500u
                                                                    : 0x10300u;
  uint32_t i, j;

  if (missing) {
    uint64_t bit = missing & (~missing + 1);
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "the artifact needs %s (target feature 0x%" PRIx64
                           "), which Vulkan device '%s' lacks%s",
                           dlc_vk_feature_name(bit), bit, device,
                           missing != bit ? ", among others" : "");
  }
  if (spirv_version > max_spirv)
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "the artifact has SPIR-V %u.%u, Vulkan device '%s' "
                           "(Vulkan %u.%u) reads up to %u.%u",
                           (unsigned)(spirv_version >> 16 & 0xff),
                           (unsigned)(spirv_version >> 8 & 0xff), device,
                           (unsigned)VK_VERSION_MAJOR(d->api_version),
                           (unsigned)VK_VERSION_MINOR(d->api_version),
                           (unsigned)(max_spirv >> 16 & 0xff),
                           (unsigned)(max_spirv >> 8 & 0xff));
  for (i = 0; i < a->kernel_count; ++i) {
    const dlcx_kernel_t *k = &a->kernels[i];
    const uint32_t *wg = k->workgroup_size;
    /* A driver that ends loops after a number of iterations would compute
     * garbage, silently: refuse the kernel instead. */
    if (d->loop_iteration_limit && a->kernel_limits &&
        a->kernel_limits[i].max_loop_iterations > d->loop_iteration_limit)
      return dlc_message_set(
          message, DLC_ERROR_UNSUPPORTED,
          "kernel %" PRIu32 " ('%s') runs up to %" PRIu32 " loop iterations "
          "per invocation; Vulkan device '%s' ends an invocation's loops "
          "after %" PRIu32 " (Mesa's lavapipe), which would give wrong "
          "results",
          i, a->strings + k->name, a->kernel_limits[i].max_loop_iterations,
          device, d->loop_iteration_limit);
    if (k->binding_count > limits->maxPerStageDescriptorStorageBuffers ||
        k->binding_count > limits->maxDescriptorSetStorageBuffers)
      return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                             "kernel %" PRIu32 " ('%s') takes %" PRIu32
                             " buffers, Vulkan device '%s' binds at most "
                             "%" PRIu32 " per shader",
                             i, a->strings + k->name, k->binding_count, device,
                             limits->maxPerStageDescriptorStorageBuffers);
    if (wg[0] > limits->maxComputeWorkGroupSize[0] ||
        wg[1] > limits->maxComputeWorkGroupSize[1] ||
        wg[2] > limits->maxComputeWorkGroupSize[2] ||
        (uint64_t)wg[0] * wg[1] * wg[2] >
            limits->maxComputeWorkGroupInvocations)
      return dlc_message_set(
          message, DLC_ERROR_UNSUPPORTED,
          "kernel %" PRIu32 " ('%s'): workgroup %" PRIu32 "x%" PRIu32
          "x%" PRIu32 " exceeds what Vulkan device '%s' runs (%" PRIu32
          "x%" PRIu32 "x%" PRIu32 ", %" PRIu32 " invocations)",
          i, a->strings + k->name, wg[0], wg[1], wg[2], device,
          limits->maxComputeWorkGroupSize[0],
          limits->maxComputeWorkGroupSize[1],
          limits->maxComputeWorkGroupSize[2],
          limits->maxComputeWorkGroupInvocations);
  }
  for (i = 0; i < a->launch_count; ++i) {
    const dlcx_launch_t *l = &a->launches[i];
    for (j = 0; j < 3; ++j)
      if (l->grid[j] > limits->maxComputeWorkGroupCount[j])
        return dlc_message_set(
            message, DLC_ERROR_UNSUPPORTED,
            "launch %" PRIu32 ": grid[%" PRIu32 "] = %" PRIu32
            " exceeds the %" PRIu32 " workgroups Vulkan device '%s' dispatches",
            i, j, l->grid[j], limits->maxComputeWorkGroupCount[j], device);
    for (j = 0; j < l->binding_count; ++j) {
      uint32_t index = a->bindings[l->binding_begin + j];
      const dlcx_tensor_t *t = &a->tensors[index];
      if (t->size == 0)
        continue;
      if (t->offset % limits->minStorageBufferOffsetAlignment != 0)
        return dlc_message_set(
            message, DLC_ERROR_UNSUPPORTED,
            "launch %" PRIu32 ": tensor %" PRIu32 " ('%s') is at offset "
            "%" PRIu64 ", not a multiple of the minStorageBufferOffset"
            "Alignment %" PRIu64 " of Vulkan device '%s' (dlc-compile "
            "aligns Vulkan tensors to 256 bytes)",
            i, index, a->strings + t->name, t->offset,
            (uint64_t)limits->minStorageBufferOffsetAlignment, device);
      if (t->size > limits->maxStorageBufferRange)
        return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                               "launch %" PRIu32 ": tensor %" PRIu32
                               " ('%s') has %" PRIu64
                               " bytes, more than the maxStorageBufferRange "
                               "%" PRIu32 " of Vulkan device '%s'",
                               i, index, a->strings + t->name, t->size,
                               limits->maxStorageBufferRange, device);
    }
  }
  return DLC_OK;
}

static dlc_status_t dlc_vk_create_module(dlc_vk_model_t *model,
                                         const dlcx_kernel_t *k, uint32_t index,
                                         dlc_message_t *message) {
  const dlc_allocator_t *allocator = &model->allocator;
  const dlc_vk_device_t *d = model->device;
  const uint8_t *code = model->artifact->code + k->code_offset;
  dlc_vk_module_t *m = &model->modules[model->module_count];
  VkShaderModuleCreateInfo info;
  void *aligned = NULL;
  VkResult result;

  /* pCode is a uint32_t array; a blob at an odd offset is copied. */
  if ((uintptr_t)code % 4 != 0) {
    aligned = allocator->alloc(allocator->self, (size_t)k->code_size, 16);
    if (!aligned)
      return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                             "cannot allocate %" PRIu64
                             " bytes for kernel %" PRIu32 "'s SPIR-V",
                             k->code_size, index);
    memcpy(aligned, code, (size_t)k->code_size);
    code = (const uint8_t *)aligned;
  }
  memset(&info, 0, sizeof(info));
  info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  info.codeSize = (size_t)k->code_size;
  info.pCode = (const uint32_t *)(const void *)code;
  result = d->fn.vkCreateShaderModule(d->device, &info, NULL, &m->module);
  dlc_vk_free(allocator, aligned);
  if (result != VK_SUCCESS)
    return dlc_message_set(message, dlc_vk_status(result),
                           "kernel %" PRIu32 " ('%s'): vkCreateShaderModule "
                           "failed: %s",
                           index, model->artifact->strings + k->name,
                           dlc_vk_result_name(result));
  m->offset = k->code_offset;
  m->size = k->code_size;
  ++model->module_count;
  return DLC_OK;
}

static dlc_status_t dlc_vk_create_layout(dlc_vk_model_t *model,
                                         uint32_t binding_count,
                                         VkDescriptorSetLayoutBinding *scratch,
                                         dlc_message_t *message) {
  const dlc_vk_device_t *d = model->device;
  dlc_vk_layout_t *layout = &model->layouts[model->layout_count];
  VkDescriptorSetLayoutCreateInfo set_info;
  VkPipelineLayoutCreateInfo pipeline_info;
  VkResult result;
  uint32_t i;

  for (i = 0; i < binding_count; ++i) {
    memset(&scratch[i], 0, sizeof(scratch[i]));
    scratch[i].binding = i;
    scratch[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    scratch[i].descriptorCount = 1;
    scratch[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  memset(&set_info, 0, sizeof(set_info));
  set_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  set_info.bindingCount = binding_count;
  set_info.pBindings = binding_count ? scratch : NULL;
  layout->binding_count = binding_count;
  ++model->layout_count; /* released even when half made */
  result = d->fn.vkCreateDescriptorSetLayout(d->device, &set_info, NULL,
                                             &layout->set_layout);
  if (result == VK_SUCCESS) {
    memset(&pipeline_info, 0, sizeof(pipeline_info));
    pipeline_info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    pipeline_info.setLayoutCount = 1;
    pipeline_info.pSetLayouts = &layout->set_layout;
    result = d->fn.vkCreatePipelineLayout(d->device, &pipeline_info, NULL,
                                          &layout->pipeline_layout);
  } else {
    layout->set_layout = VK_NULL_HANDLE;
  }
  if (result != VK_SUCCESS) {
    layout->pipeline_layout = VK_NULL_HANDLE;
    return dlc_message_set(message, dlc_vk_status(result),
                           "cannot create the pipeline layout for %" PRIu32
                           " buffers: %s",
                           binding_count, dlc_vk_result_name(result));
  }
  return DLC_OK;
}

/* The shader module, the layout and the pipeline of kernel `index`. */
static dlc_status_t
dlc_vk_create_pipeline(dlc_vk_model_t *model, uint32_t index,
                       VkDescriptorSetLayoutBinding *scratch,
                       dlc_message_t *message) {
  const dlc_artifact_t *a = model->artifact;
  const dlcx_kernel_t *k = &a->kernels[index];
  const dlc_vk_device_t *d = model->device;
  VkComputePipelineCreateInfo info;
  dlc_status_t status;
  VkResult result;
  uint32_t m, l;

  for (m = 0; m < model->module_count; ++m)
    if (model->modules[m].offset == k->code_offset &&
        model->modules[m].size == k->code_size)
      break;
  if (m == model->module_count &&
      (status = dlc_vk_create_module(model, k, index, message)) != DLC_OK)
    return status;
  for (l = 0; l < model->layout_count; ++l)
    if (model->layouts[l].binding_count == k->binding_count)
      break;
  if (l == model->layout_count &&
      (status = dlc_vk_create_layout(model, k->binding_count, scratch,
                                     message)) != DLC_OK)
    return status;
  model->kernel_layouts[index] = l;

  memset(&info, 0, sizeof(info));
  info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = model->modules[m].module;
  info.stage.pName = a->strings + k->name;
  info.layout = model->layouts[l].pipeline_layout;
  result = d->fn.vkCreateComputePipelines(d->device, VK_NULL_HANDLE, 1, &info,
                                          NULL, &model->pipelines[index]);
  if (result != VK_SUCCESS) {
    model->pipelines[index] = VK_NULL_HANDLE;
    return dlc_message_set(message, dlc_vk_status(result),
                           "kernel %" PRIu32 " ('%s'): "
                           "vkCreateComputePipelines failed: %s",
                           index, a->strings + k->name,
                           dlc_vk_result_name(result));
  }
  return DLC_OK;
}

/* The weights, once per model: mapped, or through a staging buffer. */
static dlc_status_t dlc_vk_upload_constants(dlc_vk_model_t *model,
                                            dlc_message_t *message) {
  const dlc_artifact_t *a = model->artifact;
  dlc_vk_device_t *d = model->device;
  const VkBufferUsageFlags usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  dlc_vk_buffer_t staging;
  dlc_vk_transfer_t transfer;
  dlc_status_t status;

  if (!d->staging) {
    status = dlc_vk_buffer_create(d, a->constants_size, usage, host,
                                  VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                  "weights", message, &model->constants);
    if (status == DLC_OK)
      memcpy(model->constants.map, a->constants, (size_t)a->constants_size);
    return status;
  }
  status = dlc_vk_buffer_create(d, a->constants_size, usage,
                                VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
                                "weights", message, &model->constants);
  if (status != DLC_OK)
    return status;
  status = dlc_vk_buffer_create(d, a->constants_size,
                                VK_BUFFER_USAGE_TRANSFER_SRC_BIT, host, 0,
                                "weights' staging", message, &staging);
  if (status != DLC_OK)
    return status;
  memcpy(staging.map, a->constants, (size_t)a->constants_size);
  transfer.source = &staging;
  transfer.target = &model->constants;
  status = dlc_vk_transfer(d, &transfer, "upload the weights", message);
  dlc_vk_buffer_destroy(d, &staging);
  return status;
}

static dlc_status_t dlc_vk_model_prepare(const dlc_driver_t *driver,
                                         const dlc_allocator_t *allocator,
                                         const dlc_artifact_t *artifact,
                                         const dlc_model_options_t *options,
                                         dlc_message_t *message,
                                         void **out_model) {
  dlc_vk_driver_t *vk = (dlc_vk_driver_t *)driver->self;
  VkDescriptorSetLayoutBinding *scratch;
  dlc_vk_device_t *d = NULL;
  dlc_vk_model_t *model;
  uint32_t spirv_version, max_bindings = 0, i;
  dlc_status_t status;

  status = dlc_vk_check_artifact(artifact, &spirv_version, message);
  if (status == DLC_OK)
    status = dlc_vk_select(vk, options->device_index, message, &d);
  if (status == DLC_OK)
    status = dlc_vk_check_device(artifact, d, spirv_version, message);
  if (status == DLC_OK)
    status = dlc_vk_device_open(vk, d, message);
  if (status != DLC_OK)
    return status;

  model = (dlc_vk_model_t *)dlc_vk_calloc(allocator, 1, sizeof(*model));
  if (!model)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the Vulkan model");
  model->allocator = *allocator;
  model->vk = vk;
  model->device = d;
  model->artifact = artifact;
  for (i = 0; i < artifact->kernel_count; ++i)
    if (artifact->kernels[i].binding_count > max_bindings)
      max_bindings = artifact->kernels[i].binding_count;
  model->modules = (dlc_vk_module_t *)dlc_vk_calloc(
      allocator, artifact->kernel_count, sizeof(dlc_vk_module_t));
  model->layouts = (dlc_vk_layout_t *)dlc_vk_calloc(
      allocator, artifact->kernel_count, sizeof(dlc_vk_layout_t));
  model->kernel_layouts = (uint32_t *)dlc_vk_calloc(
      allocator, artifact->kernel_count, sizeof(uint32_t));
  model->pipelines = (VkPipeline *)dlc_vk_calloc(
      allocator, artifact->kernel_count, sizeof(VkPipeline));
  scratch = (VkDescriptorSetLayoutBinding *)dlc_vk_calloc(
      allocator, max_bindings, sizeof(VkDescriptorSetLayoutBinding));
  if (!model->modules || !model->layouts || !model->kernel_layouts ||
      !model->pipelines || !scratch) {
    dlc_vk_free(allocator, scratch);
    dlc_vk_model_release(model);
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate %" PRIu32 " Vulkan kernels",
                           artifact->kernel_count);
  }
  for (i = 0; i < artifact->kernel_count && status == DLC_OK; ++i)
    status = dlc_vk_create_pipeline(model, i, scratch, message);
  dlc_vk_free(allocator, scratch);
  if (status == DLC_OK && artifact->constants_size)
    status = dlc_vk_upload_constants(model, message);
  if (status == DLC_OK)
    status = dlc_vk_validation_check(vk, message);
  if (status != DLC_OK) {
    dlc_vk_model_release(model);
    return status;
  }
  *out_model = model;
  return DLC_OK;
}

/*===--- session --------------------------------------------------------===*/

static void dlc_vk_session_destroy(void *session_ptr) {
  dlc_vk_session_t *session = (dlc_vk_session_t *)session_ptr;
  const dlc_allocator_t *allocator;
  const dlc_vk_device_t *d;
  if (!session)
    return;
  allocator = &session->model->allocator;
  d = session->model->device;
  if (session->fence)
    d->fn.vkDestroyFence(d->device, session->fence, NULL);
  if (session->queries)
    d->fn.vkDestroyQueryPool(d->device, session->queries, NULL);
  if (session->command_pool) /* frees the command buffer */
    d->fn.vkDestroyCommandPool(d->device, session->command_pool, NULL);
  if (session->descriptor_pool) /* frees the sets */
    d->fn.vkDestroyDescriptorPool(d->device, session->descriptor_pool, NULL);
  dlc_vk_buffer_destroy(d, &session->staging);
  dlc_vk_buffer_destroy(d, &session->arena);
  dlc_vk_free(allocator, session->timings);
  dlc_vk_free(allocator, session->ticks);
  dlc_vk_free(allocator, session->sets);
  dlc_vk_free(allocator, session->staging_offsets);
  dlc_vk_free(allocator, session);
}

/* Whether tensors x and y share arena bytes. */
static int dlc_vk_overlap(const dlc_artifact_t *a, uint32_t x, uint32_t y) {
  const dlcx_tensor_t *tx = &a->tensors[x], *ty = &a->tensors[y];
  return tx->storage == DLCX_STORAGE_ARENA &&
         ty->storage == DLCX_STORAGE_ARENA && tx->size && ty->size &&
         tx->offset < ty->offset + ty->size &&
         ty->offset < tx->offset + tx->size;
}

/* Whether `launch` touches arena bytes that a launch in [first, launch)
 * touches: kernels do not say which buffers they write, so any shared
 * bytes need a barrier. */
static int dlc_vk_depends(const dlc_artifact_t *a, uint32_t first,
                          uint32_t launch) {
  const dlcx_launch_t *l = &a->launches[launch];
  uint32_t i, j, k;
  for (i = 0; i < l->binding_count; ++i)
    for (j = first; j < launch; ++j) {
      const dlcx_launch_t *e = &a->launches[j];
      for (k = 0; k < e->binding_count; ++k)
        if (dlc_vk_overlap(a, a->bindings[l->binding_begin + i],
                           a->bindings[e->binding_begin + k]))
          return 1;
    }
  return 0;
}

/* Whether IO entry `index` (of inputs then outputs) is the first of its
 * kind (input or output) naming its tensor. */
static int dlc_vk_io_first(const dlc_artifact_t *a, uint32_t index) {
  uint32_t begin = index < a->model->input_count ? 0 : a->model->input_count;
  uint32_t i;
  for (i = begin; i < index; ++i)
    if (a->inputs[i] == a->inputs[index])
      return 0;
  return 1;
}

/* Copies between staging and the arena for the inputs (`outputs` 0) or the
 * outputs, in one command. */
static void dlc_vk_record_copies(const dlc_vk_session_t *s, int outputs,
                                 VkBufferCopy *regions) {
  const dlc_artifact_t *a = s->model->artifact;
  const dlc_vk_device_t *d = s->model->device;
  uint32_t begin = outputs ? a->model->input_count : 0;
  uint32_t end = outputs ? a->model->input_count + a->model->output_count
                         : a->model->input_count;
  uint32_t count = 0, i;
  for (i = begin; i < end; ++i) {
    const dlcx_tensor_t *t = &a->tensors[a->inputs[i]];
    uint64_t staged = s->staging_offsets[a->inputs[i]];
    if (!t->size || !dlc_vk_io_first(a, i))
      continue;
    regions[count].srcOffset = outputs ? t->offset : staged;
    regions[count].dstOffset = outputs ? staged : t->offset;
    regions[count].size = t->size;
    ++count;
  }
  if (count)
    d->fn.vkCmdCopyBuffer(
        s->commands, outputs ? s->arena.buffer : s->staging.buffer,
        outputs ? s->staging.buffer : s->arena.buffer, count, regions);
}

/* The one command buffer a run submits. */
static dlc_status_t dlc_vk_record(dlc_vk_session_t *s, dlc_message_t *message) {
  const dlc_vk_model_t *model = s->model;
  const dlc_artifact_t *a = model->artifact;
  const dlc_vk_device_t *d = model->device;
  const VkPipelineStageFlags compute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  const VkAccessFlags shader_rw =
      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  VkCommandBufferBeginInfo begin;
  VkPipeline bound = VK_NULL_HANDLE;
  VkBufferCopy *regions = NULL;
  uint32_t segment = 0, query = 0, i;
  VkResult result;

  if (d->staging) {
    regions = (VkBufferCopy *)dlc_vk_calloc(&model->allocator,
                                            (uint64_t)a->model->input_count +
                                                a->model->output_count,
                                            sizeof(VkBufferCopy));
    if (!regions)
      return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                             "cannot allocate the staging copies");
  }
  memset(&begin, 0, sizeof(begin));
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  result = d->fn.vkBeginCommandBuffer(s->commands, &begin);
  if (result != VK_SUCCESS) {
    dlc_vk_free(&model->allocator, regions);
    return dlc_message_set(message, dlc_vk_status(result),
                           "vkBeginCommandBuffer failed: %s",
                           dlc_vk_result_name(result));
  }
  if (s->queries) {
    d->fn.vkCmdResetQueryPool(s->commands, s->queries, 0,
                              1 + 2 * a->launch_count);
    d->fn.vkCmdWriteTimestamp(s->commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                              s->queries, query++);
  }
  if (d->staging) {
    dlc_vk_record_copies(s, 0, regions);
    dlc_vk_barrier(d, s->commands, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT, compute, shader_rw);
  }
  for (i = 0; i < a->launch_count; ++i) {
    const dlcx_launch_t *l = &a->launches[i];
    const dlc_vk_layout_t *layout =
        &model->layouts[model->kernel_layouts[l->kernel]];
    /* Timings should measure one kernel each: then every launch waits. */
    if (i > 0 && (s->queries || dlc_vk_depends(a, segment, i))) {
      dlc_vk_barrier(d, s->commands, compute, VK_ACCESS_SHADER_WRITE_BIT,
                     compute, shader_rw);
      segment = i;
    }
    if (s->queries)
      d->fn.vkCmdWriteTimestamp(s->commands, compute, s->queries, query++);
    if (model->pipelines[l->kernel] != bound) {
      bound = model->pipelines[l->kernel];
      d->fn.vkCmdBindPipeline(s->commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                              bound);
    }
    if (s->sets[i])
      d->fn.vkCmdBindDescriptorSets(s->commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                                    layout->pipeline_layout, 0, 1, &s->sets[i],
                                    0, NULL);
    d->fn.vkCmdDispatch(s->commands, l->grid[0], l->grid[1], l->grid[2]);
    if (s->queries)
      d->fn.vkCmdWriteTimestamp(s->commands, compute, s->queries, query++);
  }
  if (d->staging) {
    /* An output may be an input no kernel wrote: transfers count too. */
    dlc_vk_barrier(d, s->commands, compute | VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    dlc_vk_record_copies(s, 1, regions);
    dlc_vk_barrier(d, s->commands, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT);
  } else {
    /* A fence wait alone does not make device writes visible to the host. */
    dlc_vk_barrier(d, s->commands, compute, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  }
  result = d->fn.vkEndCommandBuffer(s->commands);
  dlc_vk_free(&model->allocator, regions);
  if (result != VK_SUCCESS)
    return dlc_message_set(message, dlc_vk_status(result),
                           "vkEndCommandBuffer failed: %s",
                           dlc_vk_result_name(result));
  return DLC_OK;
}

/* Places every distinct input and output tensor in the staging buffer. */
static dlc_status_t dlc_vk_create_staging(dlc_vk_session_t *s,
                                          dlc_message_t *message) {
  const dlc_artifact_t *a = s->model->artifact;
  uint32_t count = a->model->input_count + a->model->output_count, i;
  uint64_t size = 0;
  s->staging_offsets = (uint64_t *)dlc_vk_calloc(
      &s->model->allocator, a->tensor_count, sizeof(uint64_t));
  if (!s->staging_offsets)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the staging table");
  for (i = 0; i < a->tensor_count; ++i)
    s->staging_offsets[i] = DLC_VK_NO_OFFSET;
  for (i = 0; i < count; ++i) {
    uint32_t t = a->inputs[i];
    if (s->staging_offsets[t] != DLC_VK_NO_OFFSET)
      continue;
    s->staging_offsets[t] = size;
    /* Each tensor fits the arena, which fits the address space; their sum
     * might not. */
    if (a->tensors[t].size > UINT64_MAX - size - DLCX_ALIGNMENT)
      return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                             "the inputs and outputs are too large to stage");
    size = (size + a->tensors[t].size + DLCX_ALIGNMENT - 1) / DLCX_ALIGNMENT *
           DLCX_ALIGNMENT;
  }
  return dlc_vk_buffer_create(
      s->model->device, size,
      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
      VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "staging", message, &s->staging);
}

/* One descriptor set per launch with bindings, pointing at its buffers. */
static dlc_status_t dlc_vk_create_sets(dlc_vk_session_t *s,
                                       dlc_message_t *message) {
  const dlc_vk_model_t *model = s->model;
  const dlc_artifact_t *a = model->artifact;
  const dlc_vk_device_t *d = model->device;
  VkDescriptorPoolSize pool_size;
  VkDescriptorPoolCreateInfo pool_info;
  VkDescriptorBufferInfo *infos;
  uint32_t sets = 0, descriptors = 0, max_bindings = 0, i, j;
  VkResult result;

  for (i = 0; i < a->launch_count; ++i) {
    uint32_t n = a->launches[i].binding_count;
    sets += n ? 1 : 0;
    descriptors += n;
    max_bindings = n > max_bindings ? n : max_bindings;
  }
  if (!sets)
    return DLC_OK;
  pool_size.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  pool_size.descriptorCount = descriptors;
  memset(&pool_info, 0, sizeof(pool_info));
  pool_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  pool_info.maxSets = sets;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &pool_size;
  result = d->fn.vkCreateDescriptorPool(d->device, &pool_info, NULL,
                                        &s->descriptor_pool);
  if (result != VK_SUCCESS) {
    s->descriptor_pool = VK_NULL_HANDLE;
    return dlc_message_set(message, dlc_vk_status(result),
                           "cannot create a pool of %" PRIu32
                           " descriptor sets: %s",
                           sets, dlc_vk_result_name(result));
  }
  infos = (VkDescriptorBufferInfo *)dlc_vk_calloc(
      &model->allocator, max_bindings, sizeof(VkDescriptorBufferInfo));
  if (!infos)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate %" PRIu32 " descriptors",
                           max_bindings);
  for (i = 0; i < a->launch_count; ++i) {
    const dlcx_launch_t *l = &a->launches[i];
    VkDescriptorSetAllocateInfo allocate;
    VkWriteDescriptorSet write;
    if (!l->binding_count)
      continue;
    memset(&allocate, 0, sizeof(allocate));
    allocate.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    allocate.descriptorPool = s->descriptor_pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts =
        &model->layouts[model->kernel_layouts[l->kernel]].set_layout;
    result = d->fn.vkAllocateDescriptorSets(d->device, &allocate, &s->sets[i]);
    if (result != VK_SUCCESS) {
      s->sets[i] = VK_NULL_HANDLE;
      dlc_vk_free(&model->allocator, infos);
      return dlc_message_set(message, dlc_vk_status(result),
                             "cannot allocate the descriptor set of launch "
                             "%" PRIu32 ": %s",
                             i, dlc_vk_result_name(result));
    }
    for (j = 0; j < l->binding_count; ++j) {
      const dlcx_tensor_t *t = &a->tensors[a->bindings[l->binding_begin + j]];
      /* An empty tensor still needs a valid, non-empty range; its kernel
       * does not read it. */
      if (!t->size) {
        infos[j].buffer = s->arena.buffer;
        infos[j].offset = 0;
        infos[j].range = 4;
        continue;
      }
      {
        const dlc_vk_buffer_t *b =
            t->storage == DLCX_STORAGE_ARENA ? &s->arena : &model->constants;
        /* Kernels without 8/16-bit storage read such tensors as whole
         * 32-bit words: the range covers the last, partial word (buffers
         * are sized in words and tensors start word-aligned). */
        VkDeviceSize range = (t->size + 3) / 4 * 4;
        if (t->offset + range > b->size)
          range = b->size - t->offset;
        infos[j].buffer = b->buffer;
        infos[j].offset = t->offset;
        infos[j].range = range;
      }
    }
    memset(&write, 0, sizeof(write));
    write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    write.dstSet = s->sets[i];
    write.dstBinding = 0;
    write.descriptorCount = l->binding_count; /* consecutive bindings */
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = infos;
    d->fn.vkUpdateDescriptorSets(d->device, 1, &write, 0, NULL);
  }
  dlc_vk_free(&model->allocator, infos);
  return DLC_OK;
}

static dlc_status_t dlc_vk_create_commands(dlc_vk_session_t *s, int profiling,
                                           dlc_message_t *message) {
  const dlc_vk_model_t *model = s->model;
  const dlc_artifact_t *a = model->artifact;
  const dlc_vk_device_t *d = model->device;
  VkCommandPoolCreateInfo pool_info;
  VkCommandBufferAllocateInfo buffer_info;
  VkFenceCreateInfo fence_info;
  VkResult result;
  uint32_t i;

  if (profiling) {
    VkQueryPoolCreateInfo query_info;
    if (!d->timestamp_bits)
      return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                             "profiling needs timestamp queries, which the "
                             "compute queue of Vulkan device '%s' lacks",
                             d->properties.deviceName);
    s->ticks = (uint64_t *)dlc_vk_calloc(
        &model->allocator, 1 + 2 * (uint64_t)a->launch_count, sizeof(uint64_t));
    s->timings = (dlc_kernel_timing_t *)dlc_vk_calloc(
        &model->allocator, a->launch_count, sizeof(dlc_kernel_timing_t));
    if (!s->ticks || !s->timings)
      return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                             "cannot allocate the timings");
    for (i = 0; i < a->launch_count; ++i)
      s->timings[i].kernel_name =
          a->strings + a->kernels[a->launches[i].kernel].name;
    memset(&query_info, 0, sizeof(query_info));
    query_info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query_info.queryCount = 1 + 2 * a->launch_count;
    result = d->fn.vkCreateQueryPool(d->device, &query_info, NULL, &s->queries);
    if (result != VK_SUCCESS) {
      s->queries = VK_NULL_HANDLE;
      return dlc_message_set(message, dlc_vk_status(result),
                             "cannot create %" PRIu32 " timestamp queries: %s",
                             query_info.queryCount, dlc_vk_result_name(result));
    }
  }
  memset(&pool_info, 0, sizeof(pool_info));
  pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool_info.queueFamilyIndex = d->queue_family;
  result =
      d->fn.vkCreateCommandPool(d->device, &pool_info, NULL, &s->command_pool);
  if (result != VK_SUCCESS) {
    s->command_pool = VK_NULL_HANDLE;
    return dlc_message_set(message, dlc_vk_status(result),
                           "cannot create a command pool: %s",
                           dlc_vk_result_name(result));
  }
  memset(&buffer_info, 0, sizeof(buffer_info));
  buffer_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  buffer_info.commandPool = s->command_pool;
  buffer_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  buffer_info.commandBufferCount = 1;
  result =
      d->fn.vkAllocateCommandBuffers(d->device, &buffer_info, &s->commands);
  if (result != VK_SUCCESS)
    return dlc_message_set(message, dlc_vk_status(result),
                           "cannot allocate a command buffer: %s",
                           dlc_vk_result_name(result));
  memset(&fence_info, 0, sizeof(fence_info));
  fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  result = d->fn.vkCreateFence(d->device, &fence_info, NULL, &s->fence);
  if (result != VK_SUCCESS) {
    s->fence = VK_NULL_HANDLE;
    return dlc_message_set(message, dlc_vk_status(result),
                           "cannot create a fence: %s",
                           dlc_vk_result_name(result));
  }
  return dlc_vk_record(s, message);
}

static dlc_status_t dlc_vk_session_create(void *model_ptr,
                                          const dlc_session_options_t *options,
                                          dlc_message_t *message,
                                          void **out_session) {
  dlc_vk_model_t *model = (dlc_vk_model_t *)model_ptr;
  const dlc_artifact_t *a = model->artifact;
  dlc_vk_device_t *d = model->device;
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  dlc_vk_session_t *session;
  dlc_status_t status;

  session =
      (dlc_vk_session_t *)dlc_vk_calloc(&model->allocator, 1, sizeof(*session));
  if (!session)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the Vulkan session");
  session->model = model;
  session->sets = (VkDescriptorSet *)dlc_vk_calloc(
      &model->allocator, a->launch_count, sizeof(VkDescriptorSet));
  if (!session->sets) {
    dlc_vk_session_destroy(session);
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate %" PRIu32 " descriptor sets",
                           a->launch_count);
  }
  if (!d->staging)
    status = dlc_vk_buffer_create(d, a->model->arena_size, usage,
                                  VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                      VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                  VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "arena",
                                  message, &session->arena);
  else
    status = dlc_vk_buffer_create(d, a->model->arena_size, usage,
                                  VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
                                  "arena", message, &session->arena);
  /* Zeroed once so that a run never reads indeterminate arena bytes. */
  if (status == DLC_OK && session->arena.map) {
    memset(session->arena.map, 0, (size_t)session->arena.size);
  } else if (status == DLC_OK) {
    dlc_vk_transfer_t transfer;
    transfer.source = NULL;
    transfer.target = &session->arena;
    status = dlc_vk_transfer(d, &transfer, "zero the arena", message);
  }
  if (status == DLC_OK && d->staging)
    status = dlc_vk_create_staging(session, message);
  if (status == DLC_OK)
    status = dlc_vk_create_sets(session, message);
  if (status == DLC_OK)
    status = dlc_vk_create_commands(session, options->enable_profiling != 0,
                                    message);
  if (status == DLC_OK)
    status = dlc_vk_validation_check(model->vk, message);
  if (status != DLC_OK) {
    dlc_vk_session_destroy(session);
    return status;
  }
  *out_session = session;
  return DLC_OK;
}

/* Where `tensor`'s bytes are on the host side. */
static uint8_t *dlc_vk_host_bytes(const dlc_vk_session_t *s,
                                  const dlcx_tensor_t *tensor) {
  if (s->staging.map)
    return s->staging.map +
           s->staging_offsets[tensor - s->model->artifact->tensors];
  return s->arena.map + tensor->offset;
}

static dlc_status_t dlc_vk_set_input(void *session_ptr,
                                     const dlcx_tensor_t *tensor,
                                     const void *data, dlc_message_t *message) {
  dlc_vk_session_t *session = (dlc_vk_session_t *)session_ptr;
  (void)message;
  if (tensor->size)
    memcpy(dlc_vk_host_bytes(session, tensor), data, (size_t)tensor->size);
  return DLC_OK;
}

static dlc_status_t dlc_vk_get_output(void *session_ptr,
                                      const dlcx_tensor_t *tensor, void *data,
                                      dlc_message_t *message) {
  dlc_vk_session_t *session = (dlc_vk_session_t *)session_ptr;
  (void)message;
  if (tensor->size)
    memcpy(data, dlc_vk_host_bytes(session, tensor), (size_t)tensor->size);
  return DLC_OK;
}

static void dlc_vk_read_timings(dlc_vk_session_t *s) {
  const dlc_vk_device_t *d = s->model->device;
  uint32_t count = s->model->artifact->launch_count, i;
  uint64_t mask = d->timestamp_bits >= 64
                      ? UINT64_MAX
                      : ((uint64_t)1 << d->timestamp_bits) - 1;
  double period = d->properties.limits.timestampPeriod;
  for (i = 0; i < count; ++i) {
    uint64_t start = (s->ticks[1 + 2 * i] - s->ticks[0]) & mask;
    uint64_t duration = (s->ticks[2 + 2 * i] - s->ticks[1 + 2 * i]) & mask;
    s->timings[i].start_ns = (uint64_t)((double)start * period);
    s->timings[i].duration_ns = (uint64_t)((double)duration * period);
  }
  s->timing_count = count;
}

static dlc_status_t dlc_vk_run(void *session_ptr, dlc_message_t *message) {
  dlc_vk_session_t *s = (dlc_vk_session_t *)session_ptr;
  dlc_vk_device_t *d = s->model->device;
  const char *what = "vkResetFences";
  VkSubmitInfo submit;
  VkResult result;

  memset(&submit, 0, sizeof(submit));
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &s->commands;
  result = d->fn.vkResetFences(d->device, 1, &s->fence);
  if (result == VK_SUCCESS) {
    what = "vkQueueSubmit";
    dlc_mutex_lock(&d->queue_lock);
    result = d->fn.vkQueueSubmit(d->queue, 1, &submit, s->fence);
    dlc_mutex_unlock(&d->queue_lock);
  }
  if (result == VK_SUCCESS) {
    what = "vkWaitForFences";
    result =
        d->fn.vkWaitForFences(d->device, 1, &s->fence, VK_TRUE, UINT64_MAX);
  }
  if (result == VK_SUCCESS && s->queries) {
    uint32_t count = 1 + 2 * s->model->artifact->launch_count;
    what = "vkGetQueryPoolResults";
    result = d->fn.vkGetQueryPoolResults(
        d->device, s->queries, 0, count, count * sizeof(uint64_t), s->ticks,
        sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (result == VK_SUCCESS)
      dlc_vk_read_timings(s);
  }
  if (result != VK_SUCCESS)
    return dlc_message_set(message, dlc_vk_status(result), "%s failed: %s",
                           what, dlc_vk_result_name(result));
  return dlc_vk_validation_check(s->model->vk, message);
}

static dlc_status_t dlc_vk_timings(const void *session_ptr,
                                   const dlc_kernel_timing_t **out_timings,
                                   uint32_t *out_count) {
  const dlc_vk_session_t *session = (const dlc_vk_session_t *)session_ptr;
  *out_timings = session->timings;
  *out_count = session->timing_count;
  return DLC_OK;
}

/*===--- the driver -----------------------------------------------------===*/

static dlc_status_t dlc_vk_probe(const dlc_driver_t *driver,
                                 dlc_message_t *message) {
  dlc_vk_device_t *device;
  return dlc_vk_select((dlc_vk_driver_t *)driver->self, 0, message, &device);
}

static void dlc_vk_driver_destroy(dlc_driver_t *driver) {
  dlc_vk_driver_t *vk = (dlc_vk_driver_t *)driver->self;
  dlc_vk_driver_fini(vk);
  vk->allocator.free(vk->allocator.self, vk);
}

dlc_status_t dlc_vulkan_driver_create_with_options(
    const dlc_allocator_t *allocator,
    const dlc_vulkan_driver_options_t *options, dlc_driver_t **out_driver) {
  dlc_allocator_t resolved =
      allocator && allocator->alloc ? *allocator : dlc_allocator_system();
  dlc_vulkan_driver_options_t o;
  dlc_vk_driver_t *vk;
  int failed = 0;
  if (!out_driver)
    return DLC_ERROR_INVALID_ARGUMENT;
  memset(&o, 0, sizeof(o));
  if (!dlc_driver_options_copy(options, sizeof(o), &o))
    return DLC_ERROR_INVALID_ARGUMENT;
  vk = (dlc_vk_driver_t *)resolved.alloc(resolved.self, sizeof(*vk), 16);
  if (!vk)
    return DLC_ERROR_OUT_OF_MEMORY;
  memset(vk, 0, sizeof(*vk));
  vk->allocator = resolved;
  if (!dlc_vk_driver_init(vk)) {
    resolved.free(resolved.self, vk);
    return DLC_ERROR_DEVICE;
  }
  vk->library_path = dlc_driver_strdup(&resolved, o.library, &failed);
  vk->device_filter = dlc_driver_strdup(&resolved, o.device_filter, &failed);
  vk->validate = o.validate != 0;
  vk->force_staging = o.force_staging != 0;
  vk->masked_features = o.masked_features;
  if (failed) {
    dlc_vk_driver_fini(vk);
    resolved.free(resolved.self, vk);
    return DLC_ERROR_OUT_OF_MEMORY;
  }
  vk->driver.abi_version = DLC_DRIVER_ABI_VERSION;
  vk->driver.target = DLCX_TARGET_VULKAN;
  vk->driver.name = "vulkan";
  vk->driver.self = vk;
  vk->driver.probe = dlc_vk_probe;
  vk->driver.model_prepare = dlc_vk_model_prepare;
  vk->driver.model_release = dlc_vk_model_release;
  vk->driver.session_create = dlc_vk_session_create;
  vk->driver.session_destroy = dlc_vk_session_destroy;
  vk->driver.set_input = dlc_vk_set_input;
  vk->driver.run = dlc_vk_run;
  vk->driver.get_output = dlc_vk_get_output;
  vk->driver.timings = dlc_vk_timings;
  vk->driver.destroy = dlc_vk_driver_destroy;
  *out_driver = &vk->driver;
  return DLC_OK;
}

dlc_status_t dlc_vulkan_driver_create(const dlc_allocator_t *allocator,
                                      dlc_driver_t **out_driver) {
  return dlc_vulkan_driver_create_with_options(allocator, NULL, out_driver);
}
