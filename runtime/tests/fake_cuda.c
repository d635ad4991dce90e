/*===- fake_cuda.c - a libcuda stand-in for the CUDA driver's tests -------===*
 *
 * See fake_cuda.h. Written from the driver API's documented behaviour, for
 * what the CUDA driver uses; whatever the driver does wrong (no current
 * context, an access outside an allocation, a copy during a capture, an
 * object leaked) becomes an error code or a counter a test checks.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "fake_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define FAKE_EXPORT __attribute__((visibility("default")))
#else
#define FAKE_EXPORT
#endif

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  FAKE_SUCCESS = 0,
  FAKE_INVALID_VALUE = 1,
  FAKE_OUT_OF_MEMORY = 2,
  FAKE_NOT_INITIALIZED = 3,
  FAKE_NO_DEVICE = 100,
  FAKE_INVALID_DEVICE = 101,
  FAKE_INVALID_CONTEXT = 201,
  FAKE_NO_BINARY_FOR_GPU = 209,
  FAKE_INVALID_PTX = 218,
  FAKE_INVALID_HANDLE = 400,
  FAKE_NOT_FOUND = 500,
  FAKE_LAUNCH_FAILED = 719,
  FAKE_CAPTURE_UNSUPPORTED = 900
};

/* The entry points, with the exported names and signatures libcuda has
 * (handles as void *). */
CUresult cuInit(unsigned flags);
CUresult cuGetErrorName(CUresult error, const char **name);
CUresult cuGetErrorString(CUresult error, const char **text);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(int *device, int ordinal);
CUresult cuDeviceGetName(char *name, int length, int device);
CUresult cuDeviceGetAttribute(int *value, int attribute, int device);
CUresult cuDevicePrimaryCtxRetain(void **context, int device);
CUresult cuDevicePrimaryCtxRelease_v2(int device);
CUresult cuCtxPushCurrent_v2(void *context);
CUresult cuCtxPopCurrent_v2(void **context);
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned count,
                            int *options, void **values);
CUresult cuModuleUnload(void *module);
CUresult cuModuleGetFunction(void **function, void *module, const char *name);
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t size);
CUresult cuMemFree_v2(CUdeviceptr pointer);
CUresult cuMemsetD8Async(CUdeviceptr pointer, unsigned char value, size_t count,
                         void *stream);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr target, const void *source,
                              size_t size, void *stream);
CUresult cuMemcpyDtoHAsync_v2(void *target, CUdeviceptr source, size_t size,
                              void *stream);
CUresult cuStreamCreate(void **stream, unsigned flags);
CUresult cuStreamSynchronize(void *stream);
CUresult cuStreamDestroy_v2(void *stream);
CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra);
CUresult cuStreamBeginCapture_v2(void *stream, int mode);
CUresult cuStreamEndCapture(void *stream, void **graph);
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long flags);
CUresult cuGraphLaunch(void *exec, void *stream);
CUresult cuGraphExecDestroy(void *exec);
CUresult cuGraphDestroy(void *graph);
CUresult cuEventCreate(void **event, unsigned flags);
CUresult cuEventRecord(void *event, void *stream);
CUresult cuEventElapsedTime(float *ms, void *start, void *end);
CUresult cuEventDestroy_v2(void *event);

#define FAKE_MAX_ENTRIES 16
#define FAKE_MAX_PARAMS 16
#define FAKE_MAX_KERNELS 32
#define FAKE_MAX_ALLOCATIONS 256
/* Each kernel that runs advances the fake clock by this much. */
#define FAKE_KERNEL_NS 10000ull

typedef struct fake_entry_t {
  char name[64];
  unsigned params;
} fake_entry_t;

typedef struct fake_module_t {
  fake_entry_t entries[FAKE_MAX_ENTRIES];
  unsigned count;
} fake_module_t;

/* A function handle is its entry, owned by the module. */
typedef struct fake_launch_t {
  const fake_entry_t *entry;
  unsigned grid[3], block[3];
  unsigned long long args[FAKE_MAX_PARAMS];
} fake_launch_t;

typedef struct fake_graph_t {
  fake_launch_t *launches;
  unsigned count;
} fake_graph_t;

typedef struct fake_stream_t {
  fake_graph_t *capture; /* non-NULL while capturing */
  unsigned capacity;
} fake_stream_t;

typedef struct fake_event_t {
  unsigned long long time_ns;
  int recorded;
} fake_event_t;

static struct {
  fake_cuda_stats_t stats;
  int devices;
  unsigned sm;
  int initialized;
  char fail_function[64];
  int fail_error;
  struct {
    char name[64];
    fake_cuda_kernel_fn fn;
  } kernels[FAKE_MAX_KERNELS];
  unsigned kernel_count;
  struct {
    unsigned char *base;
    size_t size;
  } allocations[FAKE_MAX_ALLOCATIONS];
  unsigned long long clock_ns;
  int context; /* the primary context: its address is the handle */
} g;

/*===--- the built-in kernels: the GPU chain of test_models.h -----------===*/

#define FAKE_FOR_EACH(grid, block, params, n_index, body)                      \
  do {                                                                         \
    uint32_t n_ = *FAKE_CUDA_ARG(params, n_index, const uint32_t *);           \
    unsigned x_, y_, z_;                                                       \
    for (z_ = 0; z_ < grid[2]; ++z_)                                           \
      for (y_ = 0; y_ < grid[1]; ++y_)                                         \
        for (x_ = 0; x_ < grid[0] * block[0]; ++x_) {                          \
          uint32_t i = x_ + grid[0] * block[0] * (y_ + grid[1] * z_);          \
          if (i < n_) {                                                        \
            body;                                                              \
          }                                                                    \
        }                                                                      \
  } while (0)

static void fake_add(void **params, const unsigned grid[3],
                     const unsigned block[3]) {
  const float *a = FAKE_CUDA_ARG(params, 0, const float *);
  const float *b = FAKE_CUDA_ARG(params, 1, const float *);
  float *out = FAKE_CUDA_ARG(params, 2, float *);
  FAKE_FOR_EACH(grid, block, params, 3, out[i] = a[i] + b[i]);
}

static void fake_reverse(void **params, const unsigned grid[3],
                         const unsigned block[3]) {
  const float *in = FAKE_CUDA_ARG(params, 0, const float *);
  float *out = FAKE_CUDA_ARG(params, 1, float *);
  uint32_t n = *FAKE_CUDA_ARG(params, 2, const uint32_t *);
  FAKE_FOR_EACH(grid, block, params, 2, out[i] = in[n - 1 - i]);
}

static void fake_scale(void **params, const unsigned grid[3],
                       const unsigned block[3]) {
  const float *in = FAKE_CUDA_ARG(params, 0, const float *);
  float scale = *FAKE_CUDA_ARG(params, 1, const float *);
  float *out = FAKE_CUDA_ARG(params, 2, float *);
  FAKE_FOR_EACH(grid, block, params, 3, out[i] = in[i] * scale);
}

static void fake_zero(void **params, const unsigned grid[3],
                      const unsigned block[3]) {
  uint32_t *out = FAKE_CUDA_ARG(params, 0, uint32_t *);
  FAKE_FOR_EACH(grid, block, params, 1, out[i] = 0);
}

static void fake_count(void **params, const unsigned grid[3],
                       const unsigned block[3]) {
  uint32_t *out = FAKE_CUDA_ARG(params, 0, uint32_t *);
  FAKE_FOR_EACH(grid, block, params, 1, out[i] += 1);
}

/*===--- configuration --------------------------------------------------===*/

FAKE_EXPORT void fake_cuda_register_kernel(const char *name,
                                           fake_cuda_kernel_fn fn) {
  unsigned i;
  for (i = 0; i < g.kernel_count; ++i)
    if (strcmp(g.kernels[i].name, name) == 0)
      break;
  if (i == FAKE_MAX_KERNELS)
    abort();
  snprintf(g.kernels[i].name, sizeof(g.kernels[i].name), "%s", name);
  g.kernels[i].fn = fn;
  if (i == g.kernel_count)
    ++g.kernel_count;
}

FAKE_EXPORT void fake_cuda_reset(void) {
  const char *devices = getenv("FAKE_CUDA_DEVICES");
  const char *sm = getenv("FAKE_CUDA_SM");
  memset(&g, 0, sizeof(g));
  g.devices = devices ? atoi(devices) : 1;
  g.sm = sm ? (unsigned)atoi(sm) : 87;
  fake_cuda_register_kernel("dlc_test_add", fake_add);
  fake_cuda_register_kernel("dlc_test_reverse", fake_reverse);
  fake_cuda_register_kernel("dlc_test_scale", fake_scale);
  fake_cuda_register_kernel("dlc_test_zero", fake_zero);
  fake_cuda_register_kernel("dlc_test_count", fake_count);
}

FAKE_EXPORT const fake_cuda_stats_t *fake_cuda_stats(void) { return &g.stats; }

FAKE_EXPORT void fake_cuda_set_devices(int count, unsigned sm) {
  g.devices = count;
  g.sm = sm;
}

FAKE_EXPORT void fake_cuda_fail_next(const char *function, int error) {
  snprintf(g.fail_function, sizeof(g.fail_function), "%s", function);
  g.fail_error = error;
}

/* Every entry point starts here: the injected failure, initialisation,
 * and (when `needs_context`) a current context. */
static CUresult fake_enter(const char *function, int needs_context) {
  CUresult error = FAKE_SUCCESS;
  if (!g.devices && !g.sm)
    fake_cuda_reset(); /* first use, in a process that never reset */
  if (g.fail_function[0] && strcmp(g.fail_function, function) == 0) {
    g.fail_function[0] = '\0';
    error = g.fail_error;
  } else if (!g.initialized && strcmp(function, "cuInit") != 0 &&
             strncmp(function, "cuGetError", 10) != 0) {
    error = FAKE_NOT_INITIALIZED;
  } else if (needs_context && g.stats.context_depth <= 0) {
    error = FAKE_INVALID_CONTEXT;
  }
  if (error != FAKE_SUCCESS)
    ++g.stats.errors;
  return error;
}

#define FAKE_ENTER(name, needs_context)                                        \
  do {                                                                         \
    CUresult enter_ = fake_enter(name, needs_context);                         \
    if (enter_ != FAKE_SUCCESS)                                                \
      return enter_;                                                           \
  } while (0)

/* Whether [pointer, pointer + size) lies inside one allocation. */
static int fake_inside(CUdeviceptr pointer, size_t size) {
  unsigned char *p = (unsigned char *)(uintptr_t)pointer;
  unsigned i;
  for (i = 0; i < FAKE_MAX_ALLOCATIONS; ++i)
    if (g.allocations[i].base && p >= g.allocations[i].base &&
        size <= g.allocations[i].size &&
        (size_t)(p - g.allocations[i].base) <= g.allocations[i].size - size)
      return 1;
  return 0;
}

static CUresult fake_fail(CUresult error) {
  ++g.stats.errors;
  return error;
}

/*===--- initialisation, devices, contexts ------------------------------===*/

FAKE_EXPORT CUresult cuInit(unsigned flags) {
  FAKE_ENTER("cuInit", 0);
  ++g.stats.init_calls;
  if (flags != 0)
    return fake_fail(FAKE_INVALID_VALUE);
  if (g.devices <= 0)
    return fake_fail(FAKE_NO_DEVICE);
  g.initialized = 1;
  return FAKE_SUCCESS;
}

static const struct {
  CUresult code;
  const char *name, *text;
} fake_errors[] = {
    {FAKE_SUCCESS, "CUDA_SUCCESS", "no error"},
    {FAKE_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {FAKE_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {FAKE_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {FAKE_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {FAKE_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {FAKE_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {FAKE_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {FAKE_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {FAKE_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {FAKE_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {FAKE_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED",
     "unspecified launch failure"},
    {FAKE_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"}};

static CUresult fake_error_text(CUresult error, int name, const char **out) {
  size_t i;
  for (i = 0; i < sizeof(fake_errors) / sizeof(fake_errors[0]); ++i)
    if (fake_errors[i].code == error) {
      *out = name ? fake_errors[i].name : fake_errors[i].text;
      return FAKE_SUCCESS;
    }
  *out = NULL;
  return FAKE_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
  return fake_error_text(error, 1, name);
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char **text) {
  return fake_error_text(error, 0, text);
}

FAKE_EXPORT CUresult cuDeviceGetCount(int *count) {
  FAKE_ENTER("cuDeviceGetCount", 0);
  *count = g.devices;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(int *device, int ordinal) {
  FAKE_ENTER("cuDeviceGet", 0);
  if (ordinal < 0 || ordinal >= g.devices)
    return fake_fail(FAKE_INVALID_DEVICE);
  *device = ordinal;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetName(char *name, int length, int device) {
  FAKE_ENTER("cuDeviceGetName", 0);
  if (device < 0 || device >= g.devices || length <= 0)
    return fake_fail(FAKE_INVALID_VALUE);
  snprintf(name, (size_t)length, "Fake CUDA Device %d (sm_%u)", device, g.sm);
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute,
                                          int device) {
  FAKE_ENTER("cuDeviceGetAttribute", 0);
  if (device < 0 || device >= g.devices)
    return fake_fail(FAKE_INVALID_DEVICE);
  switch (attribute) {
  case 1: /* max threads per block */
  case 2: /* max block x */
  case 3: /* max block y */
    *value = 1024;
    return FAKE_SUCCESS;
  case 4: /* max block z */
    *value = 64;
    return FAKE_SUCCESS;
  case 5: /* max grid x */
    *value = 2147483647;
    return FAKE_SUCCESS;
  case 6: /* max grid y */
  case 7: /* max grid z */
    *value = 65535;
    return FAKE_SUCCESS;
  case 75:
    *value = (int)(g.sm / 10);
    return FAKE_SUCCESS;
  case 76:
    *value = (int)(g.sm % 10);
    return FAKE_SUCCESS;
  }
  return fake_fail(FAKE_INVALID_VALUE);
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  FAKE_ENTER("cuDevicePrimaryCtxRetain", 0);
  if (device < 0 || device >= g.devices)
    return fake_fail(FAKE_INVALID_DEVICE);
  *context = &g.context;
  ++g.stats.contexts_retained;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(int device) {
  FAKE_ENTER("cuDevicePrimaryCtxRelease_v2", 0);
  if (device < 0 || device >= g.devices || g.stats.contexts_retained <= 0)
    return fake_fail(FAKE_INVALID_VALUE);
  --g.stats.contexts_retained;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxPushCurrent_v2(void *context) {
  FAKE_ENTER("cuCtxPushCurrent_v2", 0);
  if (context != &g.context || g.stats.contexts_retained <= 0)
    return fake_fail(FAKE_INVALID_CONTEXT);
  ++g.stats.context_depth;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxPopCurrent_v2(void **context) {
  FAKE_ENTER("cuCtxPopCurrent_v2", 1);
  --g.stats.context_depth;
  if (context)
    *context = &g.context;
  return FAKE_SUCCESS;
}

/*===--- modules --------------------------------------------------------===*/

/* Parses the entries ".entry NAME(.param ..., .param ...)" of `text`. */
static void fake_parse_entries(const char *text, fake_module_t *module) {
  const char *at = text;
  while ((at = strstr(at, ".entry ")) != NULL &&
         module->count < FAKE_MAX_ENTRIES) {
    fake_entry_t *e = &module->entries[module->count];
    const char *open, *close, *param;
    size_t length;
    at += 7;
    open = strchr(at, '(');
    close = open ? strchr(open, ')') : NULL;
    if (!close)
      break;
    length = (size_t)(open - at);
    if (length >= sizeof(e->name))
      length = sizeof(e->name) - 1;
    memcpy(e->name, at, length);
    e->name[length] = '\0';
    e->params = 0;
    for (param = strstr(open, ".param"); param && param < close;
         param = strstr(param + 1, ".param"))
      ++e->params;
    ++module->count;
    at = close;
  }
}

/* A JIT error log the way ptxas writes one, into the caller's buffer. */
static void fake_jit_log(unsigned count, const int *options, void **values,
                         const char *text) {
  char *buffer = NULL;
  size_t size = 0;
  unsigned i;
  for (i = 0; i < count; ++i) {
    if (options[i] == 5)
      buffer = (char *)values[i];
    if (options[i] == 6)
      size = (size_t)(uintptr_t)values[i];
  }
  if (buffer && size)
    snprintf(buffer, size, "%s", text);
}

FAKE_EXPORT CUresult cuModuleLoadDataEx(void **out, const void *image,
                                        unsigned count, int *options,
                                        void **values) {
  const char *text = (const char *)image;
  const char *target;
  fake_module_t *module;
  int cubin;
  unsigned sm;
  FAKE_ENTER("cuModuleLoadDataEx", 1);
  if (!image || (count && (!options || !values)))
    return fake_fail(FAKE_INVALID_VALUE);
  cubin = memcmp(text,
                 "\x7f"
                 "ELF",
                 4) == 0;
  target = strstr(cubin ? text + 4 : text, cubin ? "sm_" : ".target sm_");
  if (!target) {
    fake_jit_log(count, options, values, "ptxas fatal: no .target");
    return fake_fail(FAKE_INVALID_PTX);
  }
  sm = (unsigned)atoi(target + (cubin ? 3 : 11));
  if (cubin && sm != g.sm)
    return fake_fail(FAKE_NO_BINARY_FOR_GPU);
  if (!cubin && sm > g.sm) {
    char log[128];
    snprintf(log, sizeof(log),
             "ptxas fatal   : SM version specified by .target (sm_%u) is "
             "higher than the device's sm_%u",
             sm, g.sm);
    fake_jit_log(count, options, values, log);
    return fake_fail(FAKE_INVALID_PTX);
  }
  module = (fake_module_t *)calloc(1, sizeof(*module));
  if (!module)
    return fake_fail(FAKE_OUT_OF_MEMORY);
  fake_parse_entries(cubin ? text + 4 : text, module);
  if (cubin)
    ++g.stats.cubin_loads;
  else
    ++g.stats.ptx_loads;
  ++g.stats.modules_live;
  *out = module;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleUnload(void *module) {
  FAKE_ENTER("cuModuleUnload", 1);
  if (!module)
    return fake_fail(FAKE_INVALID_HANDLE);
  free(module);
  --g.stats.modules_live;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleGetFunction(void **out, void *module_ptr,
                                         const char *name) {
  fake_module_t *module = (fake_module_t *)module_ptr;
  unsigned i;
  FAKE_ENTER("cuModuleGetFunction", 1);
  if (!module || !name)
    return fake_fail(FAKE_INVALID_VALUE);
  for (i = 0; i < module->count; ++i)
    if (strcmp(module->entries[i].name, name) == 0) {
      *out = &module->entries[i];
      return FAKE_SUCCESS;
    }
  return fake_fail(FAKE_NOT_FOUND);
}

/*===--- memory ---------------------------------------------------------===*/

FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t size) {
  void *memory = NULL;
  unsigned i;
  FAKE_ENTER("cuMemAlloc_v2", 1);
  if (size == 0)
    return fake_fail(FAKE_INVALID_VALUE);
  for (i = 0; i < FAKE_MAX_ALLOCATIONS && g.allocations[i].base; ++i) {
  }
  if (i == FAKE_MAX_ALLOCATIONS || posix_memalign(&memory, 256, size) != 0)
    return fake_fail(FAKE_OUT_OF_MEMORY);
  /* Device memory is not zeroed: garbage shows up if the driver forgets. */
  memset(memory, 0xa5, size);
  g.allocations[i].base = (unsigned char *)memory;
  g.allocations[i].size = size;
  ++g.stats.allocations_live;
  *pointer = (CUdeviceptr)(uintptr_t)memory;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  unsigned i;
  FAKE_ENTER("cuMemFree_v2", 1);
  for (i = 0; i < FAKE_MAX_ALLOCATIONS; ++i)
    if (g.allocations[i].base &&
        g.allocations[i].base == (unsigned char *)(uintptr_t)pointer) {
      free(g.allocations[i].base);
      g.allocations[i].base = NULL;
      --g.stats.allocations_live;
      return FAKE_SUCCESS;
    }
  return fake_fail(FAKE_INVALID_VALUE);
}

/* Work on a capturing stream other than launches is not allowed. */
static CUresult fake_stream_ok(const fake_stream_t *stream) {
  if (stream && stream->capture)
    return fake_fail(FAKE_CAPTURE_UNSUPPORTED);
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuMemsetD8Async(CUdeviceptr pointer, unsigned char value,
                                     size_t count, void *stream) {
  FAKE_ENTER("cuMemsetD8Async", 1);
  if (fake_stream_ok((fake_stream_t *)stream) != FAKE_SUCCESS)
    return FAKE_CAPTURE_UNSUPPORTED;
  if (!fake_inside(pointer, count))
    return fake_fail(FAKE_INVALID_VALUE);
  memset((void *)(uintptr_t)pointer, value, count);
  ++g.stats.memsets;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr target,
                                          const void *source, size_t size,
                                          void *stream) {
  FAKE_ENTER("cuMemcpyHtoDAsync_v2", 1);
  if (fake_stream_ok((fake_stream_t *)stream) != FAKE_SUCCESS)
    return FAKE_CAPTURE_UNSUPPORTED;
  if (!source || !fake_inside(target, size))
    return fake_fail(FAKE_INVALID_VALUE);
  memcpy((void *)(uintptr_t)target, source, size);
  ++g.stats.memcpy_htod;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *target, CUdeviceptr source,
                                          size_t size, void *stream) {
  FAKE_ENTER("cuMemcpyDtoHAsync_v2", 1);
  if (fake_stream_ok((fake_stream_t *)stream) != FAKE_SUCCESS)
    return FAKE_CAPTURE_UNSUPPORTED;
  if (!target || !fake_inside(source, size))
    return fake_fail(FAKE_INVALID_VALUE);
  memcpy(target, (const void *)(uintptr_t)source, size);
  ++g.stats.memcpy_dtoh;
  return FAKE_SUCCESS;
}

/*===--- streams, launches, graphs --------------------------------------===*/

FAKE_EXPORT CUresult cuStreamCreate(void **out, unsigned flags) {
  fake_stream_t *stream;
  FAKE_ENTER("cuStreamCreate", 1);
  if (flags > 1)
    return fake_fail(FAKE_INVALID_VALUE);
  stream = (fake_stream_t *)calloc(1, sizeof(*stream));
  if (!stream)
    return fake_fail(FAKE_OUT_OF_MEMORY);
  ++g.stats.streams_live;
  *out = stream;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamSynchronize(void *stream) {
  FAKE_ENTER("cuStreamSynchronize", 1);
  return fake_stream_ok((fake_stream_t *)stream);
}

FAKE_EXPORT CUresult cuStreamDestroy_v2(void *stream_ptr) {
  fake_stream_t *stream = (fake_stream_t *)stream_ptr;
  FAKE_ENTER("cuStreamDestroy_v2", 1);
  if (!stream)
    return fake_fail(FAKE_INVALID_HANDLE);
  if (stream->capture) {
    free(stream->capture->launches);
    free(stream->capture);
  }
  free(stream);
  --g.stats.streams_live;
  return FAKE_SUCCESS;
}

static CUresult fake_run(const fake_launch_t *launch) {
  void *params[FAKE_MAX_PARAMS];
  fake_cuda_kernel_fn fn = NULL;
  unsigned i;
  for (i = 0; i < g.kernel_count && !fn; ++i)
    if (strcmp(g.kernels[i].name, launch->entry->name) == 0)
      fn = g.kernels[i].fn;
  if (!fn)
    return fake_fail(FAKE_LAUNCH_FAILED);
  for (i = 0; i < launch->entry->params; ++i) {
    /* A pointer argument outside every allocation would fault. */
    if (!fake_inside(launch->args[i], 1))
      return fake_fail(FAKE_LAUNCH_FAILED);
    params[i] = (void *)&launch->args[i];
  }
  fn(params, launch->grid, launch->block);
  ++g.stats.kernels_executed;
  g.clock_ns += FAKE_KERNEL_NS;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy,
                                    unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned shared, void *stream,
                                    void **params, void **extra) {
  fake_stream_t *s = (fake_stream_t *)stream;
  const fake_entry_t *entry = (const fake_entry_t *)function;
  fake_launch_t launch;
  unsigned i;
  FAKE_ENTER("cuLaunchKernel", 1);
  if (!entry || extra || shared || !gx || !gy || !gz || !bx || !by || !bz ||
      (unsigned long long)bx * by * bz > 1024 || (entry->params && !params) ||
      entry->params > FAKE_MAX_PARAMS)
    return fake_fail(FAKE_INVALID_VALUE);
  memset(&launch, 0, sizeof(launch));
  launch.entry = entry;
  launch.grid[0] = gx, launch.grid[1] = gy, launch.grid[2] = gz;
  launch.block[0] = bx, launch.block[1] = by, launch.block[2] = bz;
  /* Arguments are copied at launch (and at capture), as CUDA does. */
  for (i = 0; i < entry->params; ++i)
    memcpy(&launch.args[i], params[i], sizeof(launch.args[i]));
  if (s && s->capture) {
    fake_graph_t *graph = s->capture;
    if (graph->count == s->capacity) {
      unsigned capacity = s->capacity ? 2 * s->capacity : 8;
      fake_launch_t *grown = (fake_launch_t *)realloc(
          graph->launches, capacity * sizeof(fake_launch_t));
      if (!grown)
        return fake_fail(FAKE_OUT_OF_MEMORY);
      graph->launches = grown;
      s->capacity = capacity;
    }
    graph->launches[graph->count++] = launch;
    ++g.stats.captured;
    return FAKE_SUCCESS;
  }
  ++g.stats.launches;
  return fake_run(&launch);
}

FAKE_EXPORT CUresult cuStreamBeginCapture_v2(void *stream_ptr, int mode) {
  fake_stream_t *stream = (fake_stream_t *)stream_ptr;
  FAKE_ENTER("cuStreamBeginCapture_v2", 1);
  /* The legacy stream cannot be captured; a capture does not nest. */
  if (!stream || stream->capture || mode < 0 || mode > 2)
    return fake_fail(FAKE_INVALID_VALUE);
  stream->capture = (fake_graph_t *)calloc(1, sizeof(fake_graph_t));
  if (!stream->capture)
    return fake_fail(FAKE_OUT_OF_MEMORY);
  stream->capacity = 0;
  ++g.stats.captures;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamEndCapture(void *stream_ptr, void **graph) {
  fake_stream_t *stream = (fake_stream_t *)stream_ptr;
  FAKE_ENTER("cuStreamEndCapture", 1);
  if (!stream || !stream->capture)
    return fake_fail(FAKE_INVALID_VALUE);
  *graph = stream->capture;
  stream->capture = NULL;
  ++g.stats.graphs_live;
  return FAKE_SUCCESS;
}

/* Left out of the "old driver" build, which predates CUDA 11.4. */
#if !defined(DLC_FAKE_CUDA_OLD)
FAKE_EXPORT CUresult cuGraphInstantiateWithFlags(void **exec, void *graph_ptr,
                                                 unsigned long long flags) {
  fake_graph_t *graph = (fake_graph_t *)graph_ptr, *copy;
  FAKE_ENTER("cuGraphInstantiateWithFlags", 1);
  if (!graph || flags)
    return fake_fail(FAKE_INVALID_VALUE);
  copy = (fake_graph_t *)calloc(1, sizeof(*copy));
  if (!copy)
    return fake_fail(FAKE_OUT_OF_MEMORY);
  copy->count = graph->count;
  copy->launches = (fake_launch_t *)malloc((graph->count ? graph->count : 1) *
                                           sizeof(fake_launch_t));
  if (!copy->launches) {
    free(copy);
    return fake_fail(FAKE_OUT_OF_MEMORY);
  }
  if (graph->count)
    memcpy(copy->launches, graph->launches,
           graph->count * sizeof(fake_launch_t));
  ++g.stats.instantiations;
  ++g.stats.execs_live;
  *exec = copy;
  return FAKE_SUCCESS;
}
#endif

FAKE_EXPORT CUresult cuGraphLaunch(void *exec_ptr, void *stream) {
  fake_graph_t *exec = (fake_graph_t *)exec_ptr;
  unsigned i;
  FAKE_ENTER("cuGraphLaunch", 1);
  if (!exec)
    return fake_fail(FAKE_INVALID_HANDLE);
  if (fake_stream_ok((fake_stream_t *)stream) != FAKE_SUCCESS)
    return FAKE_CAPTURE_UNSUPPORTED;
  ++g.stats.graph_launches;
  for (i = 0; i < exec->count; ++i) {
    CUresult result = fake_run(&exec->launches[i]);
    if (result != FAKE_SUCCESS)
      return result;
  }
  return FAKE_SUCCESS;
}

static CUresult fake_graph_free(void *graph_ptr, int *live) {
  fake_graph_t *graph = (fake_graph_t *)graph_ptr;
  if (!graph)
    return fake_fail(FAKE_INVALID_HANDLE);
  free(graph->launches);
  free(graph);
  --*live;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuGraphExecDestroy(void *exec) {
  FAKE_ENTER("cuGraphExecDestroy", 1);
  return fake_graph_free(exec, &g.stats.execs_live);
}

FAKE_EXPORT CUresult cuGraphDestroy(void *graph) {
  FAKE_ENTER("cuGraphDestroy", 1);
  return fake_graph_free(graph, &g.stats.graphs_live);
}

/*===--- events ---------------------------------------------------------===*/

FAKE_EXPORT CUresult cuEventCreate(void **out, unsigned flags) {
  fake_event_t *event;
  FAKE_ENTER("cuEventCreate", 1);
  if (flags != 0) /* timing disabled, blocking sync, ...: not for timings */
    return fake_fail(FAKE_INVALID_VALUE);
  event = (fake_event_t *)calloc(1, sizeof(*event));
  if (!event)
    return fake_fail(FAKE_OUT_OF_MEMORY);
  ++g.stats.events_live;
  *out = event;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuEventRecord(void *event_ptr, void *stream) {
  fake_event_t *event = (fake_event_t *)event_ptr;
  FAKE_ENTER("cuEventRecord", 1);
  if (!event)
    return fake_fail(FAKE_INVALID_HANDLE);
  if (fake_stream_ok((fake_stream_t *)stream) != FAKE_SUCCESS)
    return FAKE_CAPTURE_UNSUPPORTED;
  event->time_ns = g.clock_ns;
  event->recorded = 1;
  ++g.stats.event_records;
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuEventElapsedTime(float *ms, void *start_ptr,
                                        void *end_ptr) {
  fake_event_t *start = (fake_event_t *)start_ptr;
  fake_event_t *end = (fake_event_t *)end_ptr;
  FAKE_ENTER("cuEventElapsedTime", 1);
  if (!start || !end || !start->recorded || !end->recorded)
    return fake_fail(FAKE_INVALID_HANDLE);
  *ms = (float)((double)(end->time_ns - start->time_ns) / 1e6);
  return FAKE_SUCCESS;
}

FAKE_EXPORT CUresult cuEventDestroy_v2(void *event) {
  FAKE_ENTER("cuEventDestroy_v2", 1);
  if (!event)
    return fake_fail(FAKE_INVALID_HANDLE);
  free(event);
  --g.stats.events_live;
  return FAKE_SUCCESS;
}
