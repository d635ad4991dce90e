/*===- test_models.h - the artifacts the runtime tests run -------*- C -*-===*/

#ifndef DLC_TEST_MODELS_H
#define DLC_TEST_MODELS_H

#include <stddef.h>
#include <stdint.h>

/* The DLCX_FEATURE_CPU_* bit of the machine the tests run on. */
uint64_t dlc_test_host_isa(void);

/* The chain model, over n = grid[0] * grid[1] * grid[2] elements:
 *   inputs  x, y: f32[n]
 *   outputs out  = scale * reverse(x + y): f32[n]
 *           hits = 2 (zero, then count twice): u32[n]
 * with six launches of the kernels in test_kernels.c, the scale and n as
 * constants. */
typedef struct dlc_test_chain_t {
  const uint8_t *code; /* the test kernels' shared object */
  size_t code_size;
  uint64_t features;        /* 0: dlc_test_host_isa() */
  uint32_t grid[3];         /* zeros: {60, 1, 1} */
  float scale;              /* 0: 2.0f */
  const char *scale_kernel; /* NULL: "dlc_test_scale" */
  /* Nonzero: the reverse launch is one workgroup (dlc_test_reverse_all)
   * between launches of `grid`, as a small kernel between large ones. */
  int serial_reverse;
  /* Nonzero: a CPU_CODE_ID section holding `code_id`. */
  int has_code_id;
  uint64_t code_id;
  /* Nonzero: no code, the kernels DLCX_CODE_LINKED (as a target without a
   * loader gets them). */
  int linked;
} dlc_test_chain_t;

void dlc_test_build_chain(const dlc_test_chain_t *chain, uint8_t **out_data,
                          size_t *out_size);
void dlc_test_chain_reference(const float *x, const float *y, uint32_t n,
                              float scale, float *out);

/* The chain model for GPU targets: the same six launches and outputs as
 * the CPU chain over n elements, with kernels that run one element per
 * invocation and take n (a u32 constant) as their last buffer:
 *   dlc_test_add(a, b, out, n)    dlc_test_reverse(in, out, n)
 *   dlc_test_scale(in, scale, out, n)
 *   dlc_test_zero(out, n)         dlc_test_count(out, n)
 * The element of invocation x, y, z (global x, workgroup y and z) is
 * x + grid[0] * workgroup * (y + grid[1] * z). */
typedef struct dlc_test_gpu_chain_t {
  uint32_t target;      /* DLCX_TARGET_VULKAN or DLCX_TARGET_CUDA */
  uint32_t code_format; /* DLCX_CODE_SPIRV or DLCX_CODE_PTX */
  /* add, reverse, scale, zero, count; equal pointers share one blob */
  const uint8_t *code[5];
  size_t code_size[5];
  uint64_t features;
  uint32_t target_sm;   /* CUDA */
  const uint8_t *cubin; /* CUDA: a CUBIN section, or NULL */
  size_t cubin_size;
  uint32_t n;               /* 0: 1000 */
  uint32_t grid[3];         /* zeros: {ceil(n / workgroup), 1, 1} */
  uint32_t workgroup;       /* 0: 64 (x only) */
  float scale;              /* 0: 2.0f */
  const char *scale_kernel; /* NULL: "dlc_test_scale" */
} dlc_test_gpu_chain_t;

void dlc_test_build_gpu_chain(const dlc_test_gpu_chain_t *chain,
                              uint8_t **out_data, size_t *out_size);

/* PTX text (NUL included in the returned size) declaring the GPU chain's
 * five kernels for sm_`sm`: what fake_cuda.h reads, not compiled code. */
size_t dlc_test_fake_ptx(unsigned sm, char *out, size_t out_size);

/* sum = x + y, all f32 of shape dims, inputs named x and y (the ONNX
 * backend test "test_add"). */
void dlc_test_build_add(const uint8_t *code, size_t code_size, uint32_t rank,
                        const int64_t *dims, uint8_t **out_data,
                        size_t *out_size);

/* The bytes of the test kernels' shared object (DLC_TEST_KERNELS_PATH), or
 * NULL with a message on stderr. Free with free(). */
uint8_t *dlc_test_read_kernels(size_t *out_size);

#endif /* DLC_TEST_MODELS_H */
