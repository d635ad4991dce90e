/*===- test_kernels.h - CPU kernels for the runtime tests --------*- C -*-===*/

#ifndef DLC_TEST_KERNELS_H
#define DLC_TEST_KERNELS_H

#include <stdint.h>

/* The scratch bytes per thread the test artifacts declare (dlc_test_count
 * uses them). */
#define DLC_TEST_SCRATCH_SIZE 256u

/* bindings: a, b, out (f32[n]) */
void dlc_test_add(void *const *bindings, uint32_t begin, uint32_t end,
                  void *scratch);
/* bindings: in, out (f32[n]), n (u32 constant) */
void dlc_test_reverse(void *const *bindings, uint32_t begin, uint32_t end,
                      void *scratch);
/* dlc_test_reverse as one workgroup: workgroup 0 reverses all n elements. */
void dlc_test_reverse_all(void *const *bindings, uint32_t begin, uint32_t end,
                          void *scratch);
/* bindings: in (f32[n]), scale (f32 constant), out (f32[n]) */
void dlc_test_scale(void *const *bindings, uint32_t begin, uint32_t end,
                    void *scratch);
/* bindings: out (u32[n]) */
void dlc_test_zero(void *const *bindings, uint32_t begin, uint32_t end,
                   void *scratch);
/* bindings: out (u32[n]), incremented (through the thread's scratch) */
void dlc_test_count(void *const *bindings, uint32_t begin, uint32_t end,
                    void *scratch);

#endif /* DLC_TEST_KERNELS_H */
