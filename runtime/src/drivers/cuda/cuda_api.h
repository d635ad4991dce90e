/*===- cuda_api.h - the part of the CUDA driver API dlc calls ----*- C -*-===*
 *
 * Declared here, from the documented driver API, so that the runtime builds
 * without the CUDA toolkit: a few opaque handles, the enum values the driver
 * passes, and the functions it resolves from libcuda.so.1 by their exported
 * names (several calls are exported as "_v2" with a wider signature; the
 * unsuffixed symbols keep the old one for old binaries). Everything here is
 * ABI that NVIDIA keeps stable across driver releases. The newest entry
 * point used, cuGraphInstantiateWithFlags, needs a CUDA 11.4 driver.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_CUDA_API_H
#define DLC_CUDA_API_H

#include <stddef.h>

typedef int dlc_cu_result_t; /* CUresult */
typedef int dlc_cu_device_t; /* CUdevice: an ordinal */
#if defined(_WIN64) || defined(__LP64__)
typedef unsigned long long dlc_cu_ptr_t; /* CUdeviceptr */
#else
typedef unsigned int dlc_cu_ptr_t;
#endif
typedef struct dlc_cu_context_st *dlc_cu_context_t;
typedef struct dlc_cu_module_st *dlc_cu_module_t;
typedef struct dlc_cu_function_st *dlc_cu_function_t;
typedef struct dlc_cu_stream_st *dlc_cu_stream_t;
typedef struct dlc_cu_event_st *dlc_cu_event_t;
typedef struct dlc_cu_graph_st *dlc_cu_graph_t;
typedef struct dlc_cu_graph_exec_st *dlc_cu_graph_exec_t;

enum {
  DLC_CUDA_SUCCESS = 0,
  DLC_CUDA_ERROR_OUT_OF_MEMORY = 2,
  DLC_CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
  DLC_CUDA_ERROR_NO_DEVICE = 100,
  DLC_CUDA_ERROR_NOT_FOUND = 500
};

/* CUdevice_attribute */
enum {
  DLC_CU_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  DLC_CU_ATTRIBUTE_MAX_BLOCK_DIM_X = 2, /* Y and Z follow */
  DLC_CU_ATTRIBUTE_MAX_GRID_DIM_X = 5,  /* Y and Z follow */
  DLC_CU_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  DLC_CU_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
};

/* CUjit_option */
enum {
  DLC_CU_JIT_ERROR_LOG_BUFFER = 5,
  DLC_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
};

enum { DLC_CU_STREAM_NON_BLOCKING = 1 };
/* CUstreamCaptureMode: other threads' CUDA calls do not break a capture. */
enum { DLC_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1 };
enum { DLC_CU_EVENT_DEFAULT = 0 };

/* X(field, exported symbol, parameters) */
#define DLC_CU_FUNCTIONS(X)                                                    \
  X(cuInit, "cuInit", (unsigned flags))                                        \
  X(cuGetErrorName, "cuGetErrorName",                                          \
    (dlc_cu_result_t error, const char **name))                                \
  X(cuGetErrorString, "cuGetErrorString",                                      \
    (dlc_cu_result_t error, const char **text))                                \
  X(cuDeviceGetCount, "cuDeviceGetCount", (int *count))                        \
  X(cuDeviceGet, "cuDeviceGet", (dlc_cu_device_t * device, int ordinal))       \
  X(cuDeviceGetName, "cuDeviceGetName",                                        \
    (char *name, int length, dlc_cu_device_t device))                          \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute",                              \
    (int *value, int attribute, dlc_cu_device_t device))                       \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",                      \
    (dlc_cu_context_t * context, dlc_cu_device_t device))                      \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",                 \
    (dlc_cu_device_t device))                                                  \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", (dlc_cu_context_t context))       \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", (dlc_cu_context_t * context))       \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx",                                  \
    (dlc_cu_module_t * module, const void *image, unsigned option_count,       \
     int *options, void **values))                                             \
  X(cuModuleUnload, "cuModuleUnload", (dlc_cu_module_t module))                \
  X(cuModuleGetFunction, "cuModuleGetFunction",                                \
    (dlc_cu_function_t * function, dlc_cu_module_t module, const char *name))  \
  X(cuMemAlloc, "cuMemAlloc_v2", (dlc_cu_ptr_t * pointer, size_t size))        \
  X(cuMemFree, "cuMemFree_v2", (dlc_cu_ptr_t pointer))                         \
  X(cuMemsetD8Async, "cuMemsetD8Async",                                        \
    (dlc_cu_ptr_t pointer, unsigned char value, size_t count,                  \
     dlc_cu_stream_t stream))                                                  \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                 \
    (dlc_cu_ptr_t target, const void *source, size_t size,                     \
     dlc_cu_stream_t stream))                                                  \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                 \
    (void *target, dlc_cu_ptr_t source, size_t size, dlc_cu_stream_t stream))  \
  X(cuStreamCreate, "cuStreamCreate",                                          \
    (dlc_cu_stream_t * stream, unsigned flags))                                \
  X(cuStreamSynchronize, "cuStreamSynchronize", (dlc_cu_stream_t stream))      \
  X(cuStreamDestroy, "cuStreamDestroy_v2", (dlc_cu_stream_t stream))           \
  X(cuLaunchKernel, "cuLaunchKernel",                                          \
    (dlc_cu_function_t function, unsigned grid_x, unsigned grid_y,             \
     unsigned grid_z, unsigned block_x, unsigned block_y, unsigned block_z,    \
     unsigned shared_bytes, dlc_cu_stream_t stream, void **parameters,         \
     void **extra))                                                            \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2",                           \
    (dlc_cu_stream_t stream, int mode))                                        \
  X(cuStreamEndCapture, "cuStreamEndCapture",                                  \
    (dlc_cu_stream_t stream, dlc_cu_graph_t * graph))                          \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags",                \
    (dlc_cu_graph_exec_t * exec, dlc_cu_graph_t graph,                         \
     unsigned long long flags))                                                \
  X(cuGraphLaunch, "cuGraphLaunch",                                            \
    (dlc_cu_graph_exec_t exec, dlc_cu_stream_t stream))                        \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", (dlc_cu_graph_exec_t exec))      \
  X(cuGraphDestroy, "cuGraphDestroy", (dlc_cu_graph_t graph))                  \
  X(cuEventCreate, "cuEventCreate", (dlc_cu_event_t * event, unsigned flags))  \
  X(cuEventRecord, "cuEventRecord",                                            \
    (dlc_cu_event_t event, dlc_cu_stream_t stream))                            \
  X(cuEventElapsedTime, "cuEventElapsedTime",                                  \
    (float *milliseconds, dlc_cu_event_t start, dlc_cu_event_t end))           \
  X(cuEventDestroy, "cuEventDestroy_v2", (dlc_cu_event_t event))

#define DLC_CU_DECLARE(field, symbol, parameters)                              \
  dlc_cu_result_t(*field) parameters;
typedef struct dlc_cu_api_t {
  DLC_CU_FUNCTIONS(DLC_CU_DECLARE)
} dlc_cu_api_t;
#undef DLC_CU_DECLARE

#endif /* DLC_CUDA_API_H */
