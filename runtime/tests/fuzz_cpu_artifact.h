/*===- fuzz_cpu_artifact.h - the artifact fuzz_cpu_loader patches -*- C -*-===*
 *
 * One valid CPU artifact whose CODE is the test kernels' shared object, the
 * bytes of it that belong to the code's trust domain, and the patch format
 * that fuzz_cpu_loader reads. fuzz_cpu_loader.c explains the threat model;
 * write_cpu_seed_corpus.c writes inputs in this format.
 *
 * Input format (little-endian):
 *   byte 0            options: bits 0-1 pick the session's thread_count
 *                     (0 and 3: 1, 1: 2, 2: 3), bit 2 enable_profiling;
 *                     an empty input means 1 thread, no profiling
 *   then records      u16 offset, u8 control, then 1 + (control & 7) bytes
 *                     that overwrite the artifact from offset % size on;
 *                     bytes past the end or in a protected range are
 *                     skipped, a record cut short by the end of the input
 *                     writes what it has, control's other bits are unused
 * After the patches file_size and the checksum are set to match.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_TEST_FUZZ_CPU_ARTIFACT_H
#define DLC_TEST_FUZZ_CPU_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>

/* The model: x, y: f32[N] inputs; out2 = (x + y) * scale + bias: f32[N] and
 * z = 0: u32[N] outputs, in four launches of dlc_test_add, dlc_test_scale,
 * dlc_test_add and dlc_test_zero, each kernel on a grid of its own shape
 * with N workgroups. */
#define DLC_FUZZ_CPU_N 24u
#define DLC_FUZZ_CPU_SCALE 3.0f
/* Bias element i. */
#define DLC_FUZZ_CPU_BIAS(i) ((float)(i) * 0.5f - 4.0f)

typedef struct dlc_fuzz_cpu_t {
  uint8_t *base;    /* the valid artifact, DLCX_ALIGNMENT-aligned */
  size_t size;      /* its bytes */
  uint8_t *protect; /* one flag per byte: 1 = never patched */
  size_t protected_count;
} dlc_fuzz_cpu_t;

/* Builds the artifact from the test kernels' shared object and marks the
 * protected bytes; 0 (with a message on stderr) when the object cannot be
 * read. */
int dlc_fuzz_cpu_build(dlc_fuzz_cpu_t *fuzz);
void dlc_fuzz_cpu_free(dlc_fuzz_cpu_t *fuzz);

typedef struct dlc_fuzz_cpu_options_t {
  uint32_t thread_count;
  uint32_t enable_profiling;
} dlc_fuzz_cpu_options_t;

/* Writes the base artifact with `input`'s patches applied to `out` (size
 * bytes), seals it, and returns the options byte's settings. */
void dlc_fuzz_cpu_patch(const dlc_fuzz_cpu_t *fuzz, const uint8_t *input,
                        size_t input_size, uint8_t *out,
                        dlc_fuzz_cpu_options_t *out_options);

#endif /* DLC_TEST_FUZZ_CPU_ARTIFACT_H */
