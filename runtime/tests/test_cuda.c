/*===- test_cuda.c - the CUDA driver against a fake libcuda ---------------===*
 *
 * There is no NVIDIA GPU in CI, so DLC_CUDA_LIBRARY points the driver at
 * libdlc_fake_cuda.so (fake_cuda.h), which this test also links to read its
 * counters and inject failures. Checked: the launches really compute;
 * module loading picks the cubin only for the exact compute capability,
 * JIT-compiles the PTX on newer devices and refuses older ones; a session
 * captures its launches once into a graph that every run replays; weights
 * are uploaded once; profiling launches one by one between events; errors
 * from the library arrive with CUDA's own words; nothing leaks (device
 * memory, modules, streams, graphs, events, context references) and every
 * context push is popped; a missing library, missing symbols and no device
 * are reported as unavailable.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact_builder.h"
#include "dlc/cuda_driver.h"
#include "dlc/runtime.h"
#include "fake_cuda.h"
#include "test_models.h"
#include "test_util.h"

static char g_ptx[4096];
static size_t g_ptx_size;

static size_t make_ptx(char *out, size_t size, unsigned sm) {
  return dlc_test_fake_ptx(sm, out, size);
}

/* A fake cubin: an ELF magic, the architecture, the same entries. */
static size_t make_cubin(uint8_t *out, size_t size, unsigned sm) {
  char ptx[4096];
  size_t n;
  make_ptx(ptx, sizeof(ptx), sm);
  n = (size_t)snprintf((char *)out, size,
                       "\x7f"
                       "ELF cubin sm_%u\n%s",
                       sm, strstr(ptx, ".visible"));
  CHECK(n < size);
  return n + 1; /* the fake reads it as text, up to a NUL */
}

static void cu_chain(dlc_test_gpu_chain_t *c) {
  int i;
  memset(c, 0, sizeof(*c));
  c->target = DLCX_TARGET_CUDA;
  c->code_format = DLCX_CODE_PTX;
  for (i = 0; i < 5; ++i) {
    c->code[i] = (const uint8_t *)g_ptx;
    c->code_size[i] = g_ptx_size;
  }
  c->target_sm = 87;
  c->scale = 3.0f;
  c->workgroup = 128;
}

static void fill_inputs(float *x, float *y, uint32_t n, uint32_t seed) {
  uint32_t i;
  for (i = 0; i < n; ++i) {
    x[i] = (float)(i % 97) * 0.5f + (float)seed;
    y[i] = (float)(i % 13) - 6.0f;
  }
}

static void run_and_check(dlc_session_t *session, uint32_t n, uint32_t seed) {
  float *x = (float *)malloc(n * sizeof(float));
  float *y = (float *)malloc(n * sizeof(float));
  float *out = (float *)malloc(n * sizeof(float));
  float *expected = (float *)malloc(n * sizeof(float));
  uint32_t *hits = (uint32_t *)malloc(n * sizeof(uint32_t));
  uint32_t i;
  CHECK(x && y && out && expected && hits);
  fill_inputs(x, y, n, seed);
  CHECK_OK(dlc_session_set_input(session, 0, x, n * sizeof(float)),
           dlc_session_message(session));
  CHECK_OK(dlc_session_set_input(session, 1, y, n * sizeof(float)),
           dlc_session_message(session));
  CHECK_OK(dlc_session_run(session), dlc_session_message(session));
  CHECK_OK(dlc_session_get_output(session, 0, out, n * sizeof(float)),
           dlc_session_message(session));
  CHECK_OK(dlc_session_get_output(session, 1, hits, n * sizeof(uint32_t)),
           dlc_session_message(session));
  dlc_test_chain_reference(x, y, n, 3.0f, expected);
  for (i = 0; i < n; ++i)
    if (out[i] != expected[i] || hits[i] != 2) {
      fprintf(stderr,
              "element %u of %u: out %g expected %g, hits %u "
              "expected 2\n",
              i, n, out[i], expected[i], hits[i]);
      exit(1);
    }
  free(x);
  free(y);
  free(out);
  free(expected);
  free(hits);
}

static dlc_session_t *make_session(dlc_context_t *context, dlc_model_t *model,
                                   int profiling) {
  dlc_session_options_t options;
  dlc_session_t *session = NULL;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.enable_profiling = (uint32_t)profiling;
  CHECK_OK(dlc_session_create(model, &options, &session),
           dlc_context_message(context));
  return session;
}

/* Everything the driver made is gone, and every push was popped. */
static void check_nothing_left(void) {
  const fake_cuda_stats_t *s = fake_cuda_stats();
  CHECK(s->modules_live == 0);
  CHECK(s->allocations_live == 0);
  CHECK(s->graphs_live == 0);
  CHECK(s->execs_live == 0);
  CHECK(s->streams_live == 0);
  CHECK(s->events_live == 0);
  CHECK(s->contexts_retained == 0);
  CHECK(s->context_depth == 0);
}

/* The CUDA driver's options for every context the tests create: the fake
 * library, or what a test points it at instead. */
static dlc_cuda_driver_options_t g_cu_options;

static dlc_status_t cu_context_create(dlc_context_t **out_context) {
  return dlc_test_context_create(NULL, &g_cu_options, out_context);
}

static void expect_load(const dlc_test_gpu_chain_t *c, dlc_status_t status,
                        const char *part) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  uint8_t *data;
  size_t size;
  dlc_test_build_gpu_chain(c, &data, &size);
  CHECK_OK(cu_context_create(&context), "");
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model), status,
               dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), part);
  dlc_context_destroy(context);
  dlc_ab_free(data);
  check_nothing_left();
}

/* Loads `c`, makes a session and runs it `runs` times. */
static void load_and_run(const dlc_test_gpu_chain_t *c, int profiling,
                         int runs) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session;
  uint8_t *data;
  size_t size;
  int r;
  dlc_test_build_gpu_chain(c, &data, &size);
  CHECK_OK(cu_context_create(&context), "");
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  session = make_session(context, model, profiling);
  for (r = 0; r < runs; ++r)
    run_and_check(session, c->n ? c->n : 1000, (uint32_t)r);
  dlc_session_destroy(session);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  dlc_ab_free(data);
  check_nothing_left();
}

/*===--- tests -----------------------------------------------------------===*/

static void test_graph_replay(void) {
  const fake_cuda_stats_t *s = fake_cuda_stats();
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *first, *second;
  dlc_test_gpu_chain_t c;
  uint8_t *data;
  size_t size;

  fake_cuda_reset();
  cu_chain(&c);
  dlc_test_build_gpu_chain(&c, &data, &size);
  CHECK_OK(cu_context_create(&context), "");
  CHECK_OK(dlc_context_probe(context, DLCX_TARGET_CUDA),
           dlc_context_message(context));
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  CHECK(strcmp(dlc_model_driver_name(model), "cuda") == 0);
  /* One PTX module for five kernels; the weights, once. */
  CHECK(s->ptx_loads == 1 && s->cubin_loads == 0 && s->modules_live == 1);
  CHECK(s->memcpy_htod == 1 && s->allocations_live == 1);
  CHECK(s->contexts_retained == 1 && s->context_depth == 0);

  first = make_session(context, model, 0);
  CHECK(s->captures == 1 && s->captured == 6 && s->instantiations == 1);
  CHECK(s->launches == 0 && s->kernels_executed == 0);
  CHECK(s->memsets == 1 && s->allocations_live == 2 && s->streams_live == 1);
  run_and_check(first, 1000, 0);
  run_and_check(first, 1000, 1);
  run_and_check(first, 1000, 2);
  CHECK(s->graph_launches == 3 && s->kernels_executed == 18);
  CHECK(s->launches == 0 && s->captures == 1);
  CHECK(s->memcpy_htod == 1 + 6 && s->memcpy_dtoh == 6);

  /* A second session: its own arena, stream and graph; same weights. */
  second = make_session(context, model, 0);
  CHECK(s->captures == 2 && s->allocations_live == 3);
  run_and_check(second, 1000, 9);
  run_and_check(first, 1000, 4);
  CHECK(s->graph_launches == 5 && s->memcpy_htod == 1 + 10);
  CHECK(s->context_depth == 0 && s->errors == 0);
  dlc_session_destroy(second);
  dlc_session_destroy(first);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  dlc_ab_free(data);
  check_nothing_left();
}

static void test_grids(void) {
  static const struct {
    uint32_t n, grid[3];
  } cases[] = {{1, {0, 0, 0}},    {128, {0, 0, 0}},  {129, {0, 0, 0}},
               {3072, {4, 3, 2}}, {1000, {2, 2, 2}}, {50000, {0, 0, 0}}};
  size_t i;
  fake_cuda_reset();
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    dlc_test_gpu_chain_t c;
    cu_chain(&c);
    c.n = cases[i].n;
    memcpy(c.grid, cases[i].grid, sizeof(c.grid));
    load_and_run(&c, 0, 2);
  }
}

static void test_module_selection(void) {
  const fake_cuda_stats_t *s = fake_cuda_stats();
  static uint8_t cubin[4096];
  dlc_test_gpu_chain_t c;

  /* The exact compute capability: the cubin, no JIT. */
  fake_cuda_reset();
  cu_chain(&c);
  c.cubin = cubin;
  c.cubin_size = make_cubin(cubin, sizeof(cubin), 87);
  load_and_run(&c, 0, 1);
  CHECK(s->cubin_loads == 1 && s->ptx_loads == 0);

  /* A newer device: the PTX, JIT-compiled. */
  fake_cuda_reset();
  fake_cuda_set_devices(1, 90);
  load_and_run(&c, 0, 1);
  CHECK(s->cubin_loads == 0 && s->ptx_loads == 1);

  /* An older one: refused before anything is loaded. */
  fake_cuda_reset();
  fake_cuda_set_devices(1, 86);
  expect_load(&c, DLC_ERROR_UNSUPPORTED,
              "CUDA device 0 ('Fake CUDA Device 0 (sm_86)') has compute "
              "capability 8.6; the artifact is compiled for sm_87 and needs "
              "that or a newer device");
  CHECK(s->ptx_loads == 0 && s->cubin_loads == 0);

  /* No cubin: the PTX, also on the exact device. */
  fake_cuda_reset();
  cu_chain(&c);
  load_and_run(&c, 0, 1);
  CHECK(s->ptx_loads == 1 && s->cubin_loads == 0);

  /* A cubin the device cannot run: CUDA's own reason. */
  fake_cuda_reset();
  c.cubin = cubin;
  c.cubin_size = make_cubin(cubin, sizeof(cubin), 80);
  expect_load(&c, DLC_ERROR_DEVICE,
              "cuModuleLoadDataEx of the cubin failed: no kernel image is "
              "available for execution on the device "
              "(CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA error 209)");

  /* PTX the JIT refuses: its log is in the message. */
  {
    static char newer[4096];
    size_t size = make_ptx(newer, sizeof(newer), 90);
    int i;
    fake_cuda_reset();
    cu_chain(&c);
    for (i = 0; i < 5; ++i) {
      c.code[i] = (const uint8_t *)newer;
      c.code_size[i] = size;
    }
    expect_load(&c, DLC_ERROR_DEVICE,
                "cuModuleLoadDataEx of the PTX of kernel 0 failed: a PTX JIT "
                "compilation failed (CUDA_ERROR_INVALID_PTX, CUDA error 218); "
                "JIT log: ptxas fatal   : SM version specified by .target "
                "(sm_90) is higher than the device's sm_87");
  }
}

static void test_profiling(void) {
  const fake_cuda_stats_t *s = fake_cuda_stats();
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session;
  const dlc_kernel_timing_t *timings;
  dlc_test_gpu_chain_t c;
  uint32_t count, i;
  uint8_t *data;
  size_t size;

  fake_cuda_reset();
  cu_chain(&c);
  dlc_test_build_gpu_chain(&c, &data, &size);
  CHECK_OK(cu_context_create(&context), "");
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  session = make_session(context, model, 1);
  CHECK(s->captures == 0 && s->events_live == 13);
  CHECK_OK(dlc_session_timings(session, &timings, &count), "");
  CHECK(count == 0);
  run_and_check(session, 1000, 0);
  run_and_check(session, 1000, 1);
  CHECK(s->launches == 12 && s->graph_launches == 0);
  CHECK_OK(dlc_session_timings(session, &timings, &count), "");
  CHECK(count == 6);
  /* The fake clock moves 10 us per kernel. */
  for (i = 0; i < count; ++i) {
    CHECK(timings[i].start_ns == 10000ull * i);
    CHECK(timings[i].duration_ns == 10000ull);
  }
  CHECK(strcmp(timings[1].kernel_name, "dlc_test_reverse") == 0);
  dlc_session_destroy(session);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  dlc_ab_free(data);
  check_nothing_left();
}

/* Failures the library reports: status, CUDA's words, nothing leaked. */
static void test_library_errors(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session = NULL;
  dlc_test_gpu_chain_t c;
  float buffer[1000];
  uint8_t *data;
  size_t size;

  fake_cuda_reset();
  cu_chain(&c);
  dlc_test_build_gpu_chain(&c, &data, &size);
  CHECK_OK(cu_context_create(&context), "");

  fake_cuda_fail_next("cuModuleLoadDataEx", 2);
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model),
               DLC_ERROR_OUT_OF_MEMORY, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context),
                 "cuModuleLoadDataEx of the PTX of kernel 0 failed: out of "
                 "memory (CUDA_ERROR_OUT_OF_MEMORY, CUDA error 2)");
  check_nothing_left();

  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  fake_cuda_fail_next("cuMemAlloc_v2", 2);
  CHECK_STATUS(dlc_session_create(model, NULL, &session),
               DLC_ERROR_OUT_OF_MEMORY, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context),
                 "cuMemAlloc of the arena failed: out of memory");
  fake_cuda_fail_next("cuLaunchKernel", 719);
  CHECK_STATUS(dlc_session_create(model, NULL, &session), DLC_ERROR_DEVICE,
               dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context),
                 "cuLaunchKernel of launch 0 failed: unspecified launch "
                 "failure (CUDA_ERROR_LAUNCH_FAILED, CUDA error 719)");
  fake_cuda_fail_next("cuGraphInstantiateWithFlags", 1);
  CHECK_STATUS(dlc_session_create(model, NULL, &session), DLC_ERROR_DEVICE,
               dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context),
                 "cuGraphInstantiateWithFlags failed: invalid argument");
  CHECK(fake_cuda_stats()->streams_live == 0 &&
        fake_cuda_stats()->graphs_live == 0 &&
        fake_cuda_stats()->allocations_live == 1);

  session = make_session(context, model, 0);
  fake_cuda_fail_next("cuGraphLaunch", 719);
  CHECK_STATUS(dlc_session_run(session), DLC_ERROR_DEVICE,
               dlc_session_message(session));
  CHECK_CONTAINS(dlc_session_message(session),
                 "cuGraphLaunch failed: unspecified launch failure "
                 "(CUDA_ERROR_LAUNCH_FAILED, CUDA error 719)");
  fake_cuda_fail_next("cuCtxPushCurrent_v2", 201);
  CHECK_STATUS(dlc_session_run(session), DLC_ERROR_DEVICE,
               dlc_session_message(session));
  CHECK_CONTAINS(dlc_session_message(session),
                 "cuCtxPushCurrent failed: invalid device context");
  memset(buffer, 0, sizeof(buffer));
  fake_cuda_fail_next("cuMemcpyHtoDAsync_v2", 1);
  CHECK_STATUS(dlc_session_set_input(session, 0, buffer, sizeof(buffer)),
               DLC_ERROR_DEVICE, dlc_session_message(session));
  CHECK_CONTAINS(dlc_session_message(session),
                 "copying an input to the device failed");
  fake_cuda_fail_next("cuStreamSynchronize", 719);
  CHECK_STATUS(dlc_session_get_output(session, 0, buffer, sizeof(buffer)),
               DLC_ERROR_DEVICE, dlc_session_message(session));
  CHECK_CONTAINS(dlc_session_message(session),
                 "copying an output from the device failed");
  /* And the session still works. */
  run_and_check(session, 1000, 3);
  CHECK(fake_cuda_stats()->context_depth == 0);
  dlc_session_destroy(session);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  dlc_ab_free(data);
  check_nothing_left();
}

/* What the driver refuses before (or without) loading anything. */
static void test_refusals(void) {
  static const char unterminated[] = {'.', 't', 'a', 'r'};
  dlc_test_gpu_chain_t c;
  int i;

  fake_cuda_reset();
  cu_chain(&c);
  c.scale_kernel = "dlc_test_missing";
  expect_load(&c, DLC_ERROR_INVALID_ARTIFACT,
              "kernel 2: 'dlc_test_missing' is not an entry point of its "
              "PTX module");
  cu_chain(&c);
  c.code_format = DLCX_CODE_SPIRV;
  expect_load(&c, DLC_ERROR_UNSUPPORTED, "code_format 2 is not PTX");
  cu_chain(&c);
  for (i = 0; i < 5; ++i) {
    c.code[i] = (const uint8_t *)unterminated;
    c.code_size[i] = sizeof(unterminated);
  }
  expect_load(&c, DLC_ERROR_INVALID_ARTIFACT,
              "its PTX (4 bytes) is not NUL-terminated");
  cu_chain(&c);
  c.target_sm = 0;
  expect_load(&c, DLC_ERROR_INVALID_ARTIFACT, "target_sm 0");
  cu_chain(&c);
  c.features = DLCX_FEATURE_VK_INT64;
  expect_load(&c, DLC_ERROR_UNSUPPORTED, "target features 0x1000");
  cu_chain(&c);
  c.workgroup = 2048;
  expect_load(&c, DLC_ERROR_UNSUPPORTED,
              "kernel 0 ('dlc_test_add'): block 2048x1x1 exceeds");
  cu_chain(&c);
  c.grid[0] = 1, c.grid[1] = 70000, c.grid[2] = 1;
  expect_load(&c, DLC_ERROR_UNSUPPORTED, "grid[1] = 70000 exceeds");

  fake_cuda_set_devices(2, 87);
  cu_chain(&c);
  {
    dlc_context_t *context = NULL;
    dlc_model_t *model = NULL;
    dlc_model_options_t options;
    uint8_t *data;
    size_t size;
    dlc_test_build_gpu_chain(&c, &data, &size);
    memset(&options, 0, sizeof(options));
    options.struct_size = sizeof(options);
    options.device_index = 1;
    CHECK_OK(cu_context_create(&context), "");
    CHECK_OK(dlc_model_load_memory(context, data, size, &options, &model),
             dlc_context_message(context));
    dlc_model_destroy(model);
    options.device_index = 3;
    CHECK_STATUS(dlc_model_load_memory(context, data, size, &options, &model),
                 DLC_ERROR_UNAVAILABLE, dlc_context_message(context));
    CHECK_CONTAINS(dlc_context_message(context),
                   "device_index 3: there are 2 CUDA devices");
    dlc_context_destroy(context);
    dlc_ab_free(data);
  }
  check_nothing_left();
}

static void expect_unavailable(const char *part) {
  dlc_context_t *context = NULL;
  dlc_test_gpu_chain_t c;
  CHECK_OK(cu_context_create(&context), "");
  CHECK_STATUS(dlc_context_probe(context, DLCX_TARGET_CUDA),
               DLC_ERROR_UNAVAILABLE, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), part);
  dlc_context_destroy(context);
  cu_chain(&c);
  expect_load(&c, DLC_ERROR_UNAVAILABLE, part);
}

static void test_unavailable(void) {
  fake_cuda_reset();
  fake_cuda_set_devices(0, 87);
  expect_unavailable("CUDA is not available: cuInit reports no CUDA-capable "
                     "device");
  fake_cuda_reset();
  g_cu_options.library = "/nonexistent/libcuda.so.1";
  expect_unavailable("cannot load the CUDA driver library "
                     "'/nonexistent/libcuda.so.1'");
  g_cu_options.library = DLC_TEST_FAKE_CUDA_OLD;
  expect_unavailable("lacks cuGraphInstantiateWithFlags (dlc needs a driver "
                     "for CUDA 11.4 or newer)");
  g_cu_options.library = DLC_TEST_FAKE_CUDA;
  /* Options whose struct_size this runtime does not know are refused. */
  {
    dlc_context_t *context = NULL;
    g_cu_options.struct_size = sizeof(g_cu_options) + 8;
    CHECK_STATUS(cu_context_create(&context), DLC_ERROR_INVALID_ARGUMENT,
                 "struct_size too big");
    g_cu_options.struct_size = 2;
    CHECK_STATUS(cu_context_create(&context), DLC_ERROR_INVALID_ARGUMENT,
                 "struct_size too small");
    CHECK(context == NULL);
    g_cu_options.struct_size = sizeof(g_cu_options);
  }
}

typedef struct counting_allocator_t {
  dlc_allocator_t base;
  long live, calls, fail_at;
} counting_allocator_t;

static void *counting_alloc(void *self, size_t size, size_t alignment) {
  counting_allocator_t *a = (counting_allocator_t *)self;
  void *ptr = NULL;
  if (a->calls++ == a->fail_at)
    return NULL;
  if (posix_memalign(&ptr,
                     alignment < sizeof(void *) ? sizeof(void *) : alignment,
                     size) != 0)
    return NULL;
  ++a->live;
  return ptr;
}

static void counting_free(void *self, void *ptr) {
  counting_allocator_t *a = (counting_allocator_t *)self;
  if (ptr)
    --a->live;
  free(ptr);
}

static void test_allocations(void) {
  counting_allocator_t counting;
  dlc_test_gpu_chain_t c;
  uint8_t *data;
  size_t size;
  long fail_at;
  int profiling;

  fake_cuda_reset();
  cu_chain(&c);
  dlc_test_build_gpu_chain(&c, &data, &size);
  for (profiling = 0; profiling < 2; ++profiling)
    for (fail_at = 0;; ++fail_at) {
      dlc_context_options_t options;
      dlc_context_t *context = NULL;
      dlc_model_t *model = NULL;
      dlc_session_t *session = NULL;
      dlc_status_t status;
      counting.base.self = &counting;
      counting.base.alloc = counting_alloc;
      counting.base.free = counting_free;
      counting.live = counting.calls = 0;
      counting.fail_at = fail_at;
      memset(&options, 0, sizeof(options));
      options.struct_size = sizeof(options);
      options.allocator = counting.base;
      options.cuda = &g_cu_options;
      status = dlc_context_create(&options, &context);
      if (status == DLC_OK)
        status = dlc_model_load_memory(context, data, size, NULL, &model);
      if (status == DLC_OK) {
        dlc_session_options_t session_options;
        memset(&session_options, 0, sizeof(session_options));
        session_options.struct_size = sizeof(session_options);
        session_options.enable_profiling = (uint32_t)profiling;
        status = dlc_session_create(model, &session_options, &session);
      }
      if (status == DLC_OK) {
        long before = counting.calls;
        run_and_check(session, 1000, 0);
        run_and_check(session, 1000, 1);
        CHECK(counting.calls == before);
      } else {
        CHECK(status == DLC_ERROR_OUT_OF_MEMORY);
      }
      dlc_session_destroy(session);
      dlc_model_destroy(model);
      dlc_context_destroy(context);
      CHECK(counting.live == 0);
      check_nothing_left();
      if (status == DLC_OK)
        break;
    }
  dlc_ab_free(data);
}

static void test_dlc_run(void) {
  char dir[] = "/tmp/dlc-cuda-XXXXXX", path[256], command[2048];
  dlc_test_gpu_chain_t c;
  uint8_t *data, *log;
  size_t size;
  int status;

  CHECK(mkdtemp(dir));
  cu_chain(&c);
  dlc_test_build_gpu_chain(&c, &data, &size);
  snprintf(path, sizeof(path), "%s/model.dlcx", dir);
  CHECK(dlc_ab_write_file(path, data, size));
  dlc_ab_free(data);
  /* Random inputs, profiled: the child process configures its fake from
   * the environment (sm_87 by default). */
  snprintf(command, sizeof(command),
           "cd %s && %s model.dlcx --print-io --profile trace.json >log 2>&1",
           dir, DLC_RUN_COMMAND);
  status = system(command);
  snprintf(path, sizeof(path), "%s/log", dir);
  log = dlc_ab_read_file(path, &size);
  CHECK(log);
  log = (uint8_t *)realloc(log, size + 1);
  log[size] = '\0';
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "dlc-run failed:\n%s\n", (char *)log);
    exit(1);
  }
  CHECK_CONTAINS((char *)log, "target cuda");
  free(log);
  snprintf(path, sizeof(path), "%s/trace.json", dir);
  log = dlc_ab_read_file(path, &size);
  CHECK(log);
  log = (uint8_t *)realloc(log, size + 1);
  log[size] = '\0';
  CHECK_CONTAINS((char *)log, "\"dlc_test_count\"");
  free(log);
  unlink(path);
  snprintf(path, sizeof(path), "%s/log", dir);
  unlink(path);
  snprintf(path, sizeof(path), "%s/model.dlcx", dir);
  unlink(path);
  CHECK(rmdir(dir) == 0);
}

#define RUN(test)                                                              \
  do {                                                                         \
    printf("%s\n", #test);                                                     \
    fflush(stdout);                                                            \
    test();                                                                    \
  } while (0)

int main(void) {
  g_ptx_size = make_ptx(g_ptx, sizeof(g_ptx), 87);
  g_cu_options.struct_size = sizeof(g_cu_options);
  g_cu_options.library = DLC_TEST_FAKE_CUDA;
  /* dlc-run, run by test_dlc_run, maps this onto the same option. */
  CHECK(setenv("DLC_CUDA_LIBRARY", DLC_TEST_FAKE_CUDA, 1) == 0);
  RUN(test_graph_replay);
  RUN(test_grids);
  RUN(test_module_selection);
  RUN(test_profiling);
  RUN(test_library_errors);
  RUN(test_refusals);
  RUN(test_unavailable);
  RUN(test_allocations);
  if (DLC_RUN_COMMAND[0])
    RUN(test_dlc_run);
  printf("test_cuda: all passed\n");
  return 0;
}
