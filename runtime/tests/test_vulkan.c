/*===- test_vulkan.c - the Vulkan driver on a real Vulkan implementation --===*
 *
 * Runs on whatever Vulkan device is present (Mesa's lavapipe in CI): the GPU
 * chain model built from GLSL kernels compiled at build time, through the
 * public API and through dlc-run; profiling; two sessions, also on two
 * threads; the staging path; every allocation failing once; refusals of
 * unknown and missing features, of limits, of bad SPIR-V, of a missing
 * loader and of devices that do not exist. Exits 77 (skipped) when the
 * kernels could not be compiled or no Vulkan device is present.
 *
 * Run with DLC_VULKAN_VALIDATE=1 (ctest does, as vulkan_validation) it also
 * proves the driver's Vulkan usage clean: any validation error fails a call.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact_builder.h"
#include "dlc/driver.h"
#include "dlc/runtime.h"
#include "dlc/vulkan_driver.h"
#include "test_models.h"
#include "test_util.h"

#define SKIPPED 77

enum { K_ADD, K_REVERSE, K_SCALE, K_ZERO, K_COUNT, K_HALF, K_KERNELS };
static const char *const g_names[K_KERNELS] = {"add",  "reverse", "scale",
                                               "zero", "count",   "half"};
static uint8_t *g_spirv[K_KERNELS];
static size_t g_spirv_size[K_KERNELS];

/* The Vulkan driver's options for every context the tests create; main
 * turns validation on under ctest's vulkan_validation (DLC_VULKAN_VALIDATE=1,
 * mapped here as dlc-run maps it), and tests change the rest in turn. */
static dlc_vulkan_driver_options_t g_vk_options;

static dlc_status_t vk_context_create(dlc_context_t **out_context) {
  return dlc_test_context_create(&g_vk_options, NULL, out_context);
}

/*===--- helpers ---------------------------------------------------------===*/

typedef struct counting_allocator_t {
  dlc_allocator_t base;
  long live;
  long calls;
  long fail_at; /* the call that returns NULL; -1: never */
} counting_allocator_t;

static void *counting_alloc(void *self, size_t size, size_t alignment) {
  counting_allocator_t *a = (counting_allocator_t *)self;
  void *ptr = NULL;
  CHECK(alignment && (alignment & (alignment - 1)) == 0 && alignment <= 4096);
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

static void vk_chain(dlc_test_gpu_chain_t *c) {
  int i;
  memset(c, 0, sizeof(*c));
  c->target = DLCX_TARGET_VULKAN;
  c->code_format = DLCX_CODE_SPIRV;
  for (i = 0; i < 5; ++i) {
    c->code[i] = g_spirv[i];
    c->code_size[i] = g_spirv_size[i];
  }
  c->scale = 3.0f;
}

static void build(const dlc_test_gpu_chain_t *c, uint8_t **data, size_t *size) {
  dlc_test_build_gpu_chain(c, data, size);
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

static void fill_inputs(float *x, float *y, uint32_t n, uint32_t seed) {
  uint32_t i;
  for (i = 0; i < n; ++i) {
    x[i] = (float)(i % 97) * 0.5f + (float)seed;
    y[i] = (float)(i % 13) - 6.0f;
  }
}

/* Runs the chain once with inputs from `seed`; checks both outputs. */
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

/* Loads `data` on a new context and expects `status` with `part` in the
 * message. */
static void expect_load(const uint8_t *data, size_t size, dlc_status_t status,
                        const char *part) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  CHECK_OK(vk_context_create(&context), "");
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model), status,
               dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), part);
  CHECK(model == NULL);
  dlc_context_destroy(context);
}

static void expect_chain_load(const dlc_test_gpu_chain_t *c,
                              dlc_status_t status, const char *part) {
  uint8_t *data;
  size_t size;
  build(c, &data, &size);
  expect_load(data, size, status, part);
  dlc_ab_free(data);
}

/* Loads the chain `c` and runs it `runs` times. */
static void load_and_run(const dlc_test_gpu_chain_t *c, uint32_t n,
                         int profiling, int runs) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session;
  uint8_t *data;
  size_t size;
  int r;
  build(c, &data, &size);
  CHECK_OK(vk_context_create(&context), "");
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  session = make_session(context, model, profiling);
  for (r = 0; r < runs; ++r)
    run_and_check(session, n, (uint32_t)r);
  dlc_session_destroy(session);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  dlc_ab_free(data);
}

/*===--- tests -----------------------------------------------------------===*/

static void test_run(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session;
  dlc_test_gpu_chain_t c;
  dlc_tensor_info_t info;
  uint8_t *data;
  size_t size;

  vk_chain(&c);
  build(&c, &data, &size);
  CHECK_OK(vk_context_create(&context), "");
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  CHECK(strcmp(dlc_model_driver_name(model), "vulkan") == 0);
  CHECK(dlc_model_target(model) == DLCX_TARGET_VULKAN);
  CHECK(dlc_model_kernel_count(model) == 5);
  CHECK(dlc_model_launch_count(model) == 6);
  CHECK_OK(dlc_model_output_info(model, 1, &info), "");
  CHECK(strcmp(info.name, "hits") == 0 && info.size_bytes == 4000);
  session = make_session(context, model, 0);
  run_and_check(session, 1000, 0);
  run_and_check(session, 1000, 7);
  /* Inputs persist between runs; a run without new inputs repeats. */
  CHECK_OK(dlc_session_run(session), dlc_session_message(session));
  dlc_session_destroy(session);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  dlc_ab_free(data);
}

static void test_grids(void) {
  static const struct {
    uint32_t n, grid[3];
  } cases[] = {{1, {0, 0, 0}},     {64, {0, 0, 0}},   {65, {0, 0, 0}},
               {64000, {0, 0, 0}}, {1536, {4, 3, 2}}, {1000, {2, 2, 4}},
               {300, {1, 1, 5}},   {5000, {1, 80, 1}}};
  size_t i;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    dlc_test_gpu_chain_t c;
    vk_chain(&c);
    c.n = cases[i].n;
    memcpy(c.grid, cases[i].grid, sizeof(c.grid));
    load_and_run(&c, c.n, 0, 2);
  }
}

static void test_profiling(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session;
  const dlc_kernel_timing_t *timings;
  dlc_test_gpu_chain_t c;
  uint32_t count, i;
  uint8_t *data;
  size_t size;

  vk_chain(&c);
  c.n = 100000;
  build(&c, &data, &size);
  CHECK_OK(vk_context_create(&context), "");
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  session = make_session(context, model, 1);
  CHECK_OK(dlc_session_timings(session, &timings, &count), "");
  CHECK(count == 0);
  run_and_check(session, c.n, 1);
  CHECK_OK(dlc_session_timings(session, &timings, &count), "");
  CHECK(count == 6);
  CHECK(strcmp(timings[0].kernel_name, "dlc_test_add") == 0);
  CHECK(strcmp(timings[2].kernel_name, "dlc_test_scale") == 0);
  CHECK(strcmp(timings[5].kernel_name, "dlc_test_count") == 0);
  for (i = 0; i < count; ++i) {
    printf("  %-18s start %9llu ns, %9llu ns\n", timings[i].kernel_name,
           (unsigned long long)timings[i].start_ns,
           (unsigned long long)timings[i].duration_ns);
    /* 100000 elements take more than a nanosecond anywhere, and less than
     * ten seconds. */
    CHECK(timings[i].duration_ns > 0 &&
          timings[i].duration_ns < 10000000000ull);
    if (i > 0)
      CHECK(timings[i].start_ns >= timings[i - 1].start_ns);
  }
  run_and_check(session, c.n, 2);
  dlc_session_destroy(session);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  dlc_ab_free(data);
}

/* A single-threaded runtime does not lock the queue that sessions of a
 * model share: there, sessions take turns. */
#if !defined(DLC_RUNTIME_SINGLE_THREADED)
typedef struct job_t {
  dlc_session_t *session;
  uint32_t seed;
} job_t;

static void *job_main(void *arg) {
  job_t *job = (job_t *)arg;
  uint32_t run;
  for (run = 0; run < 20; ++run)
    run_and_check(job->session, 4096, job->seed + run);
  return NULL;
}

static void run_concurrently(dlc_session_t *const sessions[2]) {
  pthread_t threads[2];
  job_t jobs[2];
  int i;
  for (i = 0; i < 2; ++i) {
    jobs[i].session = sessions[i];
    jobs[i].seed = (uint32_t)i * 100u;
    CHECK(pthread_create(&threads[i], NULL, job_main, &jobs[i]) == 0);
  }
  for (i = 0; i < 2; ++i)
    CHECK(pthread_join(threads[i], NULL) == 0);
}
#endif

/* Two sessions of one model: interleaved, then on two threads at once. */
static void test_two_sessions(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *sessions[2];
  dlc_test_gpu_chain_t c;
  uint8_t *data;
  size_t size;
  int i;

  vk_chain(&c);
  c.n = 4096;
  build(&c, &data, &size);
  CHECK_OK(vk_context_create(&context), "");
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  sessions[0] = make_session(context, model, 0);
  sessions[1] = make_session(context, model, 1);
  {
    /* Inputs set on one session stay there while the other runs. */
    float x[4096], y[4096], out[4096], expected[4096];
    fill_inputs(x, y, 4096, 11);
    CHECK_OK(dlc_session_set_input(sessions[0], 0, x, sizeof(x)), "");
    CHECK_OK(dlc_session_set_input(sessions[0], 1, y, sizeof(y)), "");
    run_and_check(sessions[1], 4096, 3);
    CHECK_OK(dlc_session_run(sessions[0]), dlc_session_message(sessions[0]));
    CHECK_OK(dlc_session_get_output(sessions[0], 0, out, sizeof(out)), "");
    dlc_test_chain_reference(x, y, 4096, 3.0f, expected);
    CHECK(memcmp(out, expected, sizeof(out)) == 0);
  }
#if !defined(DLC_RUNTIME_SINGLE_THREADED)
  run_concurrently(sessions);
#endif
  for (i = 0; i < 2; ++i)
    dlc_session_destroy(sessions[i]);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  dlc_ab_free(data);
}

/* The discrete-GPU path: staging buffers for inputs, outputs and weights. */
static void test_staging(void) {
  dlc_test_gpu_chain_t c;
  vk_chain(&c);
  c.n = 3000;
  g_vk_options.force_staging = 1;
  load_and_run(&c, c.n, 0, 3);
  load_and_run(&c, c.n, 1, 2);
  g_vk_options.force_staging = 0;
}

/* No launches: an input that is also the output goes in and out. */
static void test_passthrough(void) {
  int64_t dims[1] = {37};
  int8_t in[37], out[37];
  int i;
  for (i = 0; i < 37; ++i)
    in[i] = (int8_t)(i * 3 - 50);
  for (i = 0; i < 2; ++i) {
    dlc_ab_t *b = dlc_ab_create(DLCX_TARGET_VULKAN, 0);
    dlc_context_t *context = NULL;
    dlc_model_t *model = NULL;
    dlc_session_t *session;
    uint8_t *data;
    size_t size;
    uint32_t t = dlc_ab_arena_tensor(b, "q", DLCX_DTYPE_I8, 1, dims);
    dlc_ab_input(b, t);
    dlc_ab_output(b, t);
    dlc_ab_finish(b, &data, &size);
    dlc_ab_destroy(b);
    g_vk_options.force_staging = (uint32_t)i;
    CHECK_OK(vk_context_create(&context), "");
    CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
             dlc_context_message(context));
    session = make_session(context, model, 1);
    memset(out, 0, sizeof(out));
    CHECK_OK(dlc_session_set_input(session, 0, in, sizeof(in)), "");
    CHECK_OK(dlc_session_run(session), dlc_session_message(session));
    CHECK_OK(dlc_session_get_output(session, 0, out, sizeof(out)), "");
    CHECK(memcmp(in, out, sizeof(in)) == 0);
    dlc_session_destroy(session);
    dlc_model_destroy(model);
    dlc_context_destroy(context);
    dlc_ab_free(data);
  }
  g_vk_options.force_staging = 0;
}

/* Run allocates nothing; every failed allocation is reported, leaks
 * nothing. */
static void test_allocations(void) {
  counting_allocator_t counting;
  dlc_test_gpu_chain_t c;
  uint8_t *data;
  size_t size;
  long fail_at;

  vk_chain(&c);
  build(&c, &data, &size);
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
    options.vulkan = &g_vk_options;
    status = dlc_context_create(&options, &context);
    if (status == DLC_OK)
      status = dlc_model_load_memory(context, data, size, NULL, &model);
    if (status == DLC_OK) {
      dlc_session_options_t session_options;
      memset(&session_options, 0, sizeof(session_options));
      session_options.struct_size = sizeof(session_options);
      session_options.enable_profiling = 1;
      status = dlc_session_create(model, &session_options, &session);
    }
    if (status == DLC_OK) {
      long before = counting.calls;
      run_and_check(session, 1000, 0);
      run_and_check(session, 1000, 1);
      CHECK(counting.calls == before);
    } else if (status != DLC_ERROR_OUT_OF_MEMORY) {
      fprintf(stderr, "allocation %ld failing gave %s: %s\n", fail_at,
              dlc_status_name(status),
              context ? dlc_context_message(context) : "");
      exit(1);
    }
    dlc_session_destroy(session);
    dlc_model_destroy(model);
    dlc_context_destroy(context);
    CHECK(counting.live == 0);
    if (status == DLC_OK)
      break;
  }
  printf("  %ld allocations, each failed once\n", fail_at);
  CHECK(fail_at > 10);
  dlc_ab_free(data);
}

/* A float16 kernel: runs where the device has the feature; refused with
 * the feature named where it does not (masked_features). */
static void build_half(uint64_t features, uint8_t **data, size_t *size) {
  int64_t dims[1] = {200};
  uint32_t n = 200, bindings[3], k;
  dlc_ab_t *b = dlc_ab_create(DLCX_TARGET_VULKAN, features);
  uint64_t code = dlc_ab_code(b, g_spirv[K_HALF], g_spirv_size[K_HALF]);
  bindings[0] = dlc_ab_arena_tensor(b, "in", DLCX_DTYPE_F16, 1, dims);
  bindings[1] = dlc_ab_arena_tensor(b, "out", DLCX_DTYPE_F16, 1, dims);
  bindings[2] = dlc_ab_constant_tensor(b, "n", DLCX_DTYPE_U32, 0, NULL, &n);
  k = dlc_ab_kernel(b, "dlc_test_half", DLCX_CODE_SPIRV, code,
                    g_spirv_size[K_HALF], 3);
  dlc_ab_kernel_workgroup(b, k, 64, 1, 1);
  dlc_ab_launch(b, k, bindings, 3, 4, 1, 1);
  dlc_ab_input(b, bindings[0]);
  dlc_ab_output(b, bindings[1]);
  dlc_ab_finish(b, data, size);
  dlc_ab_destroy(b);
}

static void test_features(void) {
  dlc_test_gpu_chain_t c;
  uint8_t *data;
  size_t size;

  vk_chain(&c);
  c.features = (uint64_t)1 << 14; /* a Vulkan bit no feature has yet */
  expect_chain_load(&c, DLC_ERROR_UNSUPPORTED, "0x4000");
  c.features = DLCX_FEATURE_CPU_X86_64;
  expect_chain_load(&c, DLC_ERROR_UNSUPPORTED, "does not know");

  build_half(DLCX_FEATURE_VK_FLOAT16, &data, &size);
  {
    dlc_context_t *context = NULL;
    dlc_model_t *model = NULL;
    dlc_status_t status;
    CHECK_OK(vk_context_create(&context), "");
    status = dlc_model_load_memory(context, data, size, NULL, &model);
    if (status == DLC_ERROR_UNSUPPORTED) {
      /* A device without float16: the refusal must say so. */
      CHECK_CONTAINS(dlc_context_message(context), "shaderFloat16");
      printf("  this device lacks float16: %s\n", dlc_context_message(context));
    } else {
      uint16_t in[200], out[200];
      dlc_session_t *session;
      int i;
      CHECK_OK(status, dlc_context_message(context));
      session = make_session(context, model, 0);
      for (i = 0; i < 200; ++i) /* i / 64 as IEEE half: exact */
        in[i] = (uint16_t)(0x3c00u + (uint16_t)(i % 100));
      CHECK_OK(dlc_session_set_input(session, 0, in, sizeof(in)), "");
      CHECK_OK(dlc_session_run(session), dlc_session_message(session));
      CHECK_OK(dlc_session_get_output(session, 0, out, sizeof(out)), "");
      for (i = 0; i < 200; ++i) /* times two: the exponent goes up by one */
        CHECK(out[i] == in[i] + 0x0400u);
      dlc_session_destroy(session);
      dlc_model_destroy(model);
    }
    dlc_context_destroy(context);
  }

  /* The same device, told to treat float16, int64 and float64 as
   * missing. */
  g_vk_options.masked_features = 0x3100;
  expect_load(data, size, DLC_ERROR_UNSUPPORTED,
              "needs shaderFloat16 and storageBuffer16BitAccess (target "
              "feature 0x100), which Vulkan device '");
  dlc_ab_free(data);
  c.features = DLCX_FEATURE_VK_INT64;
  expect_chain_load(&c, DLC_ERROR_UNSUPPORTED, "shaderInt64");
  c.features = DLCX_FEATURE_VK_FLOAT64;
  expect_chain_load(&c, DLC_ERROR_UNSUPPORTED, "shaderFloat64");
  g_vk_options.masked_features = 0;
}

static void test_bad_code(void) {
  static const uint8_t junk[64] = {1, 2, 3, 4, 5};
  dlc_test_gpu_chain_t c;

  vk_chain(&c);
  c.code_format = DLCX_CODE_PTX;
  expect_chain_load(&c, DLC_ERROR_UNSUPPORTED, "is not SPIR-V");
  vk_chain(&c);
  c.code[K_REVERSE] = junk;
  c.code_size[K_REVERSE] = sizeof(junk);
  expect_chain_load(&c, DLC_ERROR_INVALID_ARTIFACT,
                    "kernel 1 ('dlc_test_reverse'): its code (64 bytes) is "
                    "not a little-endian SPIR-V module");
  vk_chain(&c);
  c.code_size[K_ADD] = 30; /* inside the preamble */
  expect_chain_load(&c, DLC_ERROR_INVALID_ARTIFACT, "not a little-endian");
  c.code_size[K_ADD] = 36; /* within OpExtInstImport */
  expect_chain_load(&c, DLC_ERROR_INVALID_ARTIFACT, "the module ends");
  vk_chain(&c);
  c.scale_kernel = "dlc_test_missing";
  expect_chain_load(&c, DLC_ERROR_INVALID_ARTIFACT,
                    "no GLCompute entry point named 'dlc_test_missing'");
  vk_chain(&c);
  c.workgroup = 32;
  expect_chain_load(&c, DLC_ERROR_INVALID_ARTIFACT,
                    "workgroup_size is 32x1x1 but its SPIR-V declares a "
                    "local size of 64x1x1");
}

static void test_limits(void) {
  dlc_test_gpu_chain_t c;
  int64_t dims[1] = {(int64_t)1 << 28}; /* 1 GiB of f32 */
  uint32_t bindings[2], k, n = 1;
  uint8_t *data;
  size_t size;
  dlc_ab_t *b = dlc_ab_create(DLCX_TARGET_VULKAN, 0);
  uint64_t code = dlc_ab_code(b, g_spirv[K_ZERO], g_spirv_size[K_ZERO]);

  /* Checked at load, before anything of that size is allocated. */
  bindings[0] = dlc_ab_arena_tensor(b, "huge", DLCX_DTYPE_U32, 1, dims);
  bindings[1] = dlc_ab_constant_tensor(b, "n", DLCX_DTYPE_U32, 0, NULL, &n);
  k = dlc_ab_kernel(b, "dlc_test_zero", DLCX_CODE_SPIRV, code,
                    g_spirv_size[K_ZERO], 2);
  dlc_ab_kernel_workgroup(b, k, 64, 1, 1);
  dlc_ab_launch(b, k, bindings, 2, 1, 1, 1);
  dlc_ab_finish(b, &data, &size);
  dlc_ab_destroy(b);
  expect_load(data, size, DLC_ERROR_UNSUPPORTED,
              "launch 0: tensor 0 ('huge') has 1073741824 bytes, more than "
              "the maxStorageBufferRange");
  dlc_ab_free(data);

  /* Above the spec's minimum of 65535 workgroups (lavapipe's limit), and
   * of most devices'. */
  vk_chain(&c);
  c.grid[0] = c.grid[1] = 1;
  c.grid[2] = 0xffffffffu;
  build(&c, &data, &size);
  {
    dlc_context_t *context = NULL;
    dlc_model_t *model = NULL;
    dlc_status_t status;
    CHECK_OK(vk_context_create(&context), "");
    status = dlc_model_load_memory(context, data, size, NULL, &model);
    if (status != DLC_OK) {
      CHECK_STATUS(status, DLC_ERROR_UNSUPPORTED, dlc_context_message(context));
      CHECK_CONTAINS(dlc_context_message(context),
                     "launch 0: grid[2] = 4294967295 exceeds the");
    }
    dlc_model_destroy(model);
    dlc_context_destroy(context);
  }
  dlc_ab_free(data);
}

/* Mesa's lavapipe ends every loop of an invocation once 65535 iterations
 * have run in all: a kernel recorded as running more is refused there
 * (elsewhere it loads). */
static void test_loop_limit(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  uint32_t bindings[2], k, n = 64;
  int64_t dims[1] = {64};
  uint8_t *data;
  size_t size;
  dlc_status_t status;
  dlc_ab_t *b = dlc_ab_create(DLCX_TARGET_VULKAN, 0);
  uint64_t code = dlc_ab_code(b, g_spirv[K_ZERO], g_spirv_size[K_ZERO]);

  bindings[0] = dlc_ab_arena_tensor(b, "hits", DLCX_DTYPE_U32, 1, dims);
  bindings[1] = dlc_ab_constant_tensor(b, "n", DLCX_DTYPE_U32, 0, NULL, &n);
  k = dlc_ab_kernel(b, "dlc_test_zero", DLCX_CODE_SPIRV, code,
                    g_spirv_size[K_ZERO], 2);
  dlc_ab_kernel_workgroup(b, k, 64, 1, 1);
  dlc_ab_kernel_loops(b, k, 65536);
  dlc_ab_launch(b, k, bindings, 2, 1, 1, 1);
  dlc_ab_finish(b, &data, &size);
  dlc_ab_destroy(b);

  g_vk_options.device_filter = "llvmpipe";
  CHECK_OK(vk_context_create(&context), "");
  status = dlc_model_load_memory(context, data, size, NULL, &model);
  if (status != DLC_ERROR_UNAVAILABLE) { /* a lavapipe device is present */
    CHECK_STATUS(status, DLC_ERROR_UNSUPPORTED, dlc_context_message(context));
    CHECK_CONTAINS(dlc_context_message(context),
                   "kernel 0 ('dlc_test_zero') runs up to 65536 loop "
                   "iterations per invocation");
  }
  dlc_context_destroy(context);
  g_vk_options.device_filter = NULL;

  /* At the limit it loads. */
  ((dlcx_kernel_limits_t
        *)(data + dlc_ab_section(data, DLCX_SECTION_KERNEL_LIMITS)->offset))[0]
      .max_loop_iterations = 65535;
  dlc_ab_reseal(data, size);
  CHECK_OK(vk_context_create(&context), "");
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  dlc_ab_free(data);
}

static void test_devices(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_model_options_t options;
  dlc_test_gpu_chain_t c;
  char name[256];
  const char *begin, *end;
  uint8_t *data;
  size_t size;

  vk_chain(&c);
  build(&c, &data, &size);
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.device_index = 99;
  CHECK_OK(vk_context_create(&context), "");
  CHECK_STATUS(dlc_model_load_memory(context, data, size, &options, &model),
               DLC_ERROR_UNAVAILABLE, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "device_index 99: there are");
  dlc_context_destroy(context);

  /* By name: none matches, then the first device's own name does. */
  g_vk_options.device_filter = "no such device";
  CHECK_OK(vk_context_create(&context), "");
  CHECK_STATUS(dlc_context_probe(context, DLCX_TARGET_VULKAN),
               DLC_ERROR_UNAVAILABLE, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context),
                 "there are 0 Vulkan devices whose name contains 'no such "
                 "device' (the device filter)");
  begin = strstr(dlc_context_message(context), "('");
  CHECK(begin);
  begin += 2;
  end = strchr(begin, '\'');
  CHECK(end && (size_t)(end - begin) < sizeof(name));
  memcpy(name, begin, (size_t)(end - begin));
  name[end - begin] = '\0';
  dlc_context_destroy(context);
  g_vk_options.device_filter = name;
  options.device_index = 0;
  CHECK_OK(vk_context_create(&context), "");
  CHECK_OK(dlc_model_load_memory(context, data, size, &options, &model),
           dlc_context_message(context));
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  g_vk_options.device_filter = NULL;
  dlc_ab_free(data);
}

static void test_missing_library(void) {
  dlc_context_t *context = NULL;
  dlc_test_gpu_chain_t c;
  g_vk_options.library = "/nonexistent/libvulkan.so.1";
  CHECK_OK(vk_context_create(&context), "");
  CHECK_STATUS(dlc_context_probe(context, DLCX_TARGET_VULKAN),
               DLC_ERROR_UNAVAILABLE, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "cannot load the Vulkan loader "
                                               "'/nonexistent/libvulkan.so.1'");
  dlc_context_destroy(context);
  vk_chain(&c);
  expect_chain_load(&c, DLC_ERROR_UNAVAILABLE, "/nonexistent/libvulkan.so.1");
  /* Not the loader at all: a library without vkGetInstanceProcAddr. */
  g_vk_options.library = "libm.so.6";
  expect_chain_load(&c, DLC_ERROR_UNAVAILABLE, "has no vkGetInstanceProcAddr");
  g_vk_options.library = NULL;
  /* Options whose struct_size this runtime does not know are refused. */
  g_vk_options.struct_size = sizeof(g_vk_options) + 8;
  CHECK_STATUS(vk_context_create(&context), DLC_ERROR_INVALID_ARGUMENT,
               "struct_size too big");
  CHECK(context == NULL);
  g_vk_options.struct_size = sizeof(g_vk_options);
}

/*===--- dlc-run ---------------------------------------------------------===*/

static void write_npy(const char *path, const char *descr, uint32_t n,
                      const void *data, size_t element_size) {
  char header[128];
  size_t length, total;
  FILE *f = fopen(path, "wb");
  CHECK(f);
  length = (size_t)snprintf(header, sizeof(header),
                            "{'descr': '%s', 'fortran_order': False, "
                            "'shape': (%u,), }",
                            descr, n);
  total = (10 + length + 1 + 63) / 64 * 64;
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc((int)((total - 10) & 0xff), f);
  fputc((int)((total - 10) >> 8), f);
  fwrite(header, 1, length, f);
  for (length += 10; length + 1 < total; ++length)
    fputc(' ', f);
  fputc('\n', f);
  CHECK(fwrite(data, element_size, n, f) == n);
  CHECK(fclose(f) == 0);
}

static void test_dlc_run(void) {
  enum { N = 777 };
  char dir[] = "/tmp/dlc-vulkan-XXXXXX", path[256], command[2048];
  static float x[N], y[N], out[N];
  static uint32_t hits[N];
  static const char *const files[] = {"model.dlcx", "x.npy",    "y.npy",
                                      "out.npy",    "hits.npy", "trace.json",
                                      "log"};
  dlc_test_gpu_chain_t c;
  uint8_t *data, *trace;
  size_t size, i;
  int status;

  CHECK(mkdtemp(dir));
  vk_chain(&c);
  c.n = N;
  build(&c, &data, &size);
  snprintf(path, sizeof(path), "%s/model.dlcx", dir);
  CHECK(dlc_ab_write_file(path, data, size));
  dlc_ab_free(data);
  fill_inputs(x, y, N, 5);
  dlc_test_chain_reference(x, y, N, 3.0f, out);
  for (i = 0; i < N; ++i)
    hits[i] = 2;
  snprintf(path, sizeof(path), "%s/x.npy", dir);
  write_npy(path, "<f4", N, x, 4);
  snprintf(path, sizeof(path), "%s/y.npy", dir);
  write_npy(path, "<f4", N, y, 4);
  snprintf(path, sizeof(path), "%s/out.npy", dir);
  write_npy(path, "<f4", N, out, 4);
  snprintf(path, sizeof(path), "%s/hits.npy", dir);
  write_npy(path, "<u4", N, hits, 4);
  snprintf(command, sizeof(command),
           "cd %s && %s model.dlcx --input x=x.npy --input y=y.npy "
           "--expect out=out.npy --expect hits=hits.npy --atol 0 --rtol 0 "
           "--profile trace.json --print-io --bench 5 >log 2>&1",
           dir, DLC_RUN_COMMAND);
  status = system(command);
  snprintf(path, sizeof(path), "%s/log", dir);
  trace = dlc_ab_read_file(path, &size);
  CHECK(trace);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "dlc-run failed:\n%.*s\n", (int)size, (char *)trace);
    exit(1);
  }
  trace = (uint8_t *)realloc(trace, size + 1);
  trace[size] = '\0';
  CHECK_CONTAINS((char *)trace, "target vulkan");
  free(trace);
  snprintf(path, sizeof(path), "%s/trace.json", dir);
  trace = dlc_ab_read_file(path, &size);
  CHECK(trace);
  trace = (uint8_t *)realloc(trace, size + 1);
  trace[size] = '\0';
  CHECK_CONTAINS((char *)trace, "\"dlc_test_reverse\"");
  free(trace);
  for (i = 0; i < sizeof(files) / sizeof(files[0]); ++i) {
    snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
    unlink(path);
  }
  CHECK(rmdir(dir) == 0);
}

/*===--- main ------------------------------------------------------------===*/

static int load_kernels(void) {
  int i;
  if (!DLC_TEST_SPIRV_DIR[0]) {
    printf("test_vulkan: skipped: glslangValidator was not found when the "
           "tests were configured, so there are no SPIR-V test kernels\n");
    return 0;
  }
  for (i = 0; i < K_KERNELS; ++i) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s.spv", DLC_TEST_SPIRV_DIR, g_names[i]);
    g_spirv[i] = dlc_ab_read_file(path, &g_spirv_size[i]);
    if (!g_spirv[i]) {
      fprintf(stderr, "cannot read %s\n", path);
      exit(1);
    }
  }
  return 1;
}

#define RUN(test)                                                              \
  do {                                                                         \
    printf("%s\n", #test);                                                     \
    fflush(stdout);                                                            \
    test();                                                                    \
  } while (0)

int main(void) {
  dlc_context_t *context = NULL;
  const char *validate = getenv("DLC_VULKAN_VALIDATE");
  int i;
  g_vk_options.struct_size = sizeof(g_vk_options);
  g_vk_options.validate = validate && strcmp(validate, "1") == 0;
  if (!load_kernels())
    return SKIPPED;
  CHECK_OK(vk_context_create(&context), "");
  if (dlc_context_probe(context, DLCX_TARGET_VULKAN) != DLC_OK) {
    printf("test_vulkan: skipped: %s\n", dlc_context_message(context));
    dlc_context_destroy(context);
    return SKIPPED;
  }
  dlc_context_destroy(context);
  RUN(test_run);
  RUN(test_grids);
  RUN(test_profiling);
  RUN(test_two_sessions);
  RUN(test_staging);
  RUN(test_passthrough);
  RUN(test_allocations);
  RUN(test_features);
  RUN(test_bad_code);
  RUN(test_limits);
  RUN(test_loop_limit);
  RUN(test_devices);
  RUN(test_missing_library);
  if (DLC_RUN_COMMAND[0])
    RUN(test_dlc_run);
  for (i = 0; i < K_KERNELS; ++i)
    free(g_spirv[i]);
  printf("test_vulkan: all passed\n");
  return 0;
}
