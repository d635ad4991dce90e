/*===- runtime.h - the dlc C runtime ---------------------------*- C -*-===*
 *
 * Loads artifacts written by dlc-compile (.dlcx) and runs them on a CPU, a
 * Vulkan GPU or a CUDA GPU, or on any device whose driver an application
 * registers. C99, no global state, no allocation on the run path.
 *
 * Objects and ownership:
 *   dlc_context_t  allocator, drivers, and nothing else. Create one per
 *                  application (or per thread); it outlives its models.
 *   dlc_model_t    a validated artifact plus what a driver prepared from it
 *                  once (pipelines, modules, uploaded weights). Read-only
 *                  after load: sessions of one model may run concurrently.
 *   dlc_session_t  one arena and one set of inputs/outputs. Use one session
 *                  from one thread at a time.
 *   `*_create` / `*_load_*` return owned objects through `out_` parameters;
 *   the matching `*_destroy` frees them with the context's allocator.
 *   Pointers returned by accessors are borrowed and stay valid as long as
 *   the object they came from.
 *
 * Errors: every call that can fail returns a dlc_status_t (DLC_OK is 0). The
 * human-readable reason is in the message buffer of the object the call was
 * made on: dlc_context_message for context, load and model calls, and
 * dlc_session_message for session calls.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_RUNTIME_H
#define DLC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "dlc/artifact_format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DLC_RUNTIME_VERSION_MAJOR 0
#define DLC_RUNTIME_VERSION_MINOR 1
#define DLC_RUNTIME_VERSION_PATCH 0

/*===--- status --------------------------------------------------------===*/

typedef enum dlc_status_e {
  DLC_OK = 0,
  DLC_ERROR_INVALID_ARGUMENT = 1, /* a caller passed something invalid */
  DLC_ERROR_OUT_OF_MEMORY = 2,    /* the allocator returned NULL */
  DLC_ERROR_IO = 3,               /* a file could not be read */
  DLC_ERROR_INVALID_ARTIFACT = 4, /* corrupt, truncated or inconsistent */
  DLC_ERROR_UNSUPPORTED = 5,      /* newer format, unknown feature */
  DLC_ERROR_UNAVAILABLE = 6,      /* the driver or device is not present */
  DLC_ERROR_DEVICE = 7,           /* the device API reported a failure */
  DLC_ERROR_NOT_FOUND = 8,        /* no input/output with that name */
} dlc_status_t;

/* A static, human-readable name of the status code ("DLC_OK", ...). */
const char *dlc_status_name(dlc_status_t status);

/*===--- allocator -----------------------------------------------------===*/

/* Memory the runtime needs comes from here. `alignment` is a power of two no
 * larger than 4096; `free` gets NULL-safe pointers returned by `alloc`. */
typedef struct dlc_allocator_t {
  void *self;
  void *(*alloc)(void *self, size_t size, size_t alignment);
  void (*free)(void *self, void *ptr);
} dlc_allocator_t;

/* The C library's allocator (aligned_alloc/posix_memalign and free). */
dlc_allocator_t dlc_allocator_system(void);

/*===--- drivers -------------------------------------------------------===*/

/* A driver runs artifacts of one dlcx_target_t. The built-in ones are
 * "cpu", "vulkan" and "cuda"; applications may register their own (an NPU,
 * say) with the vtable in dlc/driver.h. */
typedef struct dlc_driver_t dlc_driver_t;

/*===--- context -------------------------------------------------------===*/

typedef struct dlc_context_t dlc_context_t;

/* Declared in dlc/vulkan_driver.h and dlc/cuda_driver.h. */
struct dlc_vulkan_driver_options_t;
struct dlc_cuda_driver_options_t;

typedef struct dlc_context_options_t {
  uint32_t struct_size; /* sizeof(dlc_context_options_t) */
  /* NULL alloc: dlc_allocator_system(). */
  dlc_allocator_t allocator;
  /* Options of the built-in Vulkan and CUDA drivers, read (and copied) by
   * dlc_context_create; NULL: the defaults. A build of the runtime without
   * that driver ignores them. */
  const struct dlc_vulkan_driver_options_t *vulkan;
  const struct dlc_cuda_driver_options_t *cuda;
} dlc_context_options_t;

/* `options` may be NULL for the defaults. Registers the built-in drivers that
 * this build of the runtime contains. What a driver can be told is in its
 * options: the runtime reads no DLC_* environment variable (only TMPDIR,
 * where the CPU loader falls back to a temporary file). */
dlc_status_t dlc_context_create(const dlc_context_options_t *options,
                                dlc_context_t **out_context);
void dlc_context_destroy(dlc_context_t *context);

/* The reason for the last failed call on this context or on a model loaded
 * through it. Borrowed; never NULL. */
const char *dlc_context_message(const dlc_context_t *context);

/* Adds a driver. The vtable must outlive the context. A driver registered
 * later for the same target takes precedence. */
dlc_status_t dlc_context_register_driver(dlc_context_t *context,
                                         const dlc_driver_t *driver);

/* Whether a driver for `target` is registered and its device is present
 * (the Vulkan and CUDA drivers load their libraries to answer). On
 * DLC_ERROR_UNAVAILABLE the context message says what is missing. */
dlc_status_t dlc_context_probe(dlc_context_t *context, dlcx_target_t target);

/*===--- model ---------------------------------------------------------===*/

typedef struct dlc_model_t dlc_model_t;

typedef struct dlc_model_options_t {
  uint32_t struct_size; /* sizeof(dlc_model_options_t) */
  /* Index of the device among those the driver finds (0: the first). */
  uint32_t device_index;
} dlc_model_options_t;

/* Reads (memory-maps where possible) and validates an artifact. */
dlc_status_t dlc_model_load_file(dlc_context_t *context, const char *path,
                                 const dlc_model_options_t *options,
                                 dlc_model_t **out_model);

/* Validates an artifact in caller memory and uses it in place: the caller
 * keeps `data` alive and unchanged until dlc_model_destroy. `data` must be
 * aligned to DLCX_ALIGNMENT so that weights can be used without a copy. */
dlc_status_t dlc_model_load_memory(dlc_context_t *context, const void *data,
                                   size_t size,
                                   const dlc_model_options_t *options,
                                   dlc_model_t **out_model);
void dlc_model_destroy(dlc_model_t *model);

/* Description of one input or output. Borrowed from the model. */
typedef struct dlc_tensor_info_t {
  const char *name;
  dlcx_dtype_t dtype;
  uint32_t rank;
  const int64_t *dims;
  size_t size_bytes;
  float scale; /* 0: not quantized */
  int32_t zero_point;
} dlc_tensor_info_t;

uint32_t dlc_model_input_count(const dlc_model_t *model);
uint32_t dlc_model_output_count(const dlc_model_t *model);
dlc_status_t dlc_model_input_info(const dlc_model_t *model, uint32_t index,
                                  dlc_tensor_info_t *out_info);
dlc_status_t dlc_model_output_info(const dlc_model_t *model, uint32_t index,
                                   dlc_tensor_info_t *out_info);
/* Index of the input/output called `name`, or DLC_ERROR_NOT_FOUND. */
dlc_status_t dlc_model_find_input(const dlc_model_t *model, const char *name,
                                  uint32_t *out_index);
dlc_status_t dlc_model_find_output(const dlc_model_t *model, const char *name,
                                   uint32_t *out_index);

dlcx_target_t dlc_model_target(const dlc_model_t *model);
uint32_t dlc_model_kernel_count(const dlc_model_t *model);
uint32_t dlc_model_launch_count(const dlc_model_t *model);
uint64_t dlc_model_arena_size(const dlc_model_t *model);
/* The name of the driver that prepared the model ("cpu", "vulkan", ...). */
const char *dlc_model_driver_name(const dlc_model_t *model);

/*===--- session -------------------------------------------------------===*/

typedef struct dlc_session_t dlc_session_t;

typedef struct dlc_session_options_t {
  uint32_t struct_size; /* sizeof(dlc_session_options_t) */
  /* CPU: worker threads including the caller; 0 picks the number of cores,
   * 1 runs everything on the calling thread. */
  uint32_t thread_count;
  /* Record per-kernel timings (GPU timestamp queries, CPU clocks). */
  uint32_t enable_profiling;
  /* CPU: the most scratch memory per thread the session may allocate for
   * the kernels' temporaries (the artifact's cpu_scratch_size); a model
   * asking for more fails dlc_session_create. 0 means
   * DLC_DEFAULT_MAX_CPU_SCRATCH. */
  uint32_t max_cpu_scratch_size;
} dlc_session_options_t;

/* 64 MiB per thread: well above what dlc's kernels ask for (ResNet-18:
 * under 1 MiB), well below what a corrupt artifact could claim (4 GiB). */
#define DLC_DEFAULT_MAX_CPU_SCRATCH (64u << 20)

/* Allocates the session's arena (once) and anything the driver needs to run
 * without further allocation. */
dlc_status_t dlc_session_create(dlc_model_t *model,
                                const dlc_session_options_t *options,
                                dlc_session_t **out_session);
void dlc_session_destroy(dlc_session_t *session);
const char *dlc_session_message(const dlc_session_t *session);

/* Copies `size` bytes (exactly the input's size) into input `index`. The
 * input keeps them across runs, except an input whose memory a run reuses
 * (artifact flag DLCX_TENSOR_INPUT_REUSED): set that one before each run. */
dlc_status_t dlc_session_set_input(dlc_session_t *session, uint32_t index,
                                   const void *data, size_t size);

/* Runs every launch of the model once. Does not allocate. Fails with
 * DLC_ERROR_INVALID_ARGUMENT, before running anything, when an input whose
 * memory the previous run reused was not set since. */
dlc_status_t dlc_session_run(dlc_session_t *session);

/* Copies output `index` (exactly `size` bytes) to `data`. */
dlc_status_t dlc_session_get_output(dlc_session_t *session, uint32_t index,
                                    void *data, size_t size);

/* Per-launch timings of the last run, when profiling is enabled. */
typedef struct dlc_kernel_timing_t {
  const char *kernel_name; /* borrowed from the model */
  uint64_t start_ns;       /* relative to the start of the run */
  uint64_t duration_ns;
} dlc_kernel_timing_t;

/* `*out_timings` is borrowed and valid until the next run. */
dlc_status_t dlc_session_timings(const dlc_session_t *session,
                                 const dlc_kernel_timing_t **out_timings,
                                 uint32_t *out_count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_RUNTIME_H */
