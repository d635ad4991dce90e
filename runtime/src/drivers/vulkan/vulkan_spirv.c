/*===- vulkan_spirv.c - what the driver checks in a SPIR-V module ---------===*
 *
 * Not a validator: the header, the instruction lengths of the preamble
 * (capabilities, extensions, entry points, execution modes, debug names,
 * decorations, types and constants), and the entry point the kernel names.
 * The scan stops at the first OpFunction, so it costs little even when all
 * kernels share one large module.
 *===----------------------------------------------------------------------===*/

#include <inttypes.h>
#include <string.h>

#include "vulkan_spirv.h"

#define DLC_SPIRV_MAGIC 0x07230203u
#define DLC_SPIRV_HEADER_WORDS 5u
#define DLC_SPIRV_OP_ENTRY_POINT 15u
#define DLC_SPIRV_OP_EXECUTION_MODE 16u
#define DLC_SPIRV_OP_FUNCTION 54u
#define DLC_SPIRV_MODEL_GLCOMPUTE 5u
#define DLC_SPIRV_MODE_LOCAL_SIZE 17u

/* Code inside the artifact need not be 4-aligned. */
static uint32_t dlc_spirv_word(const uint8_t *code, uint64_t index) {
  uint32_t word;
  memcpy(&word, code + index * 4, sizeof(word));
  return word;
}

/* Whether the literal string in words [begin, end) equals `name`. */
static int dlc_spirv_name_is(const uint8_t *code, uint64_t begin, uint64_t end,
                             const char *name) {
  size_t length = strlen(name);
  const char *text = (const char *)code + begin * 4;
  return length < (end - begin) * 4 && memcmp(text, name, length + 1) == 0;
}

dlc_status_t dlc_vk_spirv_inspect(const uint8_t *code, uint64_t size,
                                  uint32_t index, const char *name,
                                  dlc_vk_spirv_info_t *out_info,
                                  dlc_message_t *message) {
  uint64_t words = size / 4, at;
  uint32_t entry = 0;
  int found = 0;

  memset(out_info, 0, sizeof(*out_info));
  if (!code || size % 4 != 0 || words < DLC_SPIRV_HEADER_WORDS ||
      dlc_spirv_word(code, 0) != DLC_SPIRV_MAGIC)
    return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                           "kernel %" PRIu32 " ('%s'): its code (%" PRIu64
                           " bytes) is not a little-endian SPIR-V module",
                           index, name, size);
  out_info->version = dlc_spirv_word(code, 1);
  for (at = DLC_SPIRV_HEADER_WORDS; at < words;) {
    uint32_t word = dlc_spirv_word(code, at);
    uint32_t count = word >> 16, op = word & 0xffffu;
    if (count == 0 || count > words - at)
      return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                             "kernel %" PRIu32 " ('%s'): SPIR-V instruction "
                             "at word %" PRIu64 " has length %" PRIu32
                             ", the module ends at word %" PRIu64,
                             index, name, at, count, words);
    if (op == DLC_SPIRV_OP_FUNCTION)
      break;
    if (op == DLC_SPIRV_OP_ENTRY_POINT && count >= 4 && !found &&
        dlc_spirv_word(code, at + 1) == DLC_SPIRV_MODEL_GLCOMPUTE &&
        dlc_spirv_name_is(code, at + 3, at + count, name)) {
      found = 1;
      entry = dlc_spirv_word(code, at + 2);
    }
    if (op == DLC_SPIRV_OP_EXECUTION_MODE && count == 6 && found &&
        dlc_spirv_word(code, at + 1) == entry &&
        dlc_spirv_word(code, at + 2) == DLC_SPIRV_MODE_LOCAL_SIZE) {
      out_info->has_local_size = 1;
      out_info->local_size[0] = dlc_spirv_word(code, at + 3);
      out_info->local_size[1] = dlc_spirv_word(code, at + 4);
      out_info->local_size[2] = dlc_spirv_word(code, at + 5);
    }
    at += count;
  }
  if (!found)
    return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                           "kernel %" PRIu32 " ('%s'): its SPIR-V module has "
                           "no GLCompute entry point named '%s'",
                           index, name, name);
  return DLC_OK;
}
