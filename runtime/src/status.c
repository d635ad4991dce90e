/*===- status.c - status names, messages, and name tables -----------------===*/

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *dlc_status_name(dlc_status_t status) {
  switch (status) {
  case DLC_OK:
    return "DLC_OK";
  case DLC_ERROR_INVALID_ARGUMENT:
    return "DLC_ERROR_INVALID_ARGUMENT";
  case DLC_ERROR_OUT_OF_MEMORY:
    return "DLC_ERROR_OUT_OF_MEMORY";
  case DLC_ERROR_IO:
    return "DLC_ERROR_IO";
  case DLC_ERROR_INVALID_ARTIFACT:
    return "DLC_ERROR_INVALID_ARTIFACT";
  case DLC_ERROR_UNSUPPORTED:
    return "DLC_ERROR_UNSUPPORTED";
  case DLC_ERROR_UNAVAILABLE:
    return "DLC_ERROR_UNAVAILABLE";
  case DLC_ERROR_DEVICE:
    return "DLC_ERROR_DEVICE";
  case DLC_ERROR_NOT_FOUND:
    return "DLC_ERROR_NOT_FOUND";
  }
  return "DLC_ERROR_UNKNOWN";
}

void dlc_message_init(dlc_message_t *message, char *text, size_t capacity) {
  message->text = text;
  message->capacity = capacity;
  text[0] = '\0';
}

dlc_status_t dlc_message_set(dlc_message_t *message, dlc_status_t status,
                             const char *format, ...) {
  va_list args;
  if (!message || !message->text || message->capacity == 0)
    return status;
  va_start(args, format);
  vsnprintf(message->text, message->capacity, format, args);
  va_end(args);
  return status;
}

uint32_t dlc_dtype_half_bytes(uint32_t dtype) {
  return dlcx_dtype_bits(dtype) / 4;
}

const char *dlc_dtype_name(uint32_t dtype) {
  const dlcx_dtype_info_t *info = dlcx_dtype_info(dtype);
  return info ? info->name : "unknown";
}

const char *dlc_target_name(uint32_t target) {
  switch (target) {
  case DLCX_TARGET_CPU:
    return "cpu";
  case DLCX_TARGET_VULKAN:
    return "vulkan";
  case DLCX_TARGET_CUDA:
    return "cuda";
  }
  return "unknown";
}

dlc_status_t dlc_options_copy(const void *options, size_t known_size, void *out,
                              dlc_message_t *message, const char *type_name) {
  uint32_t struct_size;
  if (!options)
    return DLC_OK;
  memcpy(&struct_size, options, sizeof(struct_size));
  if (struct_size < sizeof(struct_size))
    return dlc_message_set(message, DLC_ERROR_INVALID_ARGUMENT,
                           "%s.struct_size is %u; set it to sizeof(%s)",
                           type_name, (unsigned)struct_size, type_name);
  if (struct_size > known_size)
    return dlc_message_set(
        message, DLC_ERROR_INVALID_ARGUMENT,
        "%s.struct_size is %u but this runtime knows %u bytes: the "
        "application was built against a newer runtime.h",
        type_name, (unsigned)struct_size, (unsigned)known_size);
  memcpy(out, options, struct_size);
  /* Drivers receive a complete struct: say so. */
  struct_size = (uint32_t)known_size;
  memcpy(out, &struct_size, sizeof(struct_size));
  return DLC_OK;
}
