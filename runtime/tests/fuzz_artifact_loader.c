/*===- fuzz_artifact_loader.c - libFuzzer target for model loading --------===*
 *
 * Feeds arbitrary bytes to dlc_model_load_memory with a driver that prepares
 * nothing, so that only validation and the model accessors run. The harness
 * rewrites file_size and the checksum to match the input: otherwise nearly
 * every mutation would stop at those two checks (test_corruption covers
 * them) and the fuzzer would never reach the tables.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dlc/driver.h"
#include "dlc/runtime.h"
#include "stub_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_driver_t stubs[3];
  uint8_t *copy = NULL;
  uint32_t i, index;

  /* Exactly `size` bytes, so ASan catches any read past the end. */
  if (posix_memalign((void **)&copy, DLCX_ALIGNMENT, size ? size : 1) != 0)
    return 0;
  memcpy(copy, data, size);
  if (size >= sizeof(dlcx_header_t)) {
    uint64_t file_size = size, checksum;
    memcpy(copy + offsetof(dlcx_header_t, file_size), &file_size, 8);
    checksum =
        dlcx_checksum(copy + DLCX_CHECKSUM_START, size - DLCX_CHECKSUM_START);
    memcpy(copy + offsetof(dlcx_header_t, checksum), &checksum, 8);
  }

  if (dlc_context_create(NULL, &context) != DLC_OK)
    abort();
  for (i = 0; i < 3; ++i) {
    dlc_test_stub_driver((dlcx_target_t)(DLCX_TARGET_CPU + i), &stubs[i]);
    dlc_context_register_driver(context, &stubs[i]);
  }
  if (dlc_model_load_memory(context, copy, size, NULL, &model) == DLC_OK) {
    dlc_session_t *session = NULL;
    dlc_tensor_info_t info;
    for (i = 0; i < dlc_model_input_count(model); ++i) {
      if (dlc_model_input_info(model, i, &info) != DLC_OK ||
          dlc_model_find_input(model, info.name, &index) != DLC_OK)
        abort();
    }
    for (i = 0; i < dlc_model_output_count(model); ++i) {
      if (dlc_model_output_info(model, i, &info) != DLC_OK ||
          dlc_model_find_output(model, info.name, &index) != DLC_OK)
        abort();
    }
    /* The one reason a valid model may not get a session: its scratch is
     * over the session's cap (a mutated cpu_scratch_size). */
    dlc_status_t created = dlc_session_create(model, NULL, &session);
    if (created != DLC_OK &&
        (created != DLC_ERROR_UNSUPPORTED ||
         !strstr(dlc_context_message(context), "scratch per thread")))
      abort();
    dlc_session_destroy(session);
    dlc_model_destroy(model);
  } else if (dlc_context_message(context)[0] == '\0') {
    abort(); /* every error carries a reason */
  }
  dlc_context_destroy(context);
  free(copy);
  return 0;
}
