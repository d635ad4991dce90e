/*===- fuzz_cpu_artifact.c - the artifact fuzz_cpu_loader patches ---------===*
 *
 * Builds the fuzzed model with the test artifact builder, marks the bytes
 * that fuzz_cpu_loader.c's threat model puts in the code's trust domain,
 * and applies an input's patches around them.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "fuzz_cpu_artifact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_builder.h"
#include "test_kernels.h"
#include "test_models.h"

static void dlc_fuzz_cpu_mark(dlc_fuzz_cpu_t *fuzz, uint64_t offset,
                              uint64_t size) {
  uint64_t i;
  for (i = offset; i < offset + size && i < fuzz->size; ++i)
    fuzz->protect[i] = 1;
}

/* The code's trust domain in the unpatched artifact: where the section
 * table is, the whole entries of CODE, KERNELS, KERNEL_LIMITS and
 * KERNEL_ARGS and the contents of those four sections, the kind, flags
 * and offset of STRINGS, and each kernel's name with its NUL. */
static void dlc_fuzz_cpu_mark_trusted(dlc_fuzz_cpu_t *fuzz) {
  static const uint32_t code_kinds[] = {DLCX_SECTION_CODE, DLCX_SECTION_KERNELS,
                                        DLCX_SECTION_KERNEL_LIMITS,
                                        DLCX_SECTION_KERNEL_ARGS};
  const dlcx_section_t *s;
  const dlcx_kernel_t *kernels;
  const char *strings;
  uint64_t kernel_count, k;
  size_t i;

  dlc_fuzz_cpu_mark(fuzz, offsetof(dlcx_header_t, section_table_offset), 8);
  for (i = 0; i < sizeof(code_kinds) / sizeof(code_kinds[0]); ++i) {
    s = dlc_ab_section(fuzz->base, code_kinds[i]);
    dlc_fuzz_cpu_mark(fuzz, (uint64_t)((const uint8_t *)s - fuzz->base),
                      sizeof(*s));
    dlc_fuzz_cpu_mark(fuzz, s->offset, s->size);
  }
  s = dlc_ab_section(fuzz->base, DLCX_SECTION_STRINGS);
  dlc_fuzz_cpu_mark(fuzz, (uint64_t)((const uint8_t *)s - fuzz->base),
                    offsetof(dlcx_section_t, size));
  strings = (const char *)fuzz->base + s->offset;
  s = dlc_ab_section(fuzz->base, DLCX_SECTION_KERNELS);
  kernels = (const dlcx_kernel_t *)(fuzz->base + s->offset);
  kernel_count = s->size / sizeof(dlcx_kernel_t);
  for (k = 0; k < kernel_count; ++k)
    dlc_fuzz_cpu_mark(
        fuzz, (uint64_t)(strings + kernels[k].name - (const char *)fuzz->base),
        strlen(strings + kernels[k].name) + 1);
  for (i = 0; i < fuzz->size; ++i)
    fuzz->protected_count += fuzz->protect[i];
}

int dlc_fuzz_cpu_build(dlc_fuzz_cpu_t *fuzz) {
  int64_t dims[1] = {DLC_FUZZ_CPU_N};
  int64_t one[1] = {1};
  float scale = DLC_FUZZ_CPU_SCALE;
  float bias[DLC_FUZZ_CPU_N];
  uint32_t x, y, sum, out, out2, z, c_scale, c_bias;
  uint32_t k_add, k_scale, k_zero, bindings[3], i;
  uint64_t code_offset;
  size_t code_size;
  uint8_t *code;
  dlc_ab_t *b;

  memset(fuzz, 0, sizeof(*fuzz));
  code = dlc_test_read_kernels(&code_size);
  if (!code)
    return 0;
  for (i = 0; i < DLC_FUZZ_CPU_N; ++i)
    bias[i] = DLC_FUZZ_CPU_BIAS(i);

  b = dlc_ab_create(DLCX_TARGET_CPU, dlc_test_host_isa());
  code_offset = dlc_ab_code(b, code, code_size);
  /* The kernels ignore it: a fuzzed size changes nothing they touch. */
  dlc_ab_cpu_scratch(b, 64);
  x = dlc_ab_arena_tensor(b, "x", DLCX_DTYPE_F32, 1, dims);
  y = dlc_ab_arena_tensor(b, "y", DLCX_DTYPE_F32, 1, dims);
  sum = dlc_ab_arena_tensor(b, "sum", DLCX_DTYPE_F32, 1, dims);
  out = dlc_ab_arena_tensor(b, "out", DLCX_DTYPE_F32, 1, dims);
  out2 = dlc_ab_arena_tensor(b, "out2", DLCX_DTYPE_F32, 1, dims);
  z = dlc_ab_arena_tensor(b, "z", DLCX_DTYPE_U32, 1, dims);
  c_scale = dlc_ab_constant_tensor(b, "scale", DLCX_DTYPE_F32, 1, one, &scale);
  c_bias = dlc_ab_constant_tensor(b, "bias", DLCX_DTYPE_F32, 1, dims, bias);
  /* Kernels that depend on nothing but their grid and buffers (not
   * dlc_test_reverse, which reads its length from a buffer, nor
   * dlc_test_count, which fills DLC_TEST_SCRATCH_SIZE bytes of scratch). */
  k_add = dlc_ab_kernel(b, "dlc_test_add", DLCX_CODE_ELF_SHARED, code_offset,
                        code_size, 3);
  k_scale = dlc_ab_kernel(b, "dlc_test_scale", DLCX_CODE_ELF_SHARED,
                          code_offset, code_size, 3);
  k_zero = dlc_ab_kernel(b, "dlc_test_zero", DLCX_CODE_ELF_SHARED, code_offset,
                         code_size, 1);

  /* N workgroups each, in three shapes: KERNEL_LIMITS records the grid of
   * each kernel's first launch. */
  bindings[0] = x, bindings[1] = y, bindings[2] = sum;
  dlc_ab_launch(b, k_add, bindings, 3, DLC_FUZZ_CPU_N, 1, 1);
  bindings[0] = sum, bindings[1] = c_scale, bindings[2] = out;
  dlc_ab_launch(b, k_scale, bindings, 3, 4, 3, DLC_FUZZ_CPU_N / 12);
  bindings[0] = out, bindings[1] = c_bias, bindings[2] = out2;
  dlc_ab_launch(b, k_add, bindings, 3, DLC_FUZZ_CPU_N, 1, 1);
  dlc_ab_launch(b, k_zero, &z, 1, 2, DLC_FUZZ_CPU_N / 2, 1);
  dlc_ab_input(b, x);
  dlc_ab_input(b, y);
  dlc_ab_output(b, out2);
  dlc_ab_output(b, z);
  dlc_ab_finish(b, &fuzz->base, &fuzz->size);
  dlc_ab_destroy(b);
  free(code);

  fuzz->protect = (uint8_t *)calloc(1, fuzz->size);
  if (!fuzz->protect) {
    fprintf(stderr, "fuzz_cpu_artifact: out of memory\n");
    dlc_fuzz_cpu_free(fuzz);
    return 0;
  }
  dlc_fuzz_cpu_mark_trusted(fuzz);
  return 1;
}

void dlc_fuzz_cpu_free(dlc_fuzz_cpu_t *fuzz) {
  dlc_ab_free(fuzz->base);
  free(fuzz->protect);
  memset(fuzz, 0, sizeof(*fuzz));
}

void dlc_fuzz_cpu_patch(const dlc_fuzz_cpu_t *fuzz, const uint8_t *input,
                        size_t input_size, uint8_t *out,
                        dlc_fuzz_cpu_options_t *out_options) {
  static const uint32_t threads[4] = {1, 2, 3, 1};
  size_t at = 1;
  uint64_t file_size = fuzz->size;

  memcpy(out, fuzz->base, fuzz->size);
  out_options->thread_count = input_size ? threads[input[0] & 3] : 1;
  out_options->enable_profiling = input_size ? (input[0] >> 2) & 1 : 0;
  while (at + 3 <= input_size) {
    size_t offset = (size_t)(input[at] | (uint32_t)input[at + 1] << 8);
    size_t count = 1 + (input[at + 2] & 7), i;
    at += 3;
    offset %= fuzz->size;
    for (i = 0; i < count && at < input_size; ++i, ++at)
      if (offset + i < fuzz->size && !fuzz->protect[offset + i])
        out[offset + i] = input[at];
  }
  memcpy(out + offsetof(dlcx_header_t, file_size), &file_size, 8);
  dlc_ab_reseal(out, fuzz->size);
}
