/*===- cuda_driver.c - run PTX kernels on an NVIDIA GPU -------------------===*
 *
 * libcuda.so.1 is opened with dlopen and the driver API resolved through a
 * symbol table (cuda_api.h), so no CUDA SDK is needed to build. Model
 * prepare loads the kernels (the artifact's cubin when the device's compute
 * capability is exactly target_sm, else the PTX, which the driver JIT-
 * compiles for newer devices) and uploads the weights once. Session create
 * allocates the arena and one stream and captures the whole launch sequence
 * once into a CUDA graph; a run replays it. Kernel parameters are the
 * launch's buffers as plain device pointers, in order.
 *
 * Every entry point makes the model's context current with
 * cuCtxPushCurrent and restores the caller's with cuCtxPopCurrent, so
 * sessions may run on any thread and applications keep their own contexts.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#if defined(DLC_RUNTIME_NO_DLOPEN)
#error                                                                         \
    "the CUDA driver opens libcuda with dlopen: leave it out of builds without a dynamic loader"
#endif

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common.h"
#include "cuda_api.h"
#include "dlc/cuda_driver.h"

#define DLC_CU_FEATURE_MASK ((uint64_t)DLCX_FEATURE_CUDA_CUBIN)

typedef struct dlc_cu_driver_t {
  dlc_driver_t driver; /* first: the vtable's address is the state's */
  dlc_allocator_t allocator;
  dlc_mutex_t lock;   /* opening the library, once */
  char *library_path; /* dlc_cuda_driver_options_t.library, or NULL */
  void *library;      /* set once cuInit succeeded */
  dlc_cu_api_t api;
} dlc_cu_driver_t;

/* One loaded module: a PTX blob of CODE, or the CUBIN section. */
typedef struct dlc_cu_blob_t {
  uint64_t offset;
  uint64_t size;
  dlc_cu_module_t module;
} dlc_cu_blob_t;

typedef struct dlc_cu_model_t {
  dlc_allocator_t allocator;
  const dlc_cu_api_t *api;
  const dlc_artifact_t *artifact;
  dlc_cu_device_t device;
  dlc_cu_context_t context; /* the device's primary context, retained */
  dlc_cu_blob_t *blobs;
  uint32_t blob_count;
  int uses_cubin;
  dlc_cu_function_t *functions; /* per kernel */
  dlc_cu_ptr_t constants;       /* 0 without weights */
} dlc_cu_model_t;

typedef struct dlc_cu_session_t {
  dlc_cu_model_t *model;
  dlc_cu_ptr_t arena; /* 0 for an empty arena */
  dlc_cu_stream_t stream;
  dlc_cu_ptr_t *args; /* per binding: the buffer's device address */
  void **params;      /* per binding: &args[i], what cuLaunchKernel reads */
  dlc_cu_graph_t graph;
  dlc_cu_graph_exec_t exec; /* NULL when profiling or without launches */
  dlc_cu_event_t *events;   /* profiling: the start, then two per launch */
  dlc_kernel_timing_t *timings;
  uint32_t timing_count; /* 0 until the first run */
} dlc_cu_session_t;

/* A zeroed table of `count` elements (at least one), or NULL. */
static void *dlc_cu_calloc(const dlc_allocator_t *allocator, uint64_t count,
                           size_t element_size) {
  void *ptr;
  if (count == 0)
    count = 1;
  if (count > (uint64_t)((size_t)-1 / element_size))
    return NULL;
  ptr = allocator->alloc(allocator->self, (size_t)count * element_size, 16);
  if (ptr)
    memset(ptr, 0, (size_t)count * element_size);
  return ptr;
}

/* Reports a failed driver call: what was done, and CUDA's own words. */
static dlc_status_t dlc_cu_fail(const dlc_cu_api_t *api, dlc_cu_result_t result,
                                dlc_message_t *message, const char *what) {
  const char *name = NULL, *text = NULL;
  if (api->cuGetErrorName(result, &name) != DLC_CUDA_SUCCESS)
    name = NULL;
  if (api->cuGetErrorString(result, &text) != DLC_CUDA_SUCCESS)
    text = NULL;
  return dlc_message_set(
      message,
      result == DLC_CUDA_ERROR_OUT_OF_MEMORY ? DLC_ERROR_OUT_OF_MEMORY
                                             : DLC_ERROR_DEVICE,
      "%s failed: %s (%s, CUDA error %d)", what, text ? text : "no description",
      name ? name : "unknown", result);
}

/*===--- the library ----------------------------------------------------===*/

/* Opens the library, resolves the table and initialises CUDA, unless an
 * earlier call did. A failure leaves nothing open, so a later call (after
 * the user installed a driver, say) tries again. */
static dlc_status_t dlc_cu_open(dlc_cu_driver_t *cu, dlc_message_t *message) {
  const char *path = cu->library_path;
  dlc_status_t status = DLC_OK;
  dlc_cu_result_t result;
  void *library;

  dlc_mutex_lock(&cu->lock);
  if (cu->library) {
    dlc_mutex_unlock(&cu->lock);
    return DLC_OK;
  }
  if (!path)
    path = "libcuda.so.1";
  library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    dlc_mutex_unlock(&cu->lock);
    return dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                           "CUDA is not available: cannot load the CUDA "
                           "driver library '%s' (%s); install the NVIDIA "
                           "driver",
                           path, why ? why : "dlopen failed");
  }
  /* ISO C has no object-to-function pointer conversion; POSIX guarantees
   * the representation is the same, so copy the bits. */
#define DLC_CU_RESOLVE(field, symbol, parameters)                              \
  if (status == DLC_OK) {                                                      \
    void *address = dlsym(library, symbol);                                    \
    memcpy(&cu->api.field, &address, sizeof(cu->api.field));                   \
    if (!address)                                                              \
      status = dlc_message_set(message, DLC_ERROR_UNAVAILABLE,                 \
                               "CUDA is not available: '%s' lacks " symbol     \
                               " (dlc needs a driver for CUDA 11.4 or newer)", \
                               path);                                          \
  }
  DLC_CU_FUNCTIONS(DLC_CU_RESOLVE)
#undef DLC_CU_RESOLVE
  if (status == DLC_OK && (result = cu->api.cuInit(0)) != DLC_CUDA_SUCCESS) {
    if (result == DLC_CUDA_ERROR_NO_DEVICE ||
        result == DLC_CUDA_ERROR_INSUFFICIENT_DRIVER)
      status = dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                               "CUDA is not available: cuInit reports %s",
                               result == DLC_CUDA_ERROR_NO_DEVICE
                                   ? "no CUDA-capable device"
                                   : "a driver older than the CUDA library");
    else
      status = dlc_cu_fail(&cu->api, result, message, "cuInit");
    if (status == DLC_ERROR_DEVICE)
      status = DLC_ERROR_UNAVAILABLE;
  }
  if (status == DLC_OK)
    cu->library = library;
  else
    dlclose(library);
  dlc_mutex_unlock(&cu->lock);
  return status;
}

/* The device `index` counts to, with its name and compute capability
 * (major * 10 + minor). */
static dlc_status_t dlc_cu_device(const dlc_cu_api_t *api, uint32_t index,
                                  dlc_cu_device_t *out_device, char *name,
                                  int name_size, uint32_t *out_sm,
                                  dlc_message_t *message) {
  dlc_cu_result_t result;
  int count = 0, major = 0, minor = 0;
  if ((result = api->cuDeviceGetCount(&count)) != DLC_CUDA_SUCCESS)
    return dlc_cu_fail(api, result, message, "cuDeviceGetCount");
  if (count <= 0 || index >= (uint32_t)count)
    return dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                           "device_index %" PRIu32 ": there are %d CUDA "
                           "devices",
                           index, count);
  if ((result = api->cuDeviceGet(out_device, (int)index)) != DLC_CUDA_SUCCESS ||
      (result = api->cuDeviceGetName(name, name_size, *out_device)) !=
          DLC_CUDA_SUCCESS ||
      (result = api->cuDeviceGetAttribute(
           &major, DLC_CU_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, *out_device)) !=
          DLC_CUDA_SUCCESS ||
      (result = api->cuDeviceGetAttribute(
           &minor, DLC_CU_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, *out_device)) !=
          DLC_CUDA_SUCCESS)
    return dlc_cu_fail(api, result, message, "querying the CUDA device");
  name[name_size - 1] = '\0';
  *out_sm = (uint32_t)(major * 10 + minor);
  return DLC_OK;
}

/*===--- model ----------------------------------------------------------===*/

/* What can be checked before touching a device. */
static dlc_status_t dlc_cu_check_artifact(const dlc_artifact_t *a,
                                          dlc_message_t *message) {
  uint64_t features = a->header->target_features;
  uint32_t i;
  if (features & ~DLC_CU_FEATURE_MASK)
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "the artifact needs target features 0x%" PRIx64
                           " that the CUDA driver does not know",
                           features & ~DLC_CU_FEATURE_MASK);
  if (a->header->target_sm == 0)
    return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                           "invalid artifact: a CUDA artifact with "
                           "target_sm 0");
  if (a->cubin_size == 0 && (features & DLCX_FEATURE_CUDA_CUBIN))
    return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                           "invalid artifact: the CUBIN section is empty");
  for (i = 0; i < a->kernel_count; ++i) {
    const dlcx_kernel_t *k = &a->kernels[i];
    if (k->code_format != DLCX_CODE_PTX)
      return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                             "kernel %" PRIu32 " ('%s'): code_format %" PRIu32
                             " is not PTX (CUDA kernels reference PTX; a "
                             "cubin goes in the CUBIN section)",
                             i, a->strings + k->name, k->code_format);
    /* The driver reads PTX as a C string. */
    if (k->code_size == 0 || a->code[k->code_offset + k->code_size - 1] != 0)
      return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                             "invalid artifact: kernel %" PRIu32 " ('%s'): "
                             "its PTX (%" PRIu64 " bytes) is not "
                             "NUL-terminated",
                             i, a->strings + k->name, k->code_size);
  }
  return DLC_OK;
}

/* The launch configuration every kernel and launch asks for fits the
 * device, so that a run cannot fail on it. */
static dlc_status_t dlc_cu_check_limits(const dlc_cu_api_t *api,
                                        const dlc_artifact_t *a,
                                        dlc_cu_device_t device,
                                        const char *name,
                                        dlc_message_t *message) {
  int block[3], grid[3], threads;
  dlc_cu_result_t result = api->cuDeviceGetAttribute(
      &threads, DLC_CU_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device);
  uint32_t i, j;
  for (i = 0; i < 3 && result == DLC_CUDA_SUCCESS; ++i) {
    result = api->cuDeviceGetAttribute(
        &block[i], DLC_CU_ATTRIBUTE_MAX_BLOCK_DIM_X + (int)i, device);
    if (result == DLC_CUDA_SUCCESS)
      result = api->cuDeviceGetAttribute(
          &grid[i], DLC_CU_ATTRIBUTE_MAX_GRID_DIM_X + (int)i, device);
  }
  if (result != DLC_CUDA_SUCCESS)
    return dlc_cu_fail(api, result, message, "cuDeviceGetAttribute");
  for (i = 0; i < a->kernel_count; ++i) {
    const uint32_t *wg = a->kernels[i].workgroup_size;
    if ((int64_t)wg[0] > block[0] || (int64_t)wg[1] > block[1] ||
        (int64_t)wg[2] > block[2] ||
        (uint64_t)wg[0] * wg[1] * wg[2] > (uint64_t)threads)
      return dlc_message_set(
          message, DLC_ERROR_UNSUPPORTED,
          "kernel %" PRIu32 " ('%s'): block %" PRIu32 "x%" PRIu32 "x%" PRIu32
          " exceeds what CUDA device '%s' runs (%dx%dx%d, "
          "%d threads)",
          i, a->strings + a->kernels[i].name, wg[0], wg[1], wg[2], name,
          block[0], block[1], block[2], threads);
  }
  for (i = 0; i < a->launch_count; ++i)
    for (j = 0; j < 3; ++j)
      if ((int64_t)a->launches[i].grid[j] > grid[j])
        return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                               "launch %" PRIu32 ": grid[%" PRIu32
                               "] = %" PRIu32 " exceeds the %d blocks CUDA "
                               "device '%s' launches",
                               i, j, a->launches[i].grid[j], grid[j], name);
  return DLC_OK;
}

static void dlc_cu_model_release(void *model_ptr) {
  dlc_cu_model_t *model = (dlc_cu_model_t *)model_ptr;
  const dlc_cu_api_t *api;
  uint32_t i;
  if (!model)
    return;
  api = model->api;
  if (model->context &&
      api->cuCtxPushCurrent(model->context) == DLC_CUDA_SUCCESS) {
    dlc_cu_context_t previous;
    for (i = 0; i < model->blob_count; ++i)
      api->cuModuleUnload(model->blobs[i].module);
    if (model->constants)
      api->cuMemFree(model->constants);
    api->cuCtxPopCurrent(&previous);
  }
  if (model->context)
    api->cuDevicePrimaryCtxRelease(model->device);
  model->allocator.free(model->allocator.self, model->functions);
  model->allocator.free(model->allocator.self, model->blobs);
  model->allocator.free(model->allocator.self, model);
}

/* Loads `image` (PTX text or a cubin) as a module; with the JIT's own error
 * log in the message when it is refused. */
static dlc_status_t dlc_cu_load(dlc_cu_model_t *model, const uint8_t *image,
                                uint64_t offset, uint64_t size,
                                const char *what, dlc_message_t *message) {
  const dlc_cu_api_t *api = model->api;
  dlc_cu_blob_t *blob = &model->blobs[model->blob_count];
  char log[256];
  int options[2] = {DLC_CU_JIT_ERROR_LOG_BUFFER,
                    DLC_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[2];
  dlc_cu_result_t result;
  log[0] = '\0';
  values[0] = log;
  values[1] = (void *)(uintptr_t)sizeof(log);
  result = api->cuModuleLoadDataEx(&blob->module, image, 2, options, values);
  if (result != DLC_CUDA_SUCCESS) {
    char context[96];
    dlc_status_t status;
    size_t used;
    snprintf(context, sizeof(context), "cuModuleLoadDataEx of %s", what);
    status = dlc_cu_fail(api, result, message, context);
    log[sizeof(log) - 1] = '\0';
    used = strlen(message->text);
    if (log[0] && used + 1 < message->capacity)
      snprintf(message->text + used, message->capacity - used, "; JIT log: %s",
               log);
    return status;
  }
  blob->offset = offset;
  blob->size = size;
  ++model->blob_count;
  return DLC_OK;
}

/* The module of kernel `index`, loaded unless an earlier kernel did, and
 * the kernel's function in it. */
static dlc_status_t dlc_cu_resolve(dlc_cu_model_t *model, uint32_t index,
                                   dlc_message_t *message) {
  const dlc_artifact_t *a = model->artifact;
  const dlcx_kernel_t *k = &a->kernels[index];
  const char *name = a->strings + k->name;
  dlc_cu_result_t result;
  dlc_status_t status;
  char what[64];
  uint32_t i;

  for (i = 0; i < model->blob_count; ++i)
    if (model->uses_cubin || (model->blobs[i].offset == k->code_offset &&
                              model->blobs[i].size == k->code_size))
      break;
  if (i == model->blob_count) {
    snprintf(what, sizeof(what), "the PTX of kernel %" PRIu32, index);
    status = dlc_cu_load(model, a->code + k->code_offset, k->code_offset,
                         k->code_size, what, message);
    if (status != DLC_OK)
      return status;
  }
  result = model->api->cuModuleGetFunction(&model->functions[index],
                                           model->blobs[i].module, name);
  if (result == DLC_CUDA_ERROR_NOT_FOUND)
    return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                           "kernel %" PRIu32 ": '%s' is not an entry point "
                           "of its %s",
                           index, name,
                           model->uses_cubin ? "cubin" : "PTX module");
  if (result != DLC_CUDA_SUCCESS) {
    snprintf(what, sizeof(what), "cuModuleGetFunction of kernel %" PRIu32,
             index);
    return dlc_cu_fail(model->api, result, message, what);
  }
  return DLC_OK;
}

/* Everything model prepare does with the context current. */
static dlc_status_t dlc_cu_model_load(dlc_cu_model_t *model, uint32_t sm,
                                      dlc_message_t *message) {
  const dlc_artifact_t *a = model->artifact;
  const dlc_cu_api_t *api = model->api;
  dlc_status_t status = DLC_OK;
  dlc_cu_result_t result;
  uint32_t i;

  model->uses_cubin = a->cubin && sm == a->header->target_sm;
  if (model->uses_cubin)
    status =
        dlc_cu_load(model, a->cubin, 0, a->cubin_size, "the cubin", message);
  for (i = 0; i < a->kernel_count && status == DLC_OK; ++i)
    status = dlc_cu_resolve(model, i, message);
  if (status != DLC_OK || !a->constants_size)
    return status;
  result = api->cuMemAlloc(&model->constants, (size_t)a->constants_size);
  if (result != DLC_CUDA_SUCCESS) {
    model->constants = 0;
    return dlc_cu_fail(api, result, message, "cuMemAlloc of the weights");
  }
  /* The legacy stream: done before any session's stream uses them. */
  result = api->cuMemcpyHtoDAsync(model->constants, a->constants,
                                  (size_t)a->constants_size, NULL);
  if (result == DLC_CUDA_SUCCESS)
    result = api->cuStreamSynchronize(NULL);
  if (result != DLC_CUDA_SUCCESS)
    return dlc_cu_fail(api, result, message, "uploading the weights");
  return DLC_OK;
}

static dlc_status_t dlc_cu_model_prepare(const dlc_driver_t *driver,
                                         const dlc_allocator_t *allocator,
                                         const dlc_artifact_t *artifact,
                                         const dlc_model_options_t *options,
                                         dlc_message_t *message,
                                         void **out_model) {
  dlc_cu_driver_t *cu = (dlc_cu_driver_t *)driver->self;
  const dlc_cu_api_t *api = &cu->api;
  uint32_t target = artifact->header->target_sm, sm = 0;
  dlc_cu_context_t previous;
  dlc_cu_device_t device = 0;
  dlc_cu_model_t *model;
  dlc_cu_result_t result;
  dlc_status_t status;
  char name[128];

  name[0] = '\0';
  status = dlc_cu_check_artifact(artifact, message);
  if (status == DLC_OK)
    status = dlc_cu_open(cu, message);
  if (status == DLC_OK)
    status = dlc_cu_device(api, options->device_index, &device, name,
                           (int)sizeof(name), &sm, message);
  if (status == DLC_OK && sm < target)
    status = dlc_message_set(
        message, DLC_ERROR_UNSUPPORTED,
        "CUDA device %" PRIu32 " ('%s') has compute capability %" PRIu32
        ".%" PRIu32 "; the artifact is compiled for sm_%" PRIu32
        " and needs that or a newer device",
        options->device_index, name, sm / 10, sm % 10, target);
  if (status == DLC_OK)
    status = dlc_cu_check_limits(api, artifact, device, name, message);
  if (status != DLC_OK)
    return status;

  model = (dlc_cu_model_t *)dlc_cu_calloc(allocator, 1, sizeof(*model));
  if (!model)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the CUDA model");
  model->allocator = *allocator;
  model->api = api;
  model->artifact = artifact;
  model->device = device;
  model->blobs = (dlc_cu_blob_t *)dlc_cu_calloc(
      allocator, (uint64_t)artifact->kernel_count + 1, sizeof(dlc_cu_blob_t));
  model->functions = (dlc_cu_function_t *)dlc_cu_calloc(
      allocator, artifact->kernel_count, sizeof(dlc_cu_function_t));
  if (!model->blobs || !model->functions) {
    dlc_cu_model_release(model);
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate %" PRIu32 " CUDA kernels",
                           artifact->kernel_count);
  }
  result = api->cuDevicePrimaryCtxRetain(&model->context, device);
  if (result != DLC_CUDA_SUCCESS) {
    model->context = NULL;
    status = dlc_cu_fail(api, result, message, "cuDevicePrimaryCtxRetain");
  } else if ((result = api->cuCtxPushCurrent(model->context)) !=
             DLC_CUDA_SUCCESS) {
    status = dlc_cu_fail(api, result, message, "cuCtxPushCurrent");
  } else {
    status = dlc_cu_model_load(model, sm, message);
    api->cuCtxPopCurrent(&previous);
  }
  if (status != DLC_OK) {
    dlc_cu_model_release(model);
    return status;
  }
  *out_model = model;
  return DLC_OK;
}

/*===--- session --------------------------------------------------------===*/

static void dlc_cu_session_destroy(void *session_ptr) {
  dlc_cu_session_t *session = (dlc_cu_session_t *)session_ptr;
  const dlc_allocator_t *allocator;
  const dlc_cu_api_t *api;
  dlc_cu_context_t previous;
  uint32_t i;
  if (!session)
    return;
  allocator = &session->model->allocator;
  api = session->model->api;
  if (api->cuCtxPushCurrent(session->model->context) == DLC_CUDA_SUCCESS) {
    if (session->exec)
      api->cuGraphExecDestroy(session->exec);
    if (session->graph)
      api->cuGraphDestroy(session->graph);
    for (i = 0;
         session->events && i < 1 + 2 * session->model->artifact->launch_count;
         ++i)
      if (session->events[i])
        api->cuEventDestroy(session->events[i]);
    if (session->stream)
      api->cuStreamDestroy(session->stream);
    if (session->arena)
      api->cuMemFree(session->arena);
    api->cuCtxPopCurrent(&previous);
  }
  allocator->free(allocator->self, session->timings);
  allocator->free(allocator->self, session->events);
  allocator->free(allocator->self, session->params);
  allocator->free(allocator->self, session->args);
  allocator->free(allocator->self, session);
}

/* Queues launch `index` on the session's stream. */
static dlc_cu_result_t dlc_cu_launch(const dlc_cu_session_t *s,
                                     uint32_t index) {
  const dlc_artifact_t *a = s->model->artifact;
  const dlcx_launch_t *l = &a->launches[index];
  const uint32_t *block = a->kernels[l->kernel].workgroup_size;
  return s->model->api->cuLaunchKernel(
      s->model->functions[l->kernel], l->grid[0], l->grid[1], l->grid[2],
      block[0], block[1], block[2], 0, s->stream,
      l->binding_count ? s->params + l->binding_begin : NULL, NULL);
}

/* Records every launch once into a graph and instantiates it. */
static dlc_status_t dlc_cu_capture(dlc_cu_session_t *s,
                                   dlc_message_t *message) {
  const dlc_cu_api_t *api = s->model->api;
  uint32_t count = s->model->artifact->launch_count, i;
  dlc_cu_result_t result, end;
  char what[48];

  if (!count)
    return DLC_OK;
  result = api->cuStreamBeginCapture(s->stream,
                                     DLC_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (result != DLC_CUDA_SUCCESS)
    return dlc_cu_fail(api, result, message, "cuStreamBeginCapture");
  for (i = 0; i < count && result == DLC_CUDA_SUCCESS; ++i)
    result = dlc_cu_launch(s, i);
  /* Ended even after a failed launch, which leaves the stream capturing. */
  end = api->cuStreamEndCapture(s->stream, &s->graph);
  if (end != DLC_CUDA_SUCCESS)
    s->graph = NULL;
  if (result != DLC_CUDA_SUCCESS) {
    snprintf(what, sizeof(what), "cuLaunchKernel of launch %" PRIu32, i - 1);
    return dlc_cu_fail(api, result, message, what);
  }
  if (end != DLC_CUDA_SUCCESS)
    return dlc_cu_fail(api, end, message, "cuStreamEndCapture");
  result = api->cuGraphInstantiateWithFlags(&s->exec, s->graph, 0);
  if (result != DLC_CUDA_SUCCESS) {
    s->exec = NULL;
    return dlc_cu_fail(api, result, message, "cuGraphInstantiateWithFlags");
  }
  return DLC_OK;
}

/* Everything session create does with the context current. */
static dlc_status_t dlc_cu_session_load(dlc_cu_session_t *s, int profiling,
                                        dlc_message_t *message) {
  const dlc_cu_model_t *model = s->model;
  const dlc_artifact_t *a = model->artifact;
  const dlc_cu_api_t *api = model->api;
  uint64_t arena_size = a->model->arena_size;
  dlc_cu_result_t result;
  uint32_t i;

  result = api->cuStreamCreate(&s->stream, DLC_CU_STREAM_NON_BLOCKING);
  if (result != DLC_CUDA_SUCCESS) {
    s->stream = NULL;
    return dlc_cu_fail(api, result, message, "cuStreamCreate");
  }
  if (arena_size) {
    result = api->cuMemAlloc(&s->arena, (size_t)arena_size);
    if (result != DLC_CUDA_SUCCESS) {
      s->arena = 0;
      return dlc_cu_fail(api, result, message, "cuMemAlloc of the arena");
    }
    /* Zeroed once so that a run never reads indeterminate arena bytes. */
    result = api->cuMemsetD8Async(s->arena, 0, (size_t)arena_size, s->stream);
    if (result == DLC_CUDA_SUCCESS)
      result = api->cuStreamSynchronize(s->stream);
    if (result != DLC_CUDA_SUCCESS)
      return dlc_cu_fail(api, result, message, "zeroing the arena");
  }
  for (i = 0; i < a->binding_count; ++i) {
    const dlcx_tensor_t *t = &a->tensors[a->bindings[i]];
    s->args[i] =
        (t->storage == DLCX_STORAGE_ARENA ? s->arena : model->constants) +
        (dlc_cu_ptr_t)t->offset;
    s->params[i] = &s->args[i];
  }
  if (!profiling)
    return dlc_cu_capture(s, message);
  for (i = 0; i < 1 + 2 * a->launch_count; ++i) {
    result = api->cuEventCreate(&s->events[i], DLC_CU_EVENT_DEFAULT);
    if (result != DLC_CUDA_SUCCESS) {
      s->events[i] = NULL;
      return dlc_cu_fail(api, result, message, "cuEventCreate");
    }
  }
  for (i = 0; i < a->launch_count; ++i)
    s->timings[i].kernel_name =
        a->strings + a->kernels[a->launches[i].kernel].name;
  return DLC_OK;
}

static dlc_status_t dlc_cu_session_create(void *model_ptr,
                                          const dlc_session_options_t *options,
                                          dlc_message_t *message,
                                          void **out_session) {
  dlc_cu_model_t *model = (dlc_cu_model_t *)model_ptr;
  const dlc_allocator_t *allocator = &model->allocator;
  const dlc_artifact_t *a = model->artifact;
  int profiling = options->enable_profiling != 0;
  dlc_cu_session_t *session;
  dlc_cu_context_t previous;
  dlc_cu_result_t result;
  dlc_status_t status;

  session = (dlc_cu_session_t *)dlc_cu_calloc(allocator, 1, sizeof(*session));
  if (!session)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the CUDA session");
  session->model = model;
  session->args = (dlc_cu_ptr_t *)dlc_cu_calloc(allocator, a->binding_count,
                                                sizeof(dlc_cu_ptr_t));
  session->params =
      (void **)dlc_cu_calloc(allocator, a->binding_count, sizeof(void *));
  if (profiling) {
    session->events = (dlc_cu_event_t *)dlc_cu_calloc(
        allocator, 1 + 2 * (uint64_t)a->launch_count, sizeof(dlc_cu_event_t));
    session->timings = (dlc_kernel_timing_t *)dlc_cu_calloc(
        allocator, a->launch_count, sizeof(dlc_kernel_timing_t));
  }
  if (!session->args || !session->params ||
      (profiling && (!session->events || !session->timings))) {
    dlc_cu_session_destroy(session);
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the CUDA session's tables");
  }
  result = model->api->cuCtxPushCurrent(model->context);
  if (result != DLC_CUDA_SUCCESS) {
    dlc_cu_session_destroy(session);
    return dlc_cu_fail(model->api, result, message, "cuCtxPushCurrent");
  }
  status = dlc_cu_session_load(session, profiling, message);
  model->api->cuCtxPopCurrent(&previous);
  if (status != DLC_OK) {
    dlc_cu_session_destroy(session);
    return status;
  }
  *out_session = session;
  return DLC_OK;
}

/* Copies between host memory and the arena on the session's stream and
 * waits, so the caller's buffer is free (or filled) on return. */
static dlc_status_t dlc_cu_copy(dlc_cu_session_t *s,
                                const dlcx_tensor_t *tensor, void *host,
                                const void *source, dlc_message_t *message) {
  const dlc_cu_api_t *api = s->model->api;
  dlc_cu_ptr_t device = s->arena + (dlc_cu_ptr_t)tensor->offset;
  dlc_cu_context_t previous;
  dlc_cu_result_t result;
  if (!tensor->size)
    return DLC_OK;
  result = api->cuCtxPushCurrent(s->model->context);
  if (result != DLC_CUDA_SUCCESS)
    return dlc_cu_fail(api, result, message, "cuCtxPushCurrent");
  result = source ? api->cuMemcpyHtoDAsync(device, source, (size_t)tensor->size,
                                           s->stream)
                  : api->cuMemcpyDtoHAsync(host, device, (size_t)tensor->size,
                                           s->stream);
  if (result == DLC_CUDA_SUCCESS)
    result = api->cuStreamSynchronize(s->stream);
  api->cuCtxPopCurrent(&previous);
  if (result != DLC_CUDA_SUCCESS)
    return dlc_cu_fail(api, result, message,
                       source ? "copying an input to the device"
                              : "copying an output from the device");
  return DLC_OK;
}

static dlc_status_t dlc_cu_set_input(void *session_ptr,
                                     const dlcx_tensor_t *tensor,
                                     const void *data, dlc_message_t *message) {
  return dlc_cu_copy((dlc_cu_session_t *)session_ptr, tensor, NULL, data,
                     message);
}

static dlc_status_t dlc_cu_get_output(void *session_ptr,
                                      const dlcx_tensor_t *tensor, void *data,
                                      dlc_message_t *message) {
  return dlc_cu_copy((dlc_cu_session_t *)session_ptr, tensor, data, NULL,
                     message);
}

/* Launches one by one between events, then reads the times. */
static dlc_cu_result_t dlc_cu_run_profiled(dlc_cu_session_t *s,
                                           const char **out_what) {
  const dlc_cu_api_t *api = s->model->api;
  uint32_t count = s->model->artifact->launch_count, i;
  dlc_cu_result_t result;
  float start, duration;

  *out_what = "cuEventRecord";
  result = api->cuEventRecord(s->events[0], s->stream);
  for (i = 0; i < count && result == DLC_CUDA_SUCCESS; ++i) {
    result = api->cuEventRecord(s->events[1 + 2 * i], s->stream);
    if (result == DLC_CUDA_SUCCESS &&
        (result = dlc_cu_launch(s, i)) != DLC_CUDA_SUCCESS)
      *out_what = "cuLaunchKernel";
    if (result == DLC_CUDA_SUCCESS)
      result = api->cuEventRecord(s->events[2 + 2 * i], s->stream);
  }
  if (result != DLC_CUDA_SUCCESS)
    return result;
  *out_what = "cuStreamSynchronize";
  if ((result = api->cuStreamSynchronize(s->stream)) != DLC_CUDA_SUCCESS)
    return result;
  *out_what = "cuEventElapsedTime";
  for (i = 0; i < count; ++i) {
    if ((result = api->cuEventElapsedTime(
             &start, s->events[0], s->events[1 + 2 * i])) != DLC_CUDA_SUCCESS ||
        (result = api->cuEventElapsedTime(&duration, s->events[1 + 2 * i],
                                          s->events[2 + 2 * i])) !=
            DLC_CUDA_SUCCESS)
      return result;
    /* Milliseconds as a float: rounded, not truncated, to nanoseconds. */
    s->timings[i].start_ns = (uint64_t)((double)start * 1e6 + 0.5);
    s->timings[i].duration_ns = (uint64_t)((double)duration * 1e6 + 0.5);
  }
  s->timing_count = count;
  return DLC_CUDA_SUCCESS;
}

static dlc_status_t dlc_cu_run(void *session_ptr, dlc_message_t *message) {
  dlc_cu_session_t *s = (dlc_cu_session_t *)session_ptr;
  const dlc_cu_api_t *api = s->model->api;
  const char *what = "cuGraphLaunch";
  dlc_cu_context_t previous;
  dlc_cu_result_t result = api->cuCtxPushCurrent(s->model->context);
  if (result != DLC_CUDA_SUCCESS)
    return dlc_cu_fail(api, result, message, "cuCtxPushCurrent");
  if (s->events) {
    result = dlc_cu_run_profiled(s, &what);
  } else {
    if (s->exec)
      result = api->cuGraphLaunch(s->exec, s->stream);
    if (result == DLC_CUDA_SUCCESS) {
      what = "cuStreamSynchronize";
      result = api->cuStreamSynchronize(s->stream);
    }
  }
  api->cuCtxPopCurrent(&previous);
  if (result != DLC_CUDA_SUCCESS)
    return dlc_cu_fail(api, result, message, what);
  return DLC_OK;
}

static dlc_status_t dlc_cu_timings(const void *session_ptr,
                                   const dlc_kernel_timing_t **out_timings,
                                   uint32_t *out_count) {
  const dlc_cu_session_t *session = (const dlc_cu_session_t *)session_ptr;
  *out_timings = session->timings;
  *out_count = session->timing_count;
  return DLC_OK;
}

/*===--- the driver -----------------------------------------------------===*/

static dlc_status_t dlc_cu_probe(const dlc_driver_t *driver,
                                 dlc_message_t *message) {
  dlc_cu_driver_t *cu = (dlc_cu_driver_t *)driver->self;
  dlc_cu_result_t result;
  dlc_status_t status = dlc_cu_open(cu, message);
  int count = 0;
  if (status != DLC_OK)
    return status;
  if ((result = cu->api.cuDeviceGetCount(&count)) != DLC_CUDA_SUCCESS)
    return dlc_cu_fail(&cu->api, result, message, "cuDeviceGetCount");
  if (count <= 0)
    return dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                           "CUDA is not available: no CUDA device");
  return DLC_OK;
}

static void dlc_cu_driver_destroy(dlc_driver_t *driver) {
  dlc_cu_driver_t *cu = (dlc_cu_driver_t *)driver->self;
  if (cu->library)
    dlclose(cu->library);
  dlc_mutex_destroy(&cu->lock);
  cu->allocator.free(cu->allocator.self, cu->library_path);
  cu->allocator.free(cu->allocator.self, cu);
}

dlc_status_t
dlc_cuda_driver_create_with_options(const dlc_allocator_t *allocator,
                                    const dlc_cuda_driver_options_t *options,
                                    dlc_driver_t **out_driver) {
  dlc_allocator_t resolved =
      allocator && allocator->alloc ? *allocator : dlc_allocator_system();
  dlc_cuda_driver_options_t o;
  dlc_cu_driver_t *cu;
  int failed = 0;
  if (!out_driver)
    return DLC_ERROR_INVALID_ARGUMENT;
  memset(&o, 0, sizeof(o));
  if (!dlc_driver_options_copy(options, sizeof(o), &o))
    return DLC_ERROR_INVALID_ARGUMENT;
  cu = (dlc_cu_driver_t *)resolved.alloc(resolved.self, sizeof(*cu), 16);
  if (!cu)
    return DLC_ERROR_OUT_OF_MEMORY;
  memset(cu, 0, sizeof(*cu));
  cu->allocator = resolved;
  cu->library_path = dlc_driver_strdup(&resolved, o.library, &failed);
  if (failed || !dlc_mutex_init(&cu->lock)) {
    resolved.free(resolved.self, cu->library_path);
    resolved.free(resolved.self, cu);
    return failed ? DLC_ERROR_OUT_OF_MEMORY : DLC_ERROR_DEVICE;
  }
  cu->driver.abi_version = DLC_DRIVER_ABI_VERSION;
  cu->driver.target = DLCX_TARGET_CUDA;
  cu->driver.name = "cuda";
  cu->driver.self = cu;
  cu->driver.probe = dlc_cu_probe;
  cu->driver.model_prepare = dlc_cu_model_prepare;
  cu->driver.model_release = dlc_cu_model_release;
  cu->driver.session_create = dlc_cu_session_create;
  cu->driver.session_destroy = dlc_cu_session_destroy;
  cu->driver.set_input = dlc_cu_set_input;
  cu->driver.run = dlc_cu_run;
  cu->driver.get_output = dlc_cu_get_output;
  cu->driver.timings = dlc_cu_timings;
  cu->driver.destroy = dlc_cu_driver_destroy;
  *out_driver = &cu->driver;
  return DLC_OK;
}

dlc_status_t dlc_cuda_driver_create(const dlc_allocator_t *allocator,
                                    dlc_driver_t **out_driver) {
  return dlc_cuda_driver_create_with_options(allocator, NULL, out_driver);
}
