/*===- artifact_builder.h - write .dlcx artifacts in tests -------*- C -*-===*
 *
 * A small writer for the artifact format, independent of the runtime's
 * reader, so tests (and the fuzzer's seed corpus) can make valid artifacts
 * and then break them on purpose. Aborts on out-of-memory: test code only.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_TEST_ARTIFACT_BUILDER_H
#define DLC_TEST_ARTIFACT_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "dlc/artifact_format.h"

typedef struct dlc_ab_t dlc_ab_t;

dlc_ab_t *dlc_ab_create(uint32_t target, uint64_t target_features);
void dlc_ab_destroy(dlc_ab_t *builder);
/* The model's cpu_scratch_size. */
void dlc_ab_cpu_scratch(dlc_ab_t *builder, uint32_t bytes);

/* A string reference for `text`. */
uint32_t dlc_ab_string(dlc_ab_t *builder, const char *text);
/* A tensor in the arena at the next aligned offset; returns its index. */
uint32_t dlc_ab_arena_tensor(dlc_ab_t *builder, const char *name,
                             uint32_t dtype, uint32_t rank,
                             const int64_t *dims);
/* A tensor whose `data` (its full size) goes into CONSTANTS. */
uint32_t dlc_ab_constant_tensor(dlc_ab_t *builder, const char *name,
                                uint32_t dtype, uint32_t rank,
                                const int64_t *dims, const void *data);
/* Marks `tensor` quantized. With axis >= 0, `scales` and `zero_points`
 * (dims[axis] each) go into CONSTANTS as per-axis parameters. */
void dlc_ab_quantize(dlc_ab_t *builder, uint32_t tensor, float scale,
                     int32_t zero_point, int32_t axis, const float *scales,
                     const int32_t *zero_points);
/* Appends a code blob to CODE; returns its offset there. */
uint64_t dlc_ab_code(dlc_ab_t *builder, const void *data, uint64_t size);
uint32_t dlc_ab_kernel(dlc_ab_t *builder, const char *name,
                       uint32_t code_format, uint64_t code_offset,
                       uint64_t code_size, uint32_t binding_count);
/* Sets the loop iterations per invocation KERNEL_LIMITS records for
 * `kernel` (0 unless set). */
void dlc_ab_kernel_loops(dlc_ab_t *builder, uint32_t kernel,
                         uint32_t iterations);
/* Sets the GPU local size of `kernel` (dlc_ab_kernel sets 1, 1, 1). */
void dlc_ab_kernel_workgroup(dlc_ab_t *builder, uint32_t kernel, uint32_t x,
                             uint32_t y, uint32_t z);
/* CUDA: header.target_sm, and the CUBIN section (which also sets
 * DLCX_FEATURE_CUDA_CUBIN). */
void dlc_ab_target_sm(dlc_ab_t *builder, uint32_t sm);
void dlc_ab_cubin(dlc_ab_t *builder, const void *data, uint64_t size);
/* The CPU_CODE_ID section (8 bytes in a valid artifact). */
void dlc_ab_cpu_code_id(dlc_ab_t *builder, const void *data, uint64_t size);
void dlc_ab_launch(dlc_ab_t *builder, uint32_t kernel, const uint32_t *tensors,
                   uint32_t tensor_count, uint32_t gx, uint32_t gy,
                   uint32_t gz);
void dlc_ab_input(dlc_ab_t *builder, uint32_t tensor);
void dlc_ab_output(dlc_ab_t *builder, uint32_t tensor);

/* Lays the artifact out and returns it in a DLCX_ALIGNMENT-aligned buffer
 * to release with dlc_ab_free. */
void dlc_ab_finish(dlc_ab_t *builder, uint8_t **out_data, size_t *out_size);
void dlc_ab_free(uint8_t *data);

/* Recomputes the checksum after a test edited the bytes. */
void dlc_ab_reseal(uint8_t *data, size_t size);

/* The section of `kind` in a finished artifact, or NULL. */
dlcx_section_t *dlc_ab_section(uint8_t *data, uint32_t kind);

int dlc_ab_write_file(const char *path, const uint8_t *data, size_t size);
/* Reads a whole file into a malloc'd buffer; NULL on failure. */
uint8_t *dlc_ab_read_file(const char *path, size_t *out_size);

#endif /* DLC_TEST_ARTIFACT_BUILDER_H */
