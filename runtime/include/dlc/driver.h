/*===- driver.h - the interface between the core and a device driver -*- C
 * -*-===*
 *
 * A driver runs validated artifacts of one dlcx_target_t. The core owns file
 * loading, validation, I/O bookkeeping and error reporting; a driver owns what
 * is device specific: turning the artifact into something runnable once per
 * model (resolved CPU symbols, GPU pipelines, uploaded weights), and per
 * session the memory and the work submission.
 *
 * To add a device (an NPU, say) without touching the core, fill a
 * dlc_driver_t and pass it to dlc_context_register_driver.
 *
 * Call sequence, all of it serialised by the core except where noted:
 *   probe?                   from dlc_context_probe
 *   model_prepare            once per dlc_model_load_*, after validation
 *     session_create         once per dlc_session_create
 *       set_input* run get_output* timings*   on one thread per session;
 *                            sessions of one model may run concurrently
 *     session_destroy
 *   model_release
 *   destroy                  when the owner is done with the driver
 *
 * GPU drivers upload constants in model_prepare (artifact->constants), keep a
 * device arena of artifact->model->arena_size bytes per session, and copy
 * inputs and outputs in set_input / get_output. `run` must not allocate.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_DRIVER_H
#define DLC_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "dlc/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever dlc_driver_t or dlc_artifact_t changes incompatibly. */
#define DLC_DRIVER_ABI_VERSION 1u

/*===--- messages ------------------------------------------------------===*/

/* A caller-owned buffer for the reason of a failure. */
typedef struct dlc_message_t {
  char *text;
  size_t capacity; /* bytes of `text`, including the terminating NUL */
} dlc_message_t;

/* printf-style: writes the reason (truncated to fit) and returns `status`, so
 * that drivers can `return dlc_message_set(message, DLC_ERROR_..., ...)`. */
dlc_status_t dlc_message_set(dlc_message_t *message, dlc_status_t status,
                             const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/*===--- the validated artifact ----------------------------------------===*/

/* Views into an artifact that passed validation: every index, offset, size
 * and string reference in these tables is in bounds, so drivers use them
 * without further checks. The tables point into the artifact bytes, which
 * stay valid and unchanged until model_release returns. */
typedef struct dlc_artifact_t {
  const uint8_t *data;
  uint64_t size;
  const dlcx_header_t *header;
  const dlcx_model_t *model;
  const char *strings; /* index with a string reference */
  const dlcx_tensor_t *tensors;
  uint32_t tensor_count;
  const dlcx_kernel_t *kernels;
  uint32_t kernel_count;
  const dlcx_launch_t *launches;
  uint32_t launch_count;
  const uint32_t *bindings; /* tensor indices */
  uint32_t binding_count;
  const uint32_t *inputs;  /* model->input_count tensor indices */
  const uint32_t *outputs; /* model->output_count tensor indices */
  const uint8_t *code;     /* NULL when the artifact has no CODE section */
  uint64_t code_size;
  const uint8_t *constants; /* NULL when it has no CONSTANTS section */
  uint64_t constants_size;
  /* CUDA: the CUBIN section, present exactly when target_features has
   * DLCX_FEATURE_CUDA_CUBIN; NULL otherwise. Last, so that drivers built
   * against the view without it still read the fields they know. */
  const uint8_t *cubin;
  uint64_t cubin_size;
  /* Since 1.2 (NULL before): one entry per kernel. */
  const dlcx_kernel_limits_t *kernel_limits;
  /* Since 1.3: the CPU_CODE_ID section's fingerprint, when present. */
  int has_cpu_code_id;
  uint64_t cpu_code_id;
} dlc_artifact_t;

/*===--- the vtable ----------------------------------------------------===*/

struct dlc_driver_t {
  uint32_t abi_version; /* DLC_DRIVER_ABI_VERSION */
  dlcx_target_t target;
  const char *name; /* "cpu", "vulkan", "cuda", "acme-npu", ... */
  void *self;       /* the driver's own state, for its functions */

  /* DLC_OK when the device can be used; otherwise DLC_ERROR_UNAVAILABLE and
   * what is missing in `message`. NULL: always available. */
  dlc_status_t (*probe)(const dlc_driver_t *driver, dlc_message_t *message);

  /* Prepares a model: checks target features against the device and builds
   * everything sessions share. `artifact` and `allocator` outlive the
   * returned state. `options` is complete (the core fills defaults). */
  dlc_status_t (*model_prepare)(const dlc_driver_t *driver,
                                const dlc_allocator_t *allocator,
                                const dlc_artifact_t *artifact,
                                const dlc_model_options_t *options,
                                dlc_message_t *message, void **out_model);
  void (*model_release)(void *model);

  /* Allocates everything `run` needs: the arena, per-launch bindings,
   * threads or command buffers, the timings array. */
  dlc_status_t (*session_create)(void *model,
                                 const dlc_session_options_t *options,
                                 dlc_message_t *message, void **out_session);
  void (*session_destroy)(void *session);

  /* Copies tensor->size bytes from `data` into the (arena) tensor. The core
   * checked the size and that `tensor` is a model input. */
  dlc_status_t (*set_input)(void *session, const dlcx_tensor_t *tensor,
                            const void *data, dlc_message_t *message);
  /* Runs every launch in order. Must not allocate. */
  dlc_status_t (*run)(void *session, dlc_message_t *message);
  /* Copies tensor->size bytes of the (arena) tensor to `data`. */
  dlc_status_t (*get_output)(void *session, const dlcx_tensor_t *tensor,
                             void *data, dlc_message_t *message);
  /* One entry per launch of the last run, borrowed from the session; a
   * count of 0 before the first run. Only called when the session was
   * created with enable_profiling. */
  dlc_status_t (*timings)(const void *session,
                          const dlc_kernel_timing_t **out_timings,
                          uint32_t *out_count);

  /* Frees the driver itself; NULL when its storage is the application's. */
  void (*destroy)(dlc_driver_t *driver);
};

/* Destroys a driver created by a dlc_*_driver_create function, after every
 * context that registered it is destroyed. NULL-safe. */
void dlc_driver_destroy(dlc_driver_t *driver);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_DRIVER_H */
