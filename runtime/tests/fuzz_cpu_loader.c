/*===- fuzz_cpu_loader.c - libFuzzer target: load and run on the CPU ------===*
 *
 * Where fuzz_artifact_loader feeds arbitrary bytes to validation alone, this
 * target starts from one valid CPU artifact whose CODE is the test kernels'
 * shared object (fuzz_cpu_artifact.h: the model, and the input format, a
 * list of byte patches), applies the input's patches, recomputes file_size
 * and the checksum, loads it with the built-in CPU driver (memfd, dlopen,
 * symbols), and when that succeeds creates a session, sets the inputs to
 * fixed values, runs it twice and reads the outputs back.
 *
 * Threat model. Native code cannot be validated: whatever the runtime
 * checks, a kernel can write anywhere. So the bytes that describe the code
 * belong to its trust domain and are never patched: the CODE section, the
 * KERNELS table, KERNEL_LIMITS (each kernel's grid) and KERNEL_ARGS (the
 * bytes each of its buffers spans), the section-table entries that locate
 * those four, and what decides which function a kernel entry names: its
 * name's bytes in STRINGS and the kind, flags and offset of the STRINGS
 * entry. The header's section_table_offset is protected with them (a table
 * moved elsewhere would locate other bytes). Everything else is fuzzed: the
 * rest of the header (version, target, features, section_count), the other
 * section entries, the launch table, bindings, tensors, IO, the rest of
 * STRINGS, the constants, the model record with its arena_size and
 * cpu_scratch_size, and the padding between sections; validation must then
 * keep every launch within what the trusted tables say, since the kernels
 * index their buffers by workgroup id and nothing else. The kernels used
 * read no sizes from their buffers and no scratch (fuzz_cpu_artifact.c),
 * which a fuzzed value could otherwise turn into an out-of-bounds access
 * that no loader could prevent. The artifact is loaded from writable memory:
 * a patched binding may hand a constant to a kernel that writes it, which
 * validation cannot see (runtime/README.md, Validation) and which would
 * fault in a read-only mapping of a file.
 *
 * Every failure must be DLC_ERROR_INVALID_ARTIFACT, _UNSUPPORTED or
 * _UNAVAILABLE with a message (the trusted code always loads, so an I/O or
 * dlopen failure is a bug), a session may only be refused for its scratch
 * cap, and setting inputs, running and reading outputs must succeed. An
 * input that leaves the artifact unchanged must produce the reference
 * outputs. Anything else abort()s, and ASan/UBSan watch the rest; libFuzzer's
 * -timeout catches a run that does not end. With DLC_FUZZ_VERBOSE set in the
 * environment, each input's outcome is printed (to triage a corpus).
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlc/runtime.h"
#include "fuzz_cpu_artifact.h"

/* Sessions are made for arenas up to this size: a fuzzed arena_size may be
 * valid and gigabytes large (an application checks dlc_model_arena_size
 * against what it can give), and zeroing that tests nothing new. */
#define DLC_FUZZ_MAX_ARENA (1u << 20)
/* The session's scratch cap, well above the base artifact's 64 bytes. */
#define DLC_FUZZ_MAX_SCRATCH (1u << 16)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static dlc_fuzz_cpu_t g_fuzz;
static int g_verbose;

static void dlc_fuzz_fail(const char *what, dlc_status_t status,
                          const char *message) {
  fprintf(stderr, "fuzz_cpu_loader: %s: %s: %s\n", what,
          dlc_status_name(status), message);
  abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (!dlc_fuzz_cpu_build(&g_fuzz))
    abort();
  g_verbose = getenv("DLC_FUZZ_VERBOSE") != NULL;
  if (g_verbose)
    fprintf(stderr,
            "fuzz_cpu_loader: %lu of the artifact's %lu bytes are "
            "protected\n",
            (unsigned long)g_fuzz.protected_count, (unsigned long)g_fuzz.size);
  return 0;
}

/* Input `index`'s bytes: f32 values in 4-byte steps (whatever the dtype
 * says now), then a byte pattern for a tail. */
static void dlc_fuzz_fill(uint8_t *data, size_t size, uint32_t index) {
  size_t i;
  for (i = 0; i + 4 <= size; i += 4) {
    float value = (float)((i / 4 * 7 + index * 5) % 19) - 9.0f;
    memcpy(data + i, &value, 4);
  }
  for (; i < size; ++i)
    data[i] = (uint8_t)(i * 31 + index);
}

/* The unpatched model's outputs, for the inputs dlc_fuzz_fill writes. */
static void dlc_fuzz_check_reference(const dlc_model_t *model,
                                     uint8_t *const *outputs) {
  float x[DLC_FUZZ_CPU_N], y[DLC_FUZZ_CPU_N], value;
  uint32_t zero[DLC_FUZZ_CPU_N], i;
  if (dlc_model_output_count(model) != 2)
    dlc_fuzz_fail("the unpatched model", DLC_OK, "not two outputs");
  dlc_fuzz_fill((uint8_t *)x, sizeof(x), 0);
  dlc_fuzz_fill((uint8_t *)y, sizeof(y), 1);
  for (i = 0; i < DLC_FUZZ_CPU_N; ++i) {
    float out;
    memcpy(&out, outputs[0] + 4 * i, 4);
    value = x[i] + y[i];
    value = value * DLC_FUZZ_CPU_SCALE;
    value = value + DLC_FUZZ_CPU_BIAS(i);
    if (out != value) {
      fprintf(stderr, "fuzz_cpu_loader: out2[%u] is %g, expected %g\n",
              (unsigned)i, (double)out, (double)value);
      abort();
    }
  }
  memset(zero, 0, sizeof(zero));
  if (memcmp(outputs[1], zero, sizeof(zero)) != 0)
    dlc_fuzz_fail("the unpatched model", DLC_OK, "z is not all zeros");
}

/* Creates a session, runs it and reads the outputs; aborts on any failure
 * but the scratch cap. */
static void dlc_fuzz_run(dlc_context_t *context, dlc_model_t *model,
                         const dlc_fuzz_cpu_options_t *options, int unchanged) {
  dlc_session_options_t session_options;
  dlc_session_t *session = NULL;
  dlc_tensor_info_t info;
  uint8_t *outputs[2] = {NULL, NULL};
  uint32_t inputs = dlc_model_input_count(model);
  uint32_t output_count = dlc_model_output_count(model);
  uint32_t i, round;
  dlc_status_t status;

  memset(&session_options, 0, sizeof(session_options));
  session_options.struct_size = sizeof(session_options);
  session_options.thread_count = options->thread_count;
  session_options.enable_profiling = options->enable_profiling;
  session_options.max_cpu_scratch_size = DLC_FUZZ_MAX_SCRATCH;
  status = dlc_session_create(model, &session_options, &session);
  if (status != DLC_OK) {
    if (status != DLC_ERROR_UNSUPPORTED ||
        !strstr(dlc_context_message(context), "scratch per thread"))
      dlc_fuzz_fail("dlc_session_create", status, dlc_context_message(context));
    if (g_verbose)
      fprintf(stderr, "session refused: %s\n", dlc_context_message(context));
    return;
  }
  /* Inputs are set before each run: an artifact may let a run reuse an
   * input's memory (a flag outside the code's trust domain, so patched
   * artifacts set it too), and the runtime then refuses a run whose
   * inputs were not set again, as the API documents. */
  for (round = 0; round < 2; ++round) {
    for (i = 0; i < inputs; ++i) {
      uint8_t *data;
      if (dlc_model_input_info(model, i, &info) != DLC_OK)
        dlc_fuzz_fail("dlc_model_input_info", DLC_OK, "");
      data = (uint8_t *)malloc(info.size_bytes ? info.size_bytes : 1);
      if (!data)
        abort();
      dlc_fuzz_fill(data, info.size_bytes, i);
      status = dlc_session_set_input(session, i, data, info.size_bytes);
      free(data);
      if (status != DLC_OK)
        dlc_fuzz_fail("dlc_session_set_input", status,
                      dlc_session_message(session));
    }
    if ((status = dlc_session_run(session)) != DLC_OK)
      dlc_fuzz_fail("dlc_session_run", status, dlc_session_message(session));
  }
  for (i = 0; i < output_count; ++i) {
    uint8_t *data;
    if (dlc_model_output_info(model, i, &info) != DLC_OK)
      dlc_fuzz_fail("dlc_model_output_info", DLC_OK, "");
    data = (uint8_t *)malloc(info.size_bytes ? info.size_bytes : 1);
    if (!data)
      abort();
    status = dlc_session_get_output(session, i, data, info.size_bytes);
    if (status != DLC_OK)
      dlc_fuzz_fail("dlc_session_get_output", status,
                    dlc_session_message(session));
    if (i < 2 && unchanged)
      outputs[i] = data;
    else
      free(data);
  }
  if (unchanged)
    dlc_fuzz_check_reference(model, outputs);
  if (options->enable_profiling) {
    const dlc_kernel_timing_t *timings = NULL;
    uint32_t count = 0;
    status = dlc_session_timings(session, &timings, &count);
    if (status != DLC_OK || count != dlc_model_launch_count(model))
      dlc_fuzz_fail("dlc_session_timings", status,
                    dlc_session_message(session));
    for (i = 0; i < count; ++i)
      if (!timings[i].kernel_name || !timings[i].kernel_name[0])
        dlc_fuzz_fail("dlc_session_timings", status, "a launch without name");
  }
  if (g_verbose)
    fprintf(stderr, "ran %u launches on %u threads\n",
            (unsigned)dlc_model_launch_count(model),
            (unsigned)options->thread_count);
  free(outputs[0]);
  free(outputs[1]);
  dlc_session_destroy(session);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dlc_fuzz_cpu_options_t options;
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_tensor_info_t info;
  dlc_status_t status;
  uint8_t *artifact = NULL;
  uint32_t i, index;
  int unchanged;

  /* Exactly the artifact's size, so ASan catches any read past the end. */
  if (posix_memalign((void **)&artifact, DLCX_ALIGNMENT, g_fuzz.size) != 0)
    abort();
  dlc_fuzz_cpu_patch(&g_fuzz, data, size, artifact, &options);
  unchanged = memcmp(artifact, g_fuzz.base, g_fuzz.size) == 0;

  if (dlc_context_create(NULL, &context) != DLC_OK)
    abort();
  status = dlc_model_load_memory(context, artifact, g_fuzz.size, NULL, &model);
  if (status != DLC_OK) {
    if (unchanged ||
        (status != DLC_ERROR_INVALID_ARTIFACT &&
         status != DLC_ERROR_UNSUPPORTED && status != DLC_ERROR_UNAVAILABLE) ||
        dlc_context_message(context)[0] == '\0' || model)
      dlc_fuzz_fail("dlc_model_load_memory", status,
                    dlc_context_message(context));
    if (g_verbose)
      fprintf(stderr, "refused: %s: %s\n", dlc_status_name(status),
              dlc_context_message(context));
  } else {
    if (strcmp(dlc_model_driver_name(model), "cpu") != 0 ||
        dlc_model_kernel_count(model) != 3)
      dlc_fuzz_fail("dlc_model_load_memory", status, "not the CPU model");
    for (i = 0; i < dlc_model_input_count(model); ++i)
      if (dlc_model_input_info(model, i, &info) != DLC_OK ||
          dlc_model_find_input(model, info.name, &index) != DLC_OK)
        dlc_fuzz_fail("input info", DLC_OK, dlc_context_message(context));
    for (i = 0; i < dlc_model_output_count(model); ++i)
      if (dlc_model_output_info(model, i, &info) != DLC_OK ||
          dlc_model_find_output(model, info.name, &index) != DLC_OK)
        dlc_fuzz_fail("output info", DLC_OK, dlc_context_message(context));
    if (dlc_model_arena_size(model) <= DLC_FUZZ_MAX_ARENA)
      dlc_fuzz_run(context, model, &options, unchanged);
    else if (unchanged)
      dlc_fuzz_fail("the unpatched model", DLC_OK, "arena over the cap");
    else if (g_verbose)
      fprintf(stderr, "loaded; no session for an arena of %llu bytes\n",
              (unsigned long long)dlc_model_arena_size(model));
    dlc_model_destroy(model);
  }
  dlc_context_destroy(context);
  free(artifact);
  return 0;
}
