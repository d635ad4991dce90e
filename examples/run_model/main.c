/*===- main.c - run_model: load a .dlcx artifact and run it once ----------===*
 *
 * The smallest complete use of the dlc runtime, in plain C99: load an
 * artifact, describe its inputs and outputs, fill the inputs with a
 * deterministic pattern, run, and print a checksum of every output. The
 * same program runs CPU, Vulkan and CUDA artifacts; the runtime picks the
 * driver from the artifact.
 *
 *   usage: run_model [--cuda-library=PATH] MODEL.dlcx... [DEVICE_INDEX]
 *
 * Several models run one after the other, each in its own context.
 *
 * --cuda-library shows how an application tells a built-in driver
 * something: through the driver's options in dlc_context_options_t (the
 * runtime reads no DLC_* environment variable). The tests point it at a fake
 * libcuda.
 *
 * Built with -DDLC_STATIC_KERNELS, it runs CPU models whose kernels are
 * linked into the program instead of loaded from the artifact (for systems
 * without a dynamic loader): link the object and the kernel table that
 *   dlc-compile model.onnx --emit=obj -o model.o   (writes model.kernels.c)
 * write, and give it the artifact of the same model and target (the
 * driver refuses any other, by the object's fingerprint). Several models
 * in one program are each compiled with their own --symbol-prefix (which
 * names their kernels and their table) and listed in order as an X-macro:
 *   -D'DLC_LINKED(X)=X(first_) X(second_)'
 * runs the first model given with first_'s table, the second with second_'s
 * (without it, one model and the table dlc_kernels).
 *
 * Exit status 0 on success, 1 on any error (with the runtime's message).
 *===----------------------------------------------------------------------===*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlc/cuda_driver.h"
#include "dlc/runtime.h"

#ifdef DLC_STATIC_KERNELS
#include "dlc/cpu_driver.h"
/* Defined by the .kernels.c sources dlc-compile --emit=obj writes: one
 * table per model, named after its --symbol-prefix (dlc_ without one). */
#ifndef DLC_LINKED
#define DLC_LINKED(X) X(dlc_)
#endif
#define DLC_DECLARE_TABLE(prefix)                                              \
  extern const dlc_cpu_symbol_t prefix##kernels[];                             \
  extern const size_t prefix##kernel_count;                                    \
  extern const uint64_t prefix##kernels_fingerprint;
DLC_LINKED(DLC_DECLARE_TABLE)
typedef struct {
  const dlc_cpu_symbol_t *symbols;
  const size_t *count;
  const uint64_t *fingerprint;
} linked_table_t;
#define DLC_TABLE_ENTRY(prefix)                                                \
  {prefix##kernels, &prefix##kernel_count, &prefix##kernels_fingerprint},
static const linked_table_t kLinkedTables[] = {DLC_LINKED(DLC_TABLE_ENTRY)};
#endif

/* Reports a failed call with the status and the runtime's reason; returns
 * 0 so that callers can `return fail(...)`. */
static int fail(const char *what, dlc_status_t status, const char *message) {
  fprintf(stderr, "run_model: %s: %s: %s\n", what, dlc_status_name(status),
          message);
  return 0;
}

/* The name of an element type, from the artifact format's table. */
static const char *dtype_name(uint32_t dtype) {
  const dlcx_dtype_info_t *info = dlcx_dtype_info(dtype);
  return info ? info->name : "?";
}

static void print_info(const char *kind, uint32_t index,
                       const dlc_tensor_info_t *info) {
  uint32_t d;
  printf("%s %u: '%s' %s[", kind, (unsigned)index, info->name,
         dtype_name(info->dtype));
  for (d = 0; d < info->rank; ++d)
    printf("%s%lld", d ? ", " : "", (long long)info->dims[d]);
  printf("] (%lu bytes", (unsigned long)info->size_bytes);
  if (info->scale != 0.0f)
    printf(", quantized: scale %g, zero point %d", (double)info->scale,
           (int)info->zero_point);
  printf(")\n");
}

/* Fills input `input` with small values that every dtype represents
 * exactly, the same on every run and every machine. */
static void fill_input(void *data, const dlc_tensor_info_t *info,
                       uint32_t input) {
  size_t i, size = info->size_bytes;
  unsigned char *bytes = (unsigned char *)data;
  switch (info->dtype) {
  case DLCX_DTYPE_F32:
    for (i = 0; i < size / 4; ++i) {
      float value = (float)((int)((i * 7 + input * 3) % 17) - 8) * 0.25f;
      memcpy(bytes + i * 4, &value, 4);
    }
    break;
  case DLCX_DTYPE_F64:
    for (i = 0; i < size / 8; ++i) {
      double value = (double)((int)((i * 7 + input * 3) % 17) - 8) * 0.25;
      memcpy(bytes + i * 8, &value, 8);
    }
    break;
  case DLCX_DTYPE_F16:  /* 1.0 to 1.9375: sign 0, exponent 15 */
  case DLCX_DTYPE_BF16: /* 1.0 to 1.875: sign 0, exponent 127 */
    for (i = 0; i < size / 2; ++i) {
      unsigned bits = info->dtype == DLCX_DTYPE_F16
                          ? 0x3c00u | (unsigned)((i + input) % 16) << 6
                          : 0x3f80u | (unsigned)((i + input) % 16) << 3;
      bytes[i * 2] = (unsigned char)(bits & 0xff); /* little-endian */
      bytes[i * 2 + 1] = (unsigned char)(bits >> 8);
    }
    break;
  case DLCX_DTYPE_BOOL:
    for (i = 0; i < size; ++i)
      bytes[i] = (unsigned char)((i + input) % 2);
    break;
  default: /* integers: every byte small, so every element is too */
    for (i = 0; i < size; ++i)
      bytes[i] = (unsigned char)((i * 7 + input * 3) % 13);
    break;
  }
}

/* FNV-1a, 64 bits, of the output's bytes: equal outputs, equal sums. */
static unsigned long long checksum(const void *data, size_t size) {
  const unsigned char *bytes = (const unsigned char *)data;
  unsigned long long hash = 0xcbf29ce484222325ull;
  size_t i;
  for (i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

static void print_output(uint32_t index, const dlc_tensor_info_t *info,
                         const void *data) {
  printf("output %u '%s': checksum %016llx", (unsigned)index, info->name,
         checksum(data, info->size_bytes));
  if (info->dtype == DLCX_DTYPE_F32 && info->size_bytes >= 4) {
    const unsigned char *bytes = (const unsigned char *)data;
    size_t i, count = info->size_bytes / 4;
    double sum = 0.0;
    float first;
    for (i = 0; i < count; ++i) {
      float value;
      memcpy(&value, bytes + i * 4, 4);
      sum += value;
    }
    memcpy(&first, bytes, 4);
    printf(", sum %.6g, first %g", sum, (double)first);
  }
  printf("\n");
}

/* Sets every input, runs, reads and prints every output. */
static int run(dlc_model_t *model, dlc_session_t *session) {
  uint32_t inputs = dlc_model_input_count(model);
  uint32_t outputs = dlc_model_output_count(model);
  dlc_tensor_info_t info;
  dlc_status_t status;
  uint32_t i;
  void *data;

  for (i = 0; i < inputs; ++i) {
    dlc_model_input_info(model, i, &info);
    data = malloc(info.size_bytes ? info.size_bytes : 1);
    if (!data)
      return fail("out of memory", DLC_ERROR_OUT_OF_MEMORY, info.name);
    fill_input(data, &info, i);
    status = dlc_session_set_input(session, i, data, info.size_bytes);
    free(data);
    if (status != DLC_OK)
      return fail("dlc_session_set_input", status,
                  dlc_session_message(session));
  }
  status = dlc_session_run(session);
  if (status != DLC_OK)
    return fail("dlc_session_run", status, dlc_session_message(session));
  for (i = 0; i < outputs; ++i) {
    dlc_model_output_info(model, i, &info);
    data = malloc(info.size_bytes ? info.size_bytes : 1);
    if (!data)
      return fail("out of memory", DLC_ERROR_OUT_OF_MEMORY, info.name);
    status = dlc_session_get_output(session, i, data, info.size_bytes);
    if (status == DLC_OK)
      print_output(i, &info, data);
    free(data);
    if (status != DLC_OK)
      return fail("dlc_session_get_output", status,
                  dlc_session_message(session));
  }
  return 1;
}

/* Loads the artifact at `path` in a context of its own (with the linked
 * kernel table `table` in a static build), prints what it holds, runs it
 * once and prints its outputs. Returns 1 on success. */
static int run_file(const char *path, uint32_t table, uint32_t device,
                    dlc_cuda_driver_options_t *cuda_options) {
  dlc_context_options_t context_options;
  dlc_model_options_t model_options;
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session = NULL;
  dlc_tensor_info_t info;
  dlc_status_t status;
  int ok = 0;
  uint32_t i;
#ifdef DLC_STATIC_KERNELS
  dlc_driver_t *static_driver = NULL;
#endif

  memset(&model_options, 0, sizeof(model_options));
  model_options.struct_size = sizeof(model_options);
  model_options.device_index = device;
  memset(&context_options, 0, sizeof(context_options));
  context_options.struct_size = sizeof(context_options);
  context_options.cuda = cuda_options; /* allocator: the system one */
  status = dlc_context_create(&context_options, &context);
  if (status != DLC_OK)
    return fail("dlc_context_create", status, "");
#ifdef DLC_STATIC_KERNELS
  /* Registered after the built-in CPU driver, so it takes CPU artifacts;
   * it loads only the artifact compiled to the linked object. */
  if (table >= sizeof(kLinkedTables) / sizeof(kLinkedTables[0])) {
    fail("no linked kernel table for this model", DLC_ERROR_INVALID_ARGUMENT,
         path);
    goto done;
  }
  status = dlc_cpu_driver_create_linked(
      NULL, kLinkedTables[table].symbols, *kLinkedTables[table].count,
      *kLinkedTables[table].fingerprint, &static_driver);
  if (status == DLC_OK)
    status = dlc_context_register_driver(context, static_driver);
  if (status != DLC_OK) {
    fail("cannot register the linked kernels", status,
         dlc_context_message(context));
    goto done;
  }
#else
  (void)table;
#endif
  status = dlc_model_load_file(context, path, &model_options, &model);
  if (status != DLC_OK) {
    fail("cannot load the model", status, dlc_context_message(context));
    goto done;
  }
  printf("model: %s (driver %s, %u kernels, %u launches, arena %llu "
         "bytes)\n",
         path, dlc_model_driver_name(model),
         (unsigned)dlc_model_kernel_count(model),
         (unsigned)dlc_model_launch_count(model),
         (unsigned long long)dlc_model_arena_size(model));
  for (i = 0; i < dlc_model_input_count(model); ++i)
    if (dlc_model_input_info(model, i, &info) == DLC_OK)
      print_info("input", i, &info);
  for (i = 0; i < dlc_model_output_count(model); ++i)
    if (dlc_model_output_info(model, i, &info) == DLC_OK)
      print_info("output", i, &info);

  /* NULL options: the defaults (all CPU cores, no profiling). */
  status = dlc_session_create(model, NULL, &session);
  if (status != DLC_OK) {
    fail("cannot create a session", status, dlc_context_message(context));
    goto done;
  }
  ok = run(model, session);

done:
  /* Reverse order of creation; each destroy accepts NULL. */
  dlc_session_destroy(session);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
#ifdef DLC_STATIC_KERNELS
  dlc_driver_destroy(static_driver); /* after the context that used it */
#endif
  return ok;
}

/* Whether `s` is a device index (all digits) rather than a model's path. */
static int is_index(const char *s) {
  if (!*s)
    return 0;
  for (; *s; ++s)
    if (*s < '0' || *s > '9')
      return 0;
  return 1;
}

int main(int argc, char **argv) {
  static const char kCudaFlag[] = "--cuda-library=";
  dlc_cuda_driver_options_t cuda_options;
  uint32_t device = 0, models;
  int i;

  memset(&cuda_options, 0, sizeof(cuda_options));
  cuda_options.struct_size = sizeof(cuda_options);
  if (argc > 1 && strncmp(argv[1], kCudaFlag, sizeof(kCudaFlag) - 1) == 0) {
    cuda_options.library = argv[1] + sizeof(kCudaFlag) - 1;
    --argc;
    ++argv;
  }
  if (argc > 2 && is_index(argv[argc - 1])) {
    device = (uint32_t)atoi(argv[argc - 1]);
    --argc;
  }
  if (argc < 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: run_model [--cuda-library=PATH] MODEL.dlcx... "
                    "[DEVICE_INDEX]\n");
    return 1;
  }
  for (models = 0, i = 1; i < argc; ++i, ++models)
    if (!run_file(argv[i], models, device, &cuda_options))
      return 1;
  return 0;
}
