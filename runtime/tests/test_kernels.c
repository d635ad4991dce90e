/*===- test_kernels.c - CPU kernels for the runtime tests -----------------===*
 *
 * Built twice: as a shared object whose bytes become an artifact's CODE
 * section, and into the test program for the static driver. Every kernel
 * treats one workgroup as one element, so that a wrong split of [0, total)
 * across threads shows up in the outputs.
 *===----------------------------------------------------------------------===*/

#include <stdint.h>

#include "test_kernels.h"

void dlc_test_add(void *const *bindings, uint32_t begin, uint32_t end,
                  void *scratch) {
  const float *a = (const float *)bindings[0];
  const float *b = (const float *)bindings[1];
  float *out = (float *)bindings[2];
  uint32_t i;
  (void)scratch;
  for (i = begin; i < end; ++i)
    out[i] = a[i] + b[i];
}

/* out = in reversed; reads what other threads wrote in the last launch. */
void dlc_test_reverse(void *const *bindings, uint32_t begin, uint32_t end,
                      void *scratch) {
  const float *in = (const float *)bindings[0];
  float *out = (float *)bindings[1];
  uint32_t n = *(const uint32_t *)bindings[2];
  uint32_t i;
  (void)scratch;
  for (i = begin; i < end; ++i)
    out[i] = in[n - 1 - i];
}

void dlc_test_reverse_all(void *const *bindings, uint32_t begin, uint32_t end,
                          void *scratch) {
  uint32_t n = *(const uint32_t *)bindings[2];
  if (begin == 0 && end > 0)
    dlc_test_reverse(bindings, 0, n, scratch);
}

void dlc_test_scale(void *const *bindings, uint32_t begin, uint32_t end,
                    void *scratch) {
  const float *in = (const float *)bindings[0];
  float scale = *(const float *)bindings[1];
  float *out = (float *)bindings[2];
  uint32_t i;
  (void)scratch;
  for (i = begin; i < end; ++i)
    out[i] = in[i] * scale;
}

void dlc_test_zero(void *const *bindings, uint32_t begin, uint32_t end,
                   void *scratch) {
  uint32_t *out = (uint32_t *)bindings[0];
  uint32_t i;
  (void)scratch;
  for (i = begin; i < end; ++i)
    out[i] = 0;
}

/* Not idempotent: a workgroup run twice, or never, changes the result.
 * Counts through the thread's scratch (DLC_TEST_SCRATCH_SIZE bytes, of
 * which it fills all): a missing or misaligned scratch adds 1000, one
 * that another thread writes at the same time adds 100 (most likely). */
void dlc_test_count(void *const *bindings, uint32_t begin, uint32_t end,
                    void *scratch) {
  uint32_t *out = (uint32_t *)bindings[0];
  volatile uint32_t *s = (volatile uint32_t *)scratch;
  uint32_t i, k, spin;
  for (i = begin; i < end; ++i) {
    if (!s || (uintptr_t)scratch % 64 != 0) {
      out[i] += 1000;
      continue;
    }
    for (k = 0; k < DLC_TEST_SCRATCH_SIZE / 4; ++k)
      s[k] = i + k;
    for (spin = 0; spin < 64; ++spin)
      for (k = 0; k < DLC_TEST_SCRATCH_SIZE / 4; ++k)
        if (s[k] != i + k) {
          out[i] += 100;
          spin = 64;
          break;
        }
    out[i] += s[0] - i + 1;
  }
}
