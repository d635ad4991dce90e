/*===- model.c - load, validate and describe a model ----------------------===*/

#include <string.h>

#include "internal.h"

/* Validates `bytes`, finds the driver and lets it prepare the model. Takes
 * ownership of `bytes` (released on failure too). */
static dlc_status_t dlc_model_create(dlc_context_t *context,
                                     dlc_bytes_kind_t kind, void *bytes,
                                     size_t size,
                                     const dlc_model_options_t *options,
                                     dlc_model_t **out_model) {
  dlc_model_options_t resolved;
  dlc_message_t *message = &context->message;
  dlc_model_t *model;
  dlc_status_t status;

  memset(&resolved, 0, sizeof(resolved));
  resolved.struct_size = sizeof(resolved);
  status = dlc_options_copy(options, sizeof(resolved), &resolved, message,
                            "dlc_model_options_t");
  if (status != DLC_OK) {
    dlc_file_release(&context->allocator, kind, bytes, size);
    return status;
  }
  model = (dlc_model_t *)context->allocator.alloc(context->allocator.self,
                                                  sizeof(*model), 16);
  if (!model) {
    dlc_file_release(&context->allocator, kind, bytes, size);
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the model");
  }
  memset(model, 0, sizeof(*model));
  model->context = context;
  model->bytes_kind = kind;
  model->bytes = bytes;
  model->bytes_size = size;

  status = dlc_artifact_validate((const uint8_t *)bytes, size, &model->artifact,
                                 message);
  if (status == DLC_OK) {
    uint32_t target = model->artifact.header->target;
    model->driver = dlc_context_find_driver(context, target);
    if (!model->driver)
      status =
          dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                          "the artifact is for target %s, and no %s "
                          "driver is built in or registered",
                          dlc_target_name(target), dlc_target_name(target));
  }
  if (status == DLC_OK)
    status = model->driver->model_prepare(model->driver, &context->allocator,
                                          &model->artifact, &resolved, message,
                                          &model->driver_model);
  if (status != DLC_OK) {
    model->driver = NULL;
    dlc_model_destroy(model);
    return status;
  }
  *out_model = model;
  return DLC_OK;
}

dlc_status_t dlc_model_load_file(dlc_context_t *context, const char *path,
                                 const dlc_model_options_t *options,
                                 dlc_model_t **out_model) {
  dlc_bytes_kind_t kind;
  void *bytes;
  size_t size;
  dlc_status_t status;
  if (!context)
    return DLC_ERROR_INVALID_ARGUMENT;
  if (!path || !out_model)
    return dlc_message_set(&context->message, DLC_ERROR_INVALID_ARGUMENT,
                           "dlc_model_load_file: path or out_model is NULL");
  *out_model = NULL;
  status = dlc_file_read(&context->allocator, path, &kind, &bytes, &size,
                         &context->message);
  if (status != DLC_OK)
    return status;
  return dlc_model_create(context, kind, bytes, size, options, out_model);
}

dlc_status_t dlc_model_load_memory(dlc_context_t *context, const void *data,
                                   size_t size,
                                   const dlc_model_options_t *options,
                                   dlc_model_t **out_model) {
  if (!context)
    return DLC_ERROR_INVALID_ARGUMENT;
  if (!out_model || (!data && size))
    return dlc_message_set(&context->message, DLC_ERROR_INVALID_ARGUMENT,
                           "dlc_model_load_memory: data or out_model is NULL");
  *out_model = NULL;
  if ((uintptr_t)data % DLCX_ALIGNMENT != 0)
    return dlc_message_set(&context->message, DLC_ERROR_INVALID_ARGUMENT,
                           "dlc_model_load_memory: data must be aligned to "
                           "%u bytes so weights can be used in place",
                           (unsigned)DLCX_ALIGNMENT);
  /* Borrowed bytes are never written: the cast only fits the shared field. */
  return dlc_model_create(context, DLC_BYTES_BORROWED, (void *)data, size,
                          options, out_model);
}

void dlc_model_destroy(dlc_model_t *model) {
  dlc_context_t *context;
  if (!model)
    return;
  context = model->context;
  if (model->driver)
    model->driver->model_release(model->driver_model);
  dlc_file_release(&context->allocator, model->bytes_kind, model->bytes,
                   model->bytes_size);
  context->allocator.free(context->allocator.self, model);
}

uint32_t dlc_model_input_count(const dlc_model_t *model) {
  return model ? model->artifact.model->input_count : 0;
}

uint32_t dlc_model_output_count(const dlc_model_t *model) {
  return model ? model->artifact.model->output_count : 0;
}

static void dlc_fill_info(const dlc_artifact_t *a, uint32_t tensor,
                          dlc_tensor_info_t *out_info) {
  const dlcx_tensor_t *t = &a->tensors[tensor];
  out_info->name = a->strings + t->name;
  out_info->dtype = (dlcx_dtype_t)t->dtype;
  out_info->rank = t->rank;
  out_info->dims = t->dims;
  out_info->size_bytes = (size_t)t->size;
  out_info->scale = t->scale;
  out_info->zero_point = t->zero_point;
}

dlc_status_t dlc_model_input_info(const dlc_model_t *model, uint32_t index,
                                  dlc_tensor_info_t *out_info) {
  if (!model || !out_info)
    return DLC_ERROR_INVALID_ARGUMENT;
  if (index >= model->artifact.model->input_count)
    return dlc_message_set(&model->context->message, DLC_ERROR_INVALID_ARGUMENT,
                           "input index %u is out of range (%u inputs)",
                           (unsigned)index,
                           (unsigned)model->artifact.model->input_count);
  dlc_fill_info(&model->artifact, model->artifact.inputs[index], out_info);
  return DLC_OK;
}

dlc_status_t dlc_model_output_info(const dlc_model_t *model, uint32_t index,
                                   dlc_tensor_info_t *out_info) {
  if (!model || !out_info)
    return DLC_ERROR_INVALID_ARGUMENT;
  if (index >= model->artifact.model->output_count)
    return dlc_message_set(&model->context->message, DLC_ERROR_INVALID_ARGUMENT,
                           "output index %u is out of range (%u outputs)",
                           (unsigned)index,
                           (unsigned)model->artifact.model->output_count);
  dlc_fill_info(&model->artifact, model->artifact.outputs[index], out_info);
  return DLC_OK;
}

static dlc_status_t dlc_find(const dlc_model_t *model, const uint32_t *io,
                             uint32_t count, const char *what, const char *name,
                             uint32_t *out_index) {
  const dlc_artifact_t *a = &model->artifact;
  uint32_t i;
  if (!name || !out_index)
    return DLC_ERROR_INVALID_ARGUMENT;
  for (i = 0; i < count; ++i)
    if (strcmp(a->strings + a->tensors[io[i]].name, name) == 0) {
      *out_index = i;
      return DLC_OK;
    }
  return dlc_message_set(&model->context->message, DLC_ERROR_NOT_FOUND,
                         "the model has no %s named '%s'", what, name);
}

dlc_status_t dlc_model_find_input(const dlc_model_t *model, const char *name,
                                  uint32_t *out_index) {
  if (!model)
    return DLC_ERROR_INVALID_ARGUMENT;
  return dlc_find(model, model->artifact.inputs,
                  model->artifact.model->input_count, "input", name, out_index);
}

dlc_status_t dlc_model_find_output(const dlc_model_t *model, const char *name,
                                   uint32_t *out_index) {
  if (!model)
    return DLC_ERROR_INVALID_ARGUMENT;
  return dlc_find(model, model->artifact.outputs,
                  model->artifact.model->output_count, "output", name,
                  out_index);
}

dlcx_target_t dlc_model_target(const dlc_model_t *model) {
  return (dlcx_target_t)(model ? model->artifact.header->target : 0);
}

uint32_t dlc_model_kernel_count(const dlc_model_t *model) {
  return model ? model->artifact.kernel_count : 0;
}

uint32_t dlc_model_launch_count(const dlc_model_t *model) {
  return model ? model->artifact.launch_count : 0;
}

uint64_t dlc_model_arena_size(const dlc_model_t *model) {
  return model ? model->artifact.model->arena_size : 0;
}

const char *dlc_model_driver_name(const dlc_model_t *model) {
  return model ? model->driver->name : "";
}
