/*===- test_corruption.c - corrupt, truncated and hostile artifacts -------===*
 *
 * Starting from one valid artifact: every truncation, every single-bit flip
 * and a set of extreme values in every field of the header, the section
 * table and the tables (with the checksum recomputed, so the validation
 * logic is what rejects them), and one targeted case per validation rule
 * with the status and the message it must produce. A mutation may be
 * harmless (a flipped character in a name); what must never happen is a
 * crash, an out-of-bounds read (run it under ASan or valgrind), or an error
 * without a message.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include <stdint.h>

#include "artifact_builder.h"
#include "dlc/driver.h"
#include "dlc/runtime.h"
#include "stub_driver.h"
#include "test_models.h"
#include "test_util.h"

static uint8_t *g_valid;
static size_t g_size;
static dlc_context_t *g_stub;    /* validation only */
static dlc_context_t *g_context; /* the real CPU driver */
static long g_accepted, g_rejected;

/* Loads a copy in a block of exactly `size` bytes, so that ASan reports any
 * read past the end; on success also exercises what a caller would use.
 * Sessions are only made for arenas up to `max_arena` bytes: a mutated
 * arena_size can be valid and gigabytes large, and zeroing that takes a
 * while without testing anything new. */
static dlc_status_t try_load(dlc_context_t *context, const uint8_t *data,
                             size_t size, uint64_t max_arena) {
  dlc_model_t *model = NULL;
  dlc_status_t status;
  void *copy = NULL;
  CHECK(posix_memalign(&copy, DLCX_ALIGNMENT, size ? size : 1) == 0);
  memcpy(copy, data, size);
  status = dlc_model_load_memory(context, copy, size, NULL, &model);
  if (status == DLC_OK) {
    dlc_session_t *session = NULL;
    dlc_tensor_info_t info;
    uint32_t i;
    for (i = 0; i < dlc_model_input_count(model); ++i)
      CHECK(dlc_model_input_info(model, i, &info) == DLC_OK);
    for (i = 0; i < dlc_model_output_count(model); ++i)
      CHECK(dlc_model_output_info(model, i, &info) == DLC_OK);
    if (dlc_model_arena_size(model) <= max_arena) {
      /* A mutated cpu_scratch_size beyond the session's cap is refused. */
      dlc_status_t created = dlc_session_create(model, NULL, &session);
      if (created != DLC_OK) {
        CHECK(created == DLC_ERROR_UNSUPPORTED);
        CHECK_CONTAINS(dlc_context_message(context), "scratch per thread");
      }
      dlc_session_destroy(session);
    }
    dlc_model_destroy(model);
  } else {
    CHECK(model == NULL);
    CHECK(status == DLC_ERROR_INVALID_ARTIFACT ||
          status == DLC_ERROR_UNSUPPORTED || status == DLC_ERROR_UNAVAILABLE);
    CHECK(dlc_context_message(context)[0] != '\0');
  }
  free(copy);
  return status;
}

/* Validates `data`; when validation passes, loads it for real as well. */
static void try_both(const uint8_t *data, size_t size) {
  if (try_load(g_stub, data, size, UINT64_MAX) == DLC_OK) {
    ++g_accepted;
    try_load(g_context, data, size, 1u << 24);
  } else {
    ++g_rejected;
  }
}

static void test_truncations(void) {
  size_t length;
  for (length = 0; length < g_size; ++length)
    CHECK(try_load(g_stub, g_valid, length, 0) == DLC_ERROR_INVALID_ARTIFACT);
  /* And longer than it says. */
  {
    uint8_t *longer = (uint8_t *)calloc(1, g_size + 64);
    CHECK(longer);
    memcpy(longer, g_valid, g_size);
    CHECK(try_load(g_stub, longer, g_size + 1, 0) ==
          DLC_ERROR_INVALID_ARTIFACT);
    CHECK(try_load(g_stub, longer, g_size + 64, 0) ==
          DLC_ERROR_INVALID_ARTIFACT);
    CHECK_CONTAINS(dlc_context_message(g_stub), "file_size");
    free(longer);
  }
}

/* The bytes of everything but the code and the constants. */
static size_t metadata_end(void) {
  return (size_t)dlc_ab_section(g_valid, DLCX_SECTION_CODE)->offset;
}

static void test_bit_flips(void) {
  uint8_t *data = (uint8_t *)malloc(g_size);
  size_t end = metadata_end(), i;
  int bit;
  CHECK(data);
  for (i = 0; i < end; ++i) {
    for (bit = 0; bit < 8; ++bit) {
      memcpy(data, g_valid, g_size);
      data[i] ^= (uint8_t)(1u << bit);
      /* The first 16 bytes are not covered by the checksum. */
      if (i >= DLCX_CHECKSUM_START)
        dlc_ab_reseal(data, g_size);
      try_both(data, g_size);
    }
  }
  /* Without resealing, every flip anywhere must be caught. */
  for (i = DLCX_CHECKSUM_START; i < g_size; i += 7) {
    memcpy(data, g_valid, g_size);
    data[i] ^= 0x10;
    CHECK(try_load(g_stub, data, g_size, 0) == DLC_ERROR_INVALID_ARTIFACT);
  }
  free(data);
}

static void test_field_values(void) {
  static const uint32_t values32[] = {
      0, 1, 63, 64, 65, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
  uint64_t values64[7];
  uint8_t *data = (uint8_t *)malloc(g_size);
  size_t end = metadata_end(), i, v;
  CHECK(data);
  values64[0] = UINT64_MAX;
  values64[1] = (uint64_t)1 << 63;
  values64[2] = (uint64_t)1 << 32;
  values64[3] = g_size;
  values64[4] = g_size + 64;
  values64[5] = g_size - 64;
  values64[6] = UINT64_MAX - 63;
  for (i = DLCX_CHECKSUM_START; i + 4 <= end; i += 4) {
    for (v = 0; v < sizeof(values32) / sizeof(values32[0]); ++v) {
      memcpy(data, g_valid, g_size);
      memcpy(data + i, &values32[v], 4);
      dlc_ab_reseal(data, g_size);
      try_both(data, g_size);
    }
    if (i % 8 == 0 && i + 8 <= end) {
      for (v = 0; v < sizeof(values64) / sizeof(values64[0]); ++v) {
        memcpy(data, g_valid, g_size);
        memcpy(data + i, &values64[v], 8);
        dlc_ab_reseal(data, g_size);
        try_both(data, g_size);
      }
    }
  }
  free(data);
}

/*===--- one case per rule ----------------------------------------------===*/

typedef struct view_t {
  uint8_t *data;
  dlcx_header_t *header;
  dlcx_section_t *sections;
  dlcx_model_t *model;
  char *strings;
  dlcx_section_t *strings_section;
  dlcx_tensor_t *tensors; /* x y sum reversed out hits scale n */
  dlcx_section_t *tensors_section;
  dlcx_kernel_t *kernels; /* add reverse scale zero count */
  dlcx_launch_t *launches;
  uint32_t *bindings;
  uint32_t *io;
  dlcx_kernel_limits_t *grids;
  uint64_t *args; /* add: 3, reverse: 3, ... */
  dlcx_section_t *args_section;
} view_t;

static void *section_data(uint8_t *data, uint32_t kind) {
  return data + dlc_ab_section(data, kind)->offset;
}

typedef void (*mutate_fn)(view_t *v);

static void expect(mutate_fn mutate, int reseal, dlc_status_t expected,
                   const char *part) {
  view_t v;
  v.data = (uint8_t *)malloc(g_size);
  CHECK(v.data);
  memcpy(v.data, g_valid, g_size);
  v.header = (dlcx_header_t *)v.data;
  v.sections = (dlcx_section_t *)(v.data + v.header->section_table_offset);
  v.model = (dlcx_model_t *)section_data(v.data, DLCX_SECTION_MODEL);
  v.strings = (char *)section_data(v.data, DLCX_SECTION_STRINGS);
  v.strings_section = dlc_ab_section(v.data, DLCX_SECTION_STRINGS);
  v.tensors = (dlcx_tensor_t *)section_data(v.data, DLCX_SECTION_TENSORS);
  v.tensors_section = dlc_ab_section(v.data, DLCX_SECTION_TENSORS);
  v.kernels = (dlcx_kernel_t *)section_data(v.data, DLCX_SECTION_KERNELS);
  v.launches = (dlcx_launch_t *)section_data(v.data, DLCX_SECTION_LAUNCHES);
  v.bindings = (uint32_t *)section_data(v.data, DLCX_SECTION_BINDINGS);
  v.io = (uint32_t *)section_data(v.data, DLCX_SECTION_IO);
  v.grids =
      (dlcx_kernel_limits_t *)section_data(v.data, DLCX_SECTION_KERNEL_LIMITS);
  v.args = (uint64_t *)section_data(v.data, DLCX_SECTION_KERNEL_ARGS);
  v.args_section = dlc_ab_section(v.data, DLCX_SECTION_KERNEL_ARGS);
  mutate(&v);
  if (reseal)
    dlc_ab_reseal(v.data, g_size);
  {
    dlc_status_t status = try_load(g_stub, v.data, g_size, 0);
    if (status != expected || !strstr(dlc_context_message(g_stub), part)) {
      fprintf(stderr, "expected %s with '%s', got %s: %s\n",
              dlc_status_name(expected), part, dlc_status_name(status),
              dlc_context_message(g_stub));
      exit(1);
    }
  }
  free(v.data);
}

#define RULE(name, body)                                                       \
  static void name(view_t *v) { body; }

RULE(bad_magic, v->header->magic = 0x464c457fu)
RULE(new_major, v->header->version_major = 2)
RULE(new_minor, v->header->version_minor = DLCX_VERSION_MINOR + 1)
RULE(bad_header_size, v->header->header_size = 72)
RULE(bad_file_size, v->header->file_size += 64)
RULE(bad_checksum, v->header->checksum ^= 1)
RULE(header_flags, v->header->flags = 1)
RULE(bad_target, v->header->target = 9)
RULE(target_sm_cpu, v->header->target_sm = 87)
RULE(cubin_bit_alone, v->header->target_features |= DLCX_FEATURE_CUDA_CUBIN)
RULE(table_outside, v->header->section_table_offset = g_size)
RULE(table_too_long, v->header->section_count = 100000)
RULE(table_in_header, v->header->section_table_offset = 8)
RULE(unknown_kind, v->sections[1].kind = 42)
RULE(duplicate_kind, v->sections[2].kind = v->sections[1].kind)
RULE(section_flags, v->sections[3].flags = 4)
RULE(section_misaligned, v->sections[3].offset += 8)
RULE(section_past_end, v->sections[3].size = g_size)
RULE(section_overlap, v->tensors_section->offset = v->strings_section->offset)
RULE(section_missing, v->header->section_count = 6)
RULE(model_entries, dlc_ab_section(v->data, DLCX_SECTION_MODEL)->size = 0)
RULE(tensors_partial, v->tensors_section->size -= 8)
RULE(io_count, v->model->input_count += 1)
RULE(model_name, v->model->name = 1u << 30)
RULE(scratch_in_1_0, v->model->cpu_scratch_size = 64;
     v->header->version_minor = 0)
RULE(unterminated, v->strings[v->strings_section->size - 1] = 'x')
RULE(tensor_name, v->tensors[2].name = (uint32_t)v->strings_section->size)
RULE(dtype_unknown, v->tensors[0].dtype = 99)
RULE(dtype_string, v->tensors[0].dtype = 8)
RULE(rank_too_big, v->tensors[0].rank = 9)
RULE(dim_negative, v->tensors[0].dims[0] = -1)
RULE(dim_beyond_rank, v->tensors[0].dims[3] = 1)
RULE(dims_overflow, v->tensors[0].rank = 3;
     v->tensors[0].dims[1] = (int64_t)1 << 40;
     v->tensors[0].dims[2] = (int64_t)1 << 40)
RULE(bytes_overflow, v->tensors[0].rank = 2;
     v->tensors[0].dims[1] = (int64_t)1 << 58)
RULE(size_mismatch, v->tensors[0].size += 4)
RULE(offset_misaligned, v->tensors[1].offset += 4)
RULE(offset_past_arena, v->tensors[5].offset = v->model->arena_size)
RULE(offset_huge, v->tensors[5].offset = UINT64_MAX - 63)
RULE(storage_unknown, v->tensors[2].storage = 3)
RULE(constant_outside, v->tensors[6].offset += 4096)
RULE(tensor_flags, v->tensors[2].flags = 6)
RULE(reused_not_input, v->tensors[2].flags = DLCX_TENSOR_INPUT_REUSED)
RULE(flags_before_1_5, v->header->version_minor = 4;
     v->tensors[0].flags = DLCX_TENSOR_INPUT_REUSED)
RULE(quant_axis_bad, v->tensors[0].quant_axis = 1)
RULE(quant_axis_negative, v->tensors[0].quant_axis = -2)
RULE(quant_params_outside, v->tensors[0].quant_axis = 0;
     v->tensors[0].quant_params = 0)
RULE(code_format_unknown, v->kernels[1].code_format = 9)
RULE(code_outside, v->kernels[2].code_size += 1)
RULE(code_offset_huge, v->kernels[2].code_offset = UINT64_MAX)
RULE(workgroup_zero, v->kernels[3].workgroup_size[2] = 0)
RULE(launch_kernel, v->launches[0].kernel = 99)
RULE(launch_binding_count, v->launches[1].binding_count = 2)
RULE(launch_bindings_outside, v->launches[2].binding_begin = 1000)
RULE(launch_bindings_wrap, v->launches[2].binding_begin = 0xfffffffeu)
RULE(grid_zero, v->launches[0].grid[1] = 0)
RULE(grid_overflow, v->launches[0].grid[0] = 65536;
     v->launches[0].grid[1] = 65537)
/* A launch grid the kernel was not compiled for (a CPU kernel addresses
 * its tiles from the workgroup id: 2^31 of them ran far past its buffers). */
RULE(grid_not_compiled, v->launches[0].grid[0] = 0x80000000u)
RULE(kernel_grid_zero, v->grids[1].grid[2] = 0)
RULE(limits_in_1_1, v->header->version_minor = 1)
RULE(args_count, v->args_section->size -= 8)
/* Buffer 1 of dlc_test_reverse (kernel 1), "reversed". */
RULE(arg_size, v->args[4] += 4)
RULE(binding_tensor, v->bindings[0] = 1000)
RULE(io_tensor, v->io[0] = 1000)
RULE(io_constant, v->io[3] = 6)

static void test_rules(void) {
  const dlc_status_t invalid = DLC_ERROR_INVALID_ARTIFACT;
  expect(bad_magic, 0, invalid, "magic is 0x464c457f");
  expect(new_major, 0, DLC_ERROR_UNSUPPORTED, "format version 2.");
  expect(new_minor, 0, DLC_ERROR_UNSUPPORTED, "is not supported");
  expect(bad_header_size, 1, invalid, "header_size is 72");
  expect(bad_file_size, 1, invalid, "file_size is");
  expect(bad_checksum, 0, invalid, "checksum");
  expect(header_flags, 1, invalid, "flags/reserved are 0x1/");
  expect(bad_target, 1, invalid, "target is 9");
  expect(target_sm_cpu, 1, invalid,
         "target_sm is 87 in a cpu artifact, must be 0");
  expect(cubin_bit_alone, 1, invalid,
         "target_features has DLCX_FEATURE_CUDA_CUBIN, but the CUBIN section "
         "is missing");
  expect(table_outside, 1, invalid, "section table");
  expect(table_too_long, 1, invalid, "100000 entries");
  expect(table_in_header, 1, invalid, "section table at offset 8");
  expect(unknown_kind, 1, invalid, "kind 42");
  expect(duplicate_kind, 1, invalid, "a second STRINGS section");
  expect(section_flags, 1, invalid, "flags is 0x4");
  expect(section_misaligned, 1, invalid, "is not a multiple of 64");
  expect(section_past_end, 1, invalid, "ends past");
  expect(section_overlap, 1, invalid, "overlap");
  expect(section_missing, 1, invalid, "the IO section is missing");
  expect(model_entries, 1, invalid, "MODEL section holds 0 entries");
  expect(tensors_partial, 1, invalid, "not a multiple of its entry size 120");
  expect(io_count, 1, invalid, "input_count 3 + output_count 2");
  expect(model_name, 1, invalid, "model name/producer");
  expect(scratch_in_1_0, 1, invalid, "must be 0 in a version 1.0");
  expect(unterminated, 1, invalid, "name");
  expect(tensor_name, 1, invalid, "tensor 2: name");
  expect(dtype_unknown, 1, invalid, "tensor 0 ('x'): dtype 99");
  expect(dtype_string, 1, invalid, "dtype 8");
  expect(rank_too_big, 1, invalid, "rank 9");
  expect(dim_negative, 1, invalid, "dims[0] is -1");
  expect(dim_beyond_rank, 1, invalid, "dims[3] is 1 beyond rank 1");
  expect(dims_overflow, 1, invalid, "overflows at dims[2]");
  expect(bytes_overflow, 1, invalid, "overflow the byte size");
  expect(size_mismatch, 1, invalid, "size is 244 bytes");
  expect(offset_misaligned, 1, invalid, "tensor 1 ('y'): offset");
  expect(offset_past_arena, 1, invalid, "exceeds the arena");
  expect(offset_huge, 1, invalid, "exceeds the arena");
  expect(storage_unknown, 1, invalid, "storage 3");
  expect(constant_outside, 1, invalid, "CONSTANTS section");
  expect(tensor_flags, 1, invalid, "flags 0x6 has bits");
  expect(reused_not_input, 1, invalid, "INPUT_REUSED on a tensor that is no");
  expect(flags_before_1_5, 1, invalid, "tensor 0 ('x'): flags 0x1 has bits");
  expect(quant_axis_bad, 1, invalid, "quant_axis 1");
  expect(quant_axis_negative, 1, invalid, "quant_axis -2");
  expect(quant_params_outside, 1, invalid, "quant_params");
  expect(code_format_unknown, 1, invalid, "code_format 9");
  expect(code_outside, 1, invalid, "exceeds the CODE section");
  expect(code_offset_huge, 1, invalid, "exceeds the CODE section");
  expect(workgroup_zero, 1, invalid, "workgroup_size[2] is 0");
  expect(launch_kernel, 1, invalid, "launch 0: kernel 99");
  expect(launch_binding_count, 1, invalid,
         "binding_count 2 but kernel 'dlc_test_reverse' takes 3");
  expect(launch_bindings_outside, 1, invalid, "launch 2: bindings [1000");
  expect(launch_bindings_wrap, 1, invalid, "launch 2: bindings");
  expect(grid_zero, 1, invalid, "grid[1] is 0");
  expect(grid_overflow, 1, invalid, "more than 2^32-1 workgroups");
  expect(grid_not_compiled, 1, invalid,
         "launch 0: grid 2147483648x1x1 but kernel 'dlc_test_add' was "
         "compiled for 60x1x1");
  expect(kernel_grid_zero, 1, invalid,
         "kernel 1 ('dlc_test_reverse'): grid[2] is 0");
  expect(limits_in_1_1, 1, invalid,
         "a KERNEL_LIMITS section in a version 1.1 artifact");
  expect(args_count, 1, invalid,
         "KERNEL_ARGS holds 10 sizes, but the kernels take 11 buffers");
  expect(arg_size, 1, invalid,
         "launch 1: buffer 1 is tensor 3 of 240 bytes, but kernel "
         "'dlc_test_reverse' takes 244 there");
  expect(binding_tensor, 1, invalid, "binding 0: tensor 1000");
  expect(io_tensor, 1, invalid, "input 0: tensor 1000");
  expect(io_constant, 1, invalid, "output 1 ('scale')");
}

/* The CUBIN section: CUDA only, and present exactly when the feature bit
 * says so. */
static void test_cubin_rules(void) {
  static const uint8_t cubin[64] = {0x7f, 'E', 'L', 'F'};
  uint8_t *data;
  size_t size;
  dlc_ab_t *b = dlc_ab_create(DLCX_TARGET_CPU, dlc_test_host_isa());
  dlc_ab_cubin(b, cubin, sizeof(cubin));
  dlc_ab_finish(b, &data, &size);
  dlc_ab_destroy(b);
  CHECK(try_load(g_stub, data, size, 0) == DLC_ERROR_INVALID_ARTIFACT);
  CHECK_CONTAINS(dlc_context_message(g_stub),
                 "a CUBIN section in a cpu artifact");
  dlc_ab_free(data);

  b = dlc_ab_create(DLCX_TARGET_CUDA, 0);
  dlc_ab_target_sm(b, 87);
  dlc_ab_cubin(b, cubin, sizeof(cubin));
  dlc_ab_finish(b, &data, &size);
  dlc_ab_destroy(b);
  ((dlcx_header_t *)data)->target_features = 0;
  dlc_ab_reseal(data, size);
  CHECK(try_load(g_stub, data, size, 0) == DLC_ERROR_INVALID_ARTIFACT);
  CHECK_CONTAINS(dlc_context_message(g_stub),
                 "a CUBIN section, but target_features lacks "
                 "DLCX_FEATURE_CUDA_CUBIN");
  dlc_ab_free(data);
}

/* The CPU_CODE_ID section: CPU only, since 1.3, eight bytes. */
static void test_code_id_rules(void) {
  static const uint64_t id[2] = {0x1234, 0};
  static const struct {
    uint32_t target, minor;
    uint64_t bytes;
    const char *message;
  } cases[] = {
      {DLCX_TARGET_VULKAN, DLCX_VERSION_MINOR, 8,
       "a CPU_CODE_ID section in a vulkan artifact"},
      {DLCX_TARGET_CPU, 2, 8,
       "a CPU_CODE_ID section in a version 1.2 artifact"},
      {DLCX_TARGET_CPU, DLCX_VERSION_MINOR, 4,
       "CPU_CODE_ID section is 4 bytes, expected 8"},
      {DLCX_TARGET_CPU, DLCX_VERSION_MINOR, 16,
       "CPU_CODE_ID section is 16 bytes, expected 8"},
  };
  size_t i;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    uint8_t *data;
    size_t size;
    dlc_ab_t *b = dlc_ab_create(
        cases[i].target,
        cases[i].target == DLCX_TARGET_CPU ? dlc_test_host_isa() : 0);
    dlc_ab_cpu_code_id(b, id, cases[i].bytes);
    dlc_ab_finish(b, &data, &size);
    dlc_ab_destroy(b);
    ((dlcx_header_t *)data)->version_minor = (uint16_t)cases[i].minor;
    dlc_ab_reseal(data, size);
    CHECK(try_load(g_stub, data, size, 0) == DLC_ERROR_INVALID_ARTIFACT);
    CHECK_CONTAINS(dlc_context_message(g_stub), cases[i].message);
    dlc_ab_free(data);
  }
}

/* Linked code (DLCX_CODE_LINKED): since 1.4, CPU artifacts with a
 * CPU_CODE_ID, no bytes in CODE. */
static void test_linked_code_rules(void) {
  static const uint64_t id = 0x1234;
  static const struct {
    uint32_t target, minor;
    int code_id;
    uint64_t code_size;
    const char *message;
  } cases[] = {
      {DLCX_TARGET_CPU, 3, 1, 0,
       "kernel 0 ('k'): linked code in a version 1.3 artifact (it exists "
       "since 1.4)"},
      {DLCX_TARGET_CPU, DLCX_VERSION_MINOR, 0, 0,
       "kernel 0 ('k'): linked code needs a CPU artifact with a CPU_CODE_ID "
       "section"},
      {DLCX_TARGET_VULKAN, DLCX_VERSION_MINOR, 0, 0,
       "kernel 0 ('k'): linked code needs a CPU artifact with a CPU_CODE_ID "
       "section"},
      {DLCX_TARGET_CPU, DLCX_VERSION_MINOR, 1, 16,
       "kernel 0 ('k'): linked code has no bytes in CODE, but code_offset 0 "
       "and code_size 16"},
  };
  static const uint8_t code[16];
  size_t i;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    uint8_t *data;
    size_t size;
    dlc_ab_t *b = dlc_ab_create(
        cases[i].target,
        cases[i].target == DLCX_TARGET_CPU ? dlc_test_host_isa() : 0);
    if (cases[i].code_size)
      dlc_ab_code(b, code, cases[i].code_size);
    dlc_ab_kernel(b, "k", DLCX_CODE_LINKED, 0, cases[i].code_size, 0);
    if (cases[i].code_id)
      dlc_ab_cpu_code_id(b, &id, sizeof(id));
    dlc_ab_finish(b, &data, &size);
    dlc_ab_destroy(b);
    ((dlcx_header_t *)data)->version_minor = (uint16_t)cases[i].minor;
    dlc_ab_reseal(data, size);
    CHECK(try_load(g_stub, data, size, 0) == DLC_ERROR_INVALID_ARTIFACT);
    CHECK_CONTAINS(dlc_context_message(g_stub), cases[i].message);
    dlc_ab_free(data);
  }
}

int main(void) {
  dlc_driver_t stub;
  dlc_test_chain_t chain;
  uint8_t *code;
  size_t code_size;

  code = dlc_test_read_kernels(&code_size);
  CHECK(code);
  memset(&chain, 0, sizeof(chain));
  chain.code = code;
  chain.code_size = code_size;
  dlc_test_build_chain(&chain, &g_valid, &g_size);

  dlc_test_stub_driver(DLCX_TARGET_CPU, &stub);
  CHECK_OK(dlc_context_create(NULL, &g_stub), "");
  CHECK_OK(dlc_context_register_driver(g_stub, &stub), "");
  CHECK_OK(dlc_context_create(NULL, &g_context), "");
  CHECK(try_load(g_stub, g_valid, g_size, UINT64_MAX) == DLC_OK);
  CHECK(try_load(g_context, g_valid, g_size, UINT64_MAX) == DLC_OK);

  test_rules();
  test_cubin_rules();
  test_code_id_rules();
  test_linked_code_rules();
  test_truncations();
  test_bit_flips();
  test_field_values();
  printf("test_corruption: %ld mutations rejected, %ld accepted (harmless "
         "ones: names, padding, unused values), no crash\n",
         g_rejected, g_accepted);

  dlc_context_destroy(g_context);
  dlc_context_destroy(g_stub);
  dlc_ab_free(g_valid);
  free(code);
  return 0;
}
