/*===- test_models.c - the artifacts the runtime tests run ----------------===*/

#include "test_models.h"

#include <stdio.h>
#include <stdlib.h>

#include "artifact_builder.h"
#include "test_kernels.h"

uint64_t dlc_test_host_isa(void) {
#if defined(__x86_64__)
  return DLCX_FEATURE_CPU_X86_64;
#elif defined(__aarch64__)
  return DLCX_FEATURE_CPU_AARCH64;
#elif defined(__arm__)
  return DLCX_FEATURE_CPU_ARMV7;
#elif defined(__riscv)
  return DLCX_FEATURE_CPU_RISCV64;
#else
  return 0;
#endif
}

void dlc_test_build_chain(const dlc_test_chain_t *chain, uint8_t **out_data,
                          size_t *out_size) {
  uint32_t gx = chain->grid[0] ? chain->grid[0] : 60;
  uint32_t gy = chain->grid[0] ? chain->grid[1] : 1;
  uint32_t gz = chain->grid[0] ? chain->grid[2] : 1;
  uint32_t n = gx * gy * gz;
  float scale = chain->scale != 0.0f ? chain->scale : 2.0f;
  int64_t dims[1];
  int64_t one[1] = {1};
  dlc_ab_t *b = dlc_ab_create(
      DLCX_TARGET_CPU, chain->features ? chain->features : dlc_test_host_isa());
  uint32_t format = chain->linked ? DLCX_CODE_LINKED : DLCX_CODE_ELF_SHARED;
  uint64_t code_size = chain->linked ? 0 : chain->code_size;
  uint64_t code =
      chain->linked ? 0 : dlc_ab_code(b, chain->code, chain->code_size);
  uint32_t x, y, sum, reversed, out, hits, c_scale, c_n;
  uint32_t k_add, k_reverse, k_scale, k_zero, k_count;
  uint32_t bindings[3];

  dlc_ab_cpu_scratch(b, DLC_TEST_SCRATCH_SIZE);
  dims[0] = n;
  x = dlc_ab_arena_tensor(b, "x", DLCX_DTYPE_F32, 1, dims);
  y = dlc_ab_arena_tensor(b, "y", DLCX_DTYPE_F32, 1, dims);
  sum = dlc_ab_arena_tensor(b, "sum", DLCX_DTYPE_F32, 1, dims);
  reversed = dlc_ab_arena_tensor(b, "reversed", DLCX_DTYPE_F32, 1, dims);
  out = dlc_ab_arena_tensor(b, "out", DLCX_DTYPE_F32, 1, dims);
  hits = dlc_ab_arena_tensor(b, "hits", DLCX_DTYPE_U32, 1, dims);
  c_scale = dlc_ab_constant_tensor(b, "scale", DLCX_DTYPE_F32, 1, one, &scale);
  c_n = dlc_ab_constant_tensor(b, "n", DLCX_DTYPE_U32, 0, NULL, &n);

  k_add = dlc_ab_kernel(b, "dlc_test_add", format, code, code_size, 3);
  k_reverse = dlc_ab_kernel(
      b, chain->serial_reverse ? "dlc_test_reverse_all" : "dlc_test_reverse",
      format, code, code_size, 3);
  k_scale = dlc_ab_kernel(
      b, chain->scale_kernel ? chain->scale_kernel : "dlc_test_scale", format,
      code, code_size, 3);
  k_zero = dlc_ab_kernel(b, "dlc_test_zero", format, code, code_size, 1);
  k_count = dlc_ab_kernel(b, "dlc_test_count", format, code, code_size, 1);

  bindings[0] = x, bindings[1] = y, bindings[2] = sum;
  dlc_ab_launch(b, k_add, bindings, 3, gx, gy, gz);
  bindings[0] = sum, bindings[1] = reversed, bindings[2] = c_n;
  if (chain->serial_reverse)
    dlc_ab_launch(b, k_reverse, bindings, 3, 1, 1, 1);
  else
    dlc_ab_launch(b, k_reverse, bindings, 3, gx, gy, gz);
  bindings[0] = reversed, bindings[1] = c_scale, bindings[2] = out;
  dlc_ab_launch(b, k_scale, bindings, 3, gx, gy, gz);
  dlc_ab_launch(b, k_zero, &hits, 1, gx, gy, gz);
  dlc_ab_launch(b, k_count, &hits, 1, gx, gy, gz);
  dlc_ab_launch(b, k_count, &hits, 1, gx, gy, gz);

  dlc_ab_input(b, x);
  dlc_ab_input(b, y);
  dlc_ab_output(b, out);
  dlc_ab_output(b, hits);
  if (chain->has_code_id)
    dlc_ab_cpu_code_id(b, &chain->code_id, sizeof(chain->code_id));
  dlc_ab_finish(b, out_data, out_size);
  dlc_ab_destroy(b);
}

void dlc_test_build_gpu_chain(const dlc_test_gpu_chain_t *chain,
                              uint8_t **out_data, size_t *out_size) {
  static const char *const names[5] = {"dlc_test_add", "dlc_test_reverse",
                                       "dlc_test_scale", "dlc_test_zero",
                                       "dlc_test_count"};
  uint32_t n = chain->n ? chain->n : 1000;
  uint32_t wg = chain->workgroup ? chain->workgroup : 64;
  uint32_t gx = chain->grid[0] ? chain->grid[0] : (n + wg - 1) / wg;
  uint32_t gy = chain->grid[0] ? chain->grid[1] : 1;
  uint32_t gz = chain->grid[0] ? chain->grid[2] : 1;
  float scale = chain->scale != 0.0f ? chain->scale : 2.0f;
  int64_t dims[1];
  int64_t one[1] = {1};
  dlc_ab_t *b = dlc_ab_create(chain->target, chain->features);
  uint64_t offsets[5];
  uint32_t kernels[5], bindings[4];
  uint32_t x, y, sum, reversed, out, hits, c_scale, c_n, i, j;

  if (chain->target_sm)
    dlc_ab_target_sm(b, chain->target_sm);
  if (chain->cubin)
    dlc_ab_cubin(b, chain->cubin, chain->cubin_size);
  for (i = 0; i < 5; ++i) {
    for (j = 0; j < i && chain->code[j] != chain->code[i]; ++j) {
    }
    offsets[i] = j < i ? offsets[j]
                       : dlc_ab_code(b, chain->code[i], chain->code_size[i]);
    kernels[i] = dlc_ab_kernel(
        b, i == 2 && chain->scale_kernel ? chain->scale_kernel : names[i],
        chain->code_format, offsets[i], chain->code_size[i],
        i == 3 || i == 4 ? 2
        : i == 1         ? 3
                         : 4);
    dlc_ab_kernel_workgroup(b, kernels[i], wg, 1, 1);
  }
  dims[0] = n;
  x = dlc_ab_arena_tensor(b, "x", DLCX_DTYPE_F32, 1, dims);
  y = dlc_ab_arena_tensor(b, "y", DLCX_DTYPE_F32, 1, dims);
  sum = dlc_ab_arena_tensor(b, "sum", DLCX_DTYPE_F32, 1, dims);
  reversed = dlc_ab_arena_tensor(b, "reversed", DLCX_DTYPE_F32, 1, dims);
  out = dlc_ab_arena_tensor(b, "out", DLCX_DTYPE_F32, 1, dims);
  hits = dlc_ab_arena_tensor(b, "hits", DLCX_DTYPE_U32, 1, dims);
  c_scale = dlc_ab_constant_tensor(b, "scale", DLCX_DTYPE_F32, 1, one, &scale);
  c_n = dlc_ab_constant_tensor(b, "n", DLCX_DTYPE_U32, 0, NULL, &n);

  bindings[0] = x, bindings[1] = y, bindings[2] = sum, bindings[3] = c_n;
  dlc_ab_launch(b, kernels[0], bindings, 4, gx, gy, gz);
  bindings[0] = sum, bindings[1] = reversed, bindings[2] = c_n;
  dlc_ab_launch(b, kernels[1], bindings, 3, gx, gy, gz);
  bindings[0] = reversed, bindings[1] = c_scale, bindings[2] = out;
  bindings[3] = c_n;
  dlc_ab_launch(b, kernels[2], bindings, 4, gx, gy, gz);
  bindings[0] = hits, bindings[1] = c_n;
  dlc_ab_launch(b, kernels[3], bindings, 2, gx, gy, gz);
  dlc_ab_launch(b, kernels[4], bindings, 2, gx, gy, gz);
  dlc_ab_launch(b, kernels[4], bindings, 2, gx, gy, gz);

  dlc_ab_input(b, x);
  dlc_ab_input(b, y);
  dlc_ab_output(b, out);
  dlc_ab_output(b, hits);
  dlc_ab_finish(b, out_data, out_size);
  dlc_ab_destroy(b);
}

size_t dlc_test_fake_ptx(unsigned sm, char *out, size_t out_size) {
  int n = snprintf(
      out, out_size,
      "// dlc runtime tests: PTX for the fake libcuda\n"
      ".version 7.8\n.target sm_%u\n.address_size 64\n\n"
      ".visible .entry dlc_test_add(.param .u64 a, .param .u64 b,\n"
      "    .param .u64 out, .param .u64 n) { ret; }\n"
      ".visible .entry dlc_test_reverse(.param .u64 in, .param .u64 out,\n"
      "    .param .u64 n) { ret; }\n"
      ".visible .entry dlc_test_scale(.param .u64 in, .param .u64 scale,\n"
      "    .param .u64 out, .param .u64 n) { ret; }\n"
      ".visible .entry dlc_test_zero(.param .u64 out, .param .u64 n) "
      "{ ret; }\n"
      ".visible .entry dlc_test_count(.param .u64 out, .param .u64 n) "
      "{ ret; }\n",
      sm);
  if (n < 0 || (size_t)n >= out_size) {
    fprintf(stderr, "dlc_test_fake_ptx: buffer too small\n");
    abort();
  }
  return (size_t)n + 1;
}

void dlc_test_chain_reference(const float *x, const float *y, uint32_t n,
                              float scale, float *out) {
  uint32_t i;
  for (i = 0; i < n; ++i)
    out[i] = (x[n - 1 - i] + y[n - 1 - i]) * scale;
}

void dlc_test_build_add(const uint8_t *code, size_t code_size, uint32_t rank,
                        const int64_t *dims, uint8_t **out_data,
                        size_t *out_size) {
  dlc_ab_t *b = dlc_ab_create(DLCX_TARGET_CPU, dlc_test_host_isa());
  uint64_t offset = dlc_ab_code(b, code, code_size);
  uint32_t t[3], k, i;
  uint64_t n = 1;
  for (i = 0; i < rank; ++i)
    n *= (uint64_t)dims[i];
  t[0] = dlc_ab_arena_tensor(b, "x", DLCX_DTYPE_F32, rank, dims);
  t[1] = dlc_ab_arena_tensor(b, "y", DLCX_DTYPE_F32, rank, dims);
  t[2] = dlc_ab_arena_tensor(b, "sum", DLCX_DTYPE_F32, rank, dims);
  k = dlc_ab_kernel(b, "dlc_test_add", DLCX_CODE_ELF_SHARED, offset, code_size,
                    3);
  dlc_ab_launch(b, k, t, 3, (uint32_t)n, 1, 1);
  dlc_ab_input(b, t[0]);
  dlc_ab_input(b, t[1]);
  dlc_ab_output(b, t[2]);
  dlc_ab_finish(b, out_data, out_size);
  dlc_ab_destroy(b);
}

uint8_t *dlc_test_read_kernels(size_t *out_size) {
  uint8_t *data = dlc_ab_read_file(DLC_TEST_KERNELS_PATH, out_size);
  if (!data)
    fprintf(stderr, "cannot read the test kernels at %s\n",
            DLC_TEST_KERNELS_PATH);
  return data;
}
