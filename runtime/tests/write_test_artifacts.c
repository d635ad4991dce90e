/*===- write_test_artifacts.c - test artifacts as files, for examples -----===*
 *
 * Writes the chain model for every target this build tests, with the same
 * 1000 elements, inputs, outputs and scale, so that a program run on each
 * prints the same outputs:
 *   DIR/chain_cpu.dlcx     the test kernels' shared object (this host)
 *   DIR/chain_vulkan.dlcx  the GLSL test kernels (when they were compiled)
 *   DIR/chain_cuda.dlcx    PTX for the fake libcuda (fake_cuda.h)
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "artifact_builder.h"
#include "test_models.h"

static int write_artifact(const char *dir, const char *name, uint8_t *data,
                          size_t size) {
  char path[4096];
  int ok;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  ok = dlc_ab_write_file(path, data, size);
  if (!ok)
    fprintf(stderr, "cannot write %s\n", path);
  dlc_ab_free(data);
  return ok;
}

static int write_vulkan(const char *dir) {
  static const char *const names[5] = {"add", "reverse", "scale", "zero",
                                       "count"};
  dlc_test_gpu_chain_t chain;
  uint8_t *spirv[5] = {NULL, NULL, NULL, NULL, NULL};
  uint8_t *data;
  size_t size;
  int i, ok = 1;
  memset(&chain, 0, sizeof(chain));
  for (i = 0; i < 5 && ok; ++i) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.spv", DLC_TEST_SPIRV_DIR, names[i]);
    spirv[i] = dlc_ab_read_file(path, &chain.code_size[i]);
    chain.code[i] = spirv[i];
    if (!spirv[i]) {
      fprintf(stderr, "cannot read %s\n", path);
      ok = 0;
    }
  }
  if (ok) {
    chain.target = DLCX_TARGET_VULKAN;
    chain.code_format = DLCX_CODE_SPIRV;
    chain.scale = 3.0f;
    dlc_test_build_gpu_chain(&chain, &data, &size);
    ok = write_artifact(dir, "chain_vulkan.dlcx", data, size);
  }
  for (i = 0; i < 5; ++i)
    free(spirv[i]);
  return ok;
}

int main(int argc, char **argv) {
  dlc_test_chain_t cpu;
  dlc_test_gpu_chain_t cuda;
  char ptx[4096];
  uint8_t *code, *data;
  size_t code_size, size;
  int ok = 1, i;

  if (argc != 2) {
    fprintf(stderr, "usage: write_test_artifacts DIR\n");
    return 2;
  }
  if (mkdir(argv[1], 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "cannot create %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  code = dlc_test_read_kernels(&code_size);
  if (!code)
    return 1;
  memset(&cpu, 0, sizeof(cpu));
  cpu.code = code;
  cpu.code_size = code_size;
  cpu.grid[0] = 1000, cpu.grid[1] = 1, cpu.grid[2] = 1;
  cpu.scale = 3.0f;
  dlc_test_build_chain(&cpu, &data, &size);
  ok &= write_artifact(argv[1], "chain_cpu.dlcx", data, size);
  free(code);

  if (DLC_TEST_SPIRV_DIR[0])
    ok &= write_vulkan(argv[1]);

  memset(&cuda, 0, sizeof(cuda));
  cuda.target = DLCX_TARGET_CUDA;
  cuda.code_format = DLCX_CODE_PTX;
  cuda.target_sm = 87;
  cuda.scale = 3.0f;
  size = dlc_test_fake_ptx(87, ptx, sizeof(ptx));
  for (i = 0; i < 5; ++i) {
    cuda.code[i] = (const uint8_t *)ptx;
    cuda.code_size[i] = size;
  }
  dlc_test_build_gpu_chain(&cuda, &data, &size);
  ok &= write_artifact(argv[1], "chain_cuda.dlcx", data, size);
  return ok ? 0 : 1;
}
