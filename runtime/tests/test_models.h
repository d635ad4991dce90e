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
} dlc_test_chain_t;

void dlc_test_build_chain(const dlc_test_chain_t *chain, uint8_t **out_data,
                          size_t *out_size);
void dlc_test_chain_reference(const float *x, const float *y, uint32_t n,
                              float scale, float *out);

/* sum = x + y, all f32 of shape dims, inputs named x and y (the ONNX
 * backend test "test_add"). */
void dlc_test_build_add(const uint8_t *code, size_t code_size, uint32_t rank,
                        const int64_t *dims, uint8_t **out_data,
                        size_t *out_size);

/* The bytes of the test kernels' shared object (DLC_TEST_KERNELS_PATH), or
 * NULL with a message on stderr. Free with free(). */
uint8_t *dlc_test_read_kernels(size_t *out_size);

#endif /* DLC_TEST_MODELS_H */
