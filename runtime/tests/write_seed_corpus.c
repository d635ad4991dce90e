/*===- write_seed_corpus.c - valid artifacts to start fuzzing from --------===*/

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "artifact_builder.h"
#include "test_models.h"

/* Stands in for code: the fuzz target never loads it, and small seeds
 * mutate faster. */
static const uint8_t fake_code[64] = {0x7f, 'E', 'L', 'F'};

static int write_seed(const char *dir, const char *name, uint8_t *data,
                      size_t size) {
  char path[4096];
  int ok;
  snprintf(path, sizeof(path), "%s/%s.dlcx", dir, name);
  ok = dlc_ab_write_file(path, data, size);
  if (!ok)
    fprintf(stderr, "cannot write %s\n", path);
  dlc_ab_free(data);
  return ok;
}

int main(int argc, char **argv) {
  dlc_test_chain_t chain;
  uint8_t *data;
  size_t size;
  int ok = 1;

  if (argc != 2) {
    fprintf(stderr, "usage: write_seed_corpus DIR\n");
    return 2;
  }
  if (mkdir(argv[1], 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "cannot create %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  memset(&chain, 0, sizeof(chain));
  chain.code = fake_code;
  chain.code_size = sizeof(fake_code);
  dlc_test_build_chain(&chain, &data, &size);
  ok &= write_seed(argv[1], "chain", data, size);
  chain.grid[0] = 4, chain.grid[1] = 3, chain.grid[2] = 2;
  dlc_test_build_chain(&chain, &data, &size);
  ok &= write_seed(argv[1], "chain_3d", data, size);
  {
    int64_t dims[3] = {3, 4, 5};
    dlc_test_build_add(fake_code, sizeof(fake_code), 3, dims, &data, &size);
    ok &= write_seed(argv[1], "add", data, size);
  }
  {
    /* Every dtype, per-axis quantization, rank 0 and 8, an empty tensor. */
    static const uint32_t dtypes[] = {
        DLCX_DTYPE_F32,  DLCX_DTYPE_U8,  DLCX_DTYPE_I8,  DLCX_DTYPE_U16,
        DLCX_DTYPE_I16,  DLCX_DTYPE_I32, DLCX_DTYPE_I64, DLCX_DTYPE_BOOL,
        DLCX_DTYPE_F16,  DLCX_DTYPE_F64, DLCX_DTYPE_U32, DLCX_DTYPE_U64,
        DLCX_DTYPE_BF16, DLCX_DTYPE_U4,  DLCX_DTYPE_I4};
    static const float scales[3] = {0.5f, 0.25f, 0.125f};
    static const int32_t zero_points[3] = {1, 2, 3};
    static const int8_t weights[3 * 2] = {1, 2, 3, 4, 5, 6};
    int64_t dims[8] = {1, 2, 1, 1, 3, 1, 1, 1};
    int64_t wdims[2] = {3, 2};
    int64_t empty[2] = {0, 7};
    dlc_ab_t *b = dlc_ab_create(DLCX_TARGET_VULKAN, DLCX_FEATURE_VK_INT64);
    uint32_t i, t, w;
    for (i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); ++i) {
      char name[16];
      snprintf(name, sizeof(name), "t%u", (unsigned)i);
      t = dlc_ab_arena_tensor(b, name, dtypes[i], i % 2 ? 8 : 2, dims);
      if (i < 2)
        dlc_ab_input(b, t);
      else if (i < 4)
        dlc_ab_output(b, t);
    }
    t = dlc_ab_arena_tensor(b, "scalar", DLCX_DTYPE_F32, 0, NULL);
    dlc_ab_quantize(b, t, 0.1f, 3, -1, NULL, NULL);
    dlc_ab_input(b, t);
    t = dlc_ab_arena_tensor(b, "empty", DLCX_DTYPE_I8, 2, empty);
    dlc_ab_output(b, t);
    w = dlc_ab_constant_tensor(b, "w", DLCX_DTYPE_I8, 2, wdims, weights);
    dlc_ab_quantize(b, w, 1.0f, 0, 0, scales, zero_points);
    {
      uint64_t code = dlc_ab_code(b, fake_code, sizeof(fake_code));
      uint32_t k =
          dlc_ab_kernel(b, "main", DLCX_CODE_SPIRV, code, sizeof(fake_code), 2);
      uint32_t bindings[2];
      bindings[0] = w;
      bindings[1] = t;
      dlc_ab_launch(b, k, bindings, 2, 65535, 2, 1);
    }
    dlc_ab_finish(b, &data, &size);
    dlc_ab_destroy(b);
    ok &= write_seed(argv[1], "dtypes", data, size);
  }
  {
    /* CUDA: PTX in CODE, a cubin in its own section. */
    static const char ptx[] = ".version 7.8\n.target sm_87\n";
    int64_t dims[1] = {16};
    dlc_ab_t *b = dlc_ab_create(DLCX_TARGET_CUDA, 0);
    uint64_t code = dlc_ab_code(b, ptx, sizeof(ptx));
    uint32_t t = dlc_ab_arena_tensor(b, "x", DLCX_DTYPE_F32, 1, dims);
    uint32_t k = dlc_ab_kernel(b, "k", DLCX_CODE_PTX, code, sizeof(ptx), 1);
    dlc_ab_target_sm(b, 87);
    dlc_ab_cubin(b, fake_code, sizeof(fake_code));
    dlc_ab_kernel_workgroup(b, k, 128, 1, 1);
    dlc_ab_launch(b, k, &t, 1, 4, 1, 1);
    dlc_ab_input(b, t);
    dlc_ab_output(b, t);
    dlc_ab_finish(b, &data, &size);
    dlc_ab_destroy(b);
    ok &= write_seed(argv[1], "cuda_cubin", data, size);
  }
  return ok ? 0 : 1;
}
