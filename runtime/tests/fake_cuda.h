/*===- fake_cuda.h - a libcuda stand-in for the CUDA driver's tests -*- C
 * -*-===*
 *
 * libdlc_fake_cuda.so exports the driver API entry points the CUDA driver
 * resolves (with their real exported names and signatures) and implements
 * them on host memory: device memory is malloc'd, streams run work at once,
 * stream capture records launches into graphs that cuGraphLaunch replays.
 * "Modules" are PTX text or a fake cubin ("\x7f" "ELF" then text) that list
 * their entries as ".entry NAME(.param ..., .param ...)" and their
 * architecture as ".target sm_XX" / "sm_XX"; a kernel runs the host
 * function registered under its name (the chain kernels of test_models.h
 * are built in), so launches really compute.
 *
 * Configured through the functions below (tests link the library and
 * DLC_CUDA_LIBRARY points the driver at the same file) or, in other
 * processes, through FAKE_CUDA_DEVICES (default 1) and FAKE_CUDA_SM
 * (default 87). It records every call, checks that calls come with a
 * current context and stay inside allocations, and injects failures on
 * request. Not thread-safe: tests call it from one thread at a time.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_TEST_FAKE_CUDA_H
#define DLC_TEST_FAKE_CUDA_H

#include <stdint.h>

/* A kernel: `params[i]` points at argument i, as for cuLaunchKernel. */
typedef void (*fake_cuda_kernel_fn)(void **params, const unsigned grid[3],
                                    const unsigned block[3]);

/* Argument `i` of `params` as a pointer of `type`. */
#define FAKE_CUDA_ARG(params, i, type)                                         \
  ((type)(uintptr_t)*(const unsigned long long *)(params)[i])

typedef struct fake_cuda_stats_t {
  int init_calls;
  int ptx_loads;   /* modules JIT-compiled from PTX */
  int cubin_loads; /* modules loaded from a cubin */
  int modules_live;
  int allocations_live;
  int memcpy_htod; /* calls */
  int memcpy_dtoh;
  int memsets;
  int launches;         /* cuLaunchKernel outside a capture */
  int captured;         /* cuLaunchKernel during a capture */
  int kernels_executed; /* launches and graph nodes that ran */
  int captures;         /* cuStreamBeginCapture */
  int graphs_live;
  int execs_live;
  int instantiations;
  int graph_launches;
  int streams_live;
  int events_live;
  int event_records;
  int contexts_retained; /* retains minus releases */
  int context_depth;     /* pushes minus pops */
  int errors;            /* calls that returned an error */
} fake_cuda_stats_t;

/* Forgets everything (configuration back to the environment's defaults);
 * the previous run's objects must all be gone. */
void fake_cuda_reset(void);
const fake_cuda_stats_t *fake_cuda_stats(void);
void fake_cuda_set_devices(int count, unsigned sm);
/* The next call of `function` (e.g. "cuGraphLaunch") returns `error`. */
void fake_cuda_fail_next(const char *function, int error);
/* Adds (or replaces) the kernel called `name`. */
void fake_cuda_register_kernel(const char *name, fake_cuda_kernel_fn fn);

#endif /* DLC_TEST_FAKE_CUDA_H */
