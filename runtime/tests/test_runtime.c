/*===- test_runtime.c - load, run and check the CPU path end to end -------===*/

#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "artifact_builder.h"
#include "dlc/cpu_driver.h"
#include "dlc/cuda_driver.h"
#include "dlc/driver.h"
#include "dlc/runtime.h"
#include "test_kernels.h"
#include "test_models.h"
#include "test_util.h"

static uint8_t *g_code;
static size_t g_code_size;

/*===--- an allocator that counts, and fails on request -----------------===*/

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

static void counting_init(counting_allocator_t *a, long fail_at) {
  a->base.self = a;
  a->base.alloc = counting_alloc;
  a->base.free = counting_free;
  a->live = 0;
  a->calls = 0;
  a->fail_at = fail_at;
}

/*===--- helpers ---------------------------------------------------------===*/

static void build_chain_with(uint32_t gx, uint32_t gy, uint32_t gz,
                             int serial_reverse, uint8_t **out_data,
                             size_t *out_size) {
  dlc_test_chain_t chain;
  memset(&chain, 0, sizeof(chain));
  chain.serial_reverse = serial_reverse;
  chain.code = g_code;
  chain.code_size = g_code_size;
  chain.grid[0] = gx;
  chain.grid[1] = gy;
  chain.grid[2] = gz;
  chain.scale = 3.0f;
  dlc_test_build_chain(&chain, out_data, out_size);
}

static void build_chain(uint32_t gx, uint32_t gy, uint32_t gz,
                        uint8_t **out_data, size_t *out_size) {
  build_chain_with(gx, gy, gz, 0, out_data, out_size);
}

/* Runs the chain model once with inputs derived from `seed` and checks both
 * outputs against the reference. */
static void run_and_check_chain(dlc_session_t *session, uint32_t n,
                                uint32_t seed) {
  float *x = (float *)malloc(n * sizeof(float));
  float *y = (float *)malloc(n * sizeof(float));
  float *out = (float *)malloc(n * sizeof(float));
  float *expected = (float *)malloc(n * sizeof(float));
  uint32_t *hits = (uint32_t *)malloc(n * sizeof(uint32_t));
  uint32_t i;
  CHECK(x && y && out && expected && hits);
  for (i = 0; i < n; ++i) {
    x[i] = (float)(i % 97) * 0.5f + (float)seed;
    y[i] = (float)(i % 13) - 6.0f;
  }
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
  for (i = 0; i < n; ++i) {
    if (out[i] != expected[i] || hits[i] != 2) {
      fprintf(stderr, "element %u: out %g expected %g, hits %u expected 2\n", i,
              out[i], expected[i], hits[i]);
      exit(1);
    }
  }
  free(x);
  free(y);
  free(out);
  free(expected);
  free(hits);
}

static dlc_session_t *make_session(dlc_model_t *model, uint32_t threads,
                                   int profiling) {
  dlc_session_options_t options;
  dlc_session_t *session = NULL;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.thread_count = threads;
  options.enable_profiling = (uint32_t)profiling;
  CHECK(dlc_session_create(model, &options, &session) == DLC_OK);
  return session;
}

/*===--- tests -----------------------------------------------------------===*/

static void test_status_names(void) {
  CHECK(strcmp(dlc_status_name(DLC_OK), "DLC_OK") == 0);
  CHECK(strcmp(dlc_status_name(DLC_ERROR_INVALID_ARTIFACT),
               "DLC_ERROR_INVALID_ARTIFACT") == 0);
  CHECK(strcmp(dlc_status_name(DLC_ERROR_NOT_FOUND), "DLC_ERROR_NOT_FOUND") ==
        0);
  CHECK(strcmp(dlc_status_name((dlc_status_t)99), "DLC_ERROR_UNKNOWN") == 0);
}

static void test_context(void) {
  dlc_context_options_t options;
  dlc_context_t *context = NULL;
  counting_allocator_t counting;

  CHECK_OK(dlc_context_create(NULL, &context), "");
  CHECK(strcmp(dlc_context_message(context), "") == 0);
  CHECK_OK(dlc_context_probe(context, DLCX_TARGET_CPU),
           dlc_context_message(context));
  /* No driver for it: the GPU targets may have one in this build. */
  CHECK_STATUS(dlc_context_probe(context, (dlcx_target_t)9),
               DLC_ERROR_UNAVAILABLE, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "target unknown (9)");
  CHECK_STATUS(dlc_context_register_driver(context, NULL),
               DLC_ERROR_INVALID_ARGUMENT, dlc_context_message(context));
  dlc_context_destroy(context);
  dlc_context_destroy(NULL);

  memset(&options, 0, sizeof(options));
  CHECK_STATUS(dlc_context_create(&options, &context),
               DLC_ERROR_INVALID_ARGUMENT, "struct_size 0");
  options.struct_size = sizeof(options) + 8;
  CHECK_STATUS(dlc_context_create(&options, &context),
               DLC_ERROR_INVALID_ARGUMENT, "struct_size too big");
  /* An application built against an older, shorter struct still works. */
  options.struct_size = sizeof(uint32_t);
  CHECK_OK(dlc_context_create(&options, &context), "short struct");
  dlc_context_destroy(context);

  counting_init(&counting, -1);
  options.struct_size = sizeof(options);
  options.allocator = counting.base;
  CHECK_OK(dlc_context_create(&options, &context), "");
  CHECK(counting.live > 0);
  dlc_context_destroy(context);
  CHECK(counting.live == 0);
}

static void test_load_and_describe(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_tensor_info_t info;
  uint8_t *data;
  size_t size;
  uint32_t index;
  char path[] = "/tmp/dlc-test-XXXXXX";
  int fd;

  CHECK_OK(dlc_context_create(NULL, &context), "");
  build_chain(60, 1, 1, &data, &size);

  fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  CHECK(dlc_ab_write_file(path, data, size));
  CHECK_OK(dlc_model_load_file(context, path, NULL, &model),
           dlc_context_message(context));
  unlink(path);

  CHECK(dlc_model_input_count(model) == 2);
  CHECK(dlc_model_output_count(model) == 2);
  CHECK(dlc_model_kernel_count(model) == 5);
  CHECK(dlc_model_launch_count(model) == 6);
  CHECK(dlc_model_target(model) == DLCX_TARGET_CPU);
  CHECK(strcmp(dlc_model_driver_name(model), "cpu") == 0);
  CHECK(dlc_model_arena_size(model) >= 6 * 240);
  CHECK_OK(dlc_model_input_info(model, 1, &info), "");
  CHECK(strcmp(info.name, "y") == 0 && info.dtype == DLCX_DTYPE_F32);
  CHECK(info.rank == 1 && info.dims[0] == 60 && info.size_bytes == 240);
  CHECK(info.scale == 0.0f);
  CHECK_OK(dlc_model_output_info(model, 1, &info), "");
  CHECK(strcmp(info.name, "hits") == 0 && info.dtype == DLCX_DTYPE_U32);
  CHECK_STATUS(dlc_model_input_info(model, 2, &info),
               DLC_ERROR_INVALID_ARGUMENT, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "input index 2");
  CHECK_OK(dlc_model_find_output(model, "hits", &index), "");
  CHECK(index == 1);
  CHECK_OK(dlc_model_find_input(model, "x", &index), "");
  CHECK(index == 0);
  CHECK_STATUS(dlc_model_find_input(model, "nope", &index), DLC_ERROR_NOT_FOUND,
               "");
  CHECK_CONTAINS(dlc_context_message(context), "nope");
  dlc_model_destroy(model);

  /* In place, from memory. */
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  {
    dlc_session_t *session = make_session(model, 1, 0);
    run_and_check_chain(session, 60, 1);
    dlc_session_destroy(session);
  }
  dlc_model_destroy(model);

  CHECK_STATUS(dlc_model_load_memory(context, data + 1, size - 1, NULL, &model),
               DLC_ERROR_INVALID_ARGUMENT, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "aligned");
  CHECK_STATUS(
      dlc_model_load_file(context, "/nonexistent/model.dlcx", NULL, &model),
      DLC_ERROR_IO, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "/nonexistent/model.dlcx");
  CHECK(model == NULL);

  dlc_ab_free(data);
  dlc_context_destroy(context);
}

/* Runs the chain (with its reverse launch as one workgroup when
 * `serial_reverse`) on every grid with every thread count. */
static void check_threads_split(int serial_reverse) {
  static const uint32_t thread_counts[] = {1, 2, 3, 4, 7, 0};
  static const uint32_t grids[][3] = {{10, 10, 10}, {1000, 1, 1}, {1, 1, 1},
                                      {3, 1, 1},    {1, 5, 3},    {997, 1, 1}};
  dlc_context_t *context = NULL;
  size_t g, t;
  CHECK_OK(dlc_context_create(NULL, &context), "");
  for (g = 0; g < sizeof(grids) / sizeof(grids[0]); ++g) {
    uint32_t n = grids[g][0] * grids[g][1] * grids[g][2];
    dlc_model_t *model = NULL;
    uint8_t *data;
    size_t size;
    build_chain_with(grids[g][0], grids[g][1], grids[g][2], serial_reverse,
                     &data, &size);
    CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
             dlc_context_message(context));
    for (t = 0; t < sizeof(thread_counts) / sizeof(thread_counts[0]); ++t) {
      dlc_session_t *session = make_session(model, thread_counts[t], 0);
      uint32_t run;
      for (run = 0; run < 3; ++run)
        run_and_check_chain(session, n, run);
      dlc_session_destroy(session);
    }
    dlc_model_destroy(model);
    dlc_ab_free(data);
  }
  dlc_context_destroy(context);
}

static void test_threads_split(void) {
  check_threads_split(0);
  /* A launch of one workgroup between launches of many: the calling thread
   * runs it alone while the others go on to the next launch, which must
   * still see its result. */
  check_threads_split(1);
}

static void test_errors_on_io(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session;
  const dlc_kernel_timing_t *timings;
  uint32_t count;
  float buffer[60];
  uint8_t *data;
  size_t size;

  CHECK_OK(dlc_context_create(NULL, &context), "");
  build_chain(60, 1, 1, &data, &size);
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  session = make_session(model, 2, 0);
  CHECK_STATUS(dlc_session_set_input(session, 0, buffer, 100),
               DLC_ERROR_INVALID_ARGUMENT, dlc_session_message(session));
  CHECK_CONTAINS(dlc_session_message(session), "('x') is 240 bytes, got 100");
  CHECK_STATUS(dlc_session_set_input(session, 2, buffer, sizeof(buffer)),
               DLC_ERROR_INVALID_ARGUMENT, dlc_session_message(session));
  CHECK_CONTAINS(dlc_session_message(session), "out of range");
  CHECK_STATUS(dlc_session_get_output(session, 0, NULL, sizeof(buffer)),
               DLC_ERROR_INVALID_ARGUMENT, dlc_session_message(session));
  CHECK_STATUS(dlc_session_timings(session, &timings, &count),
               DLC_ERROR_INVALID_ARGUMENT, dlc_session_message(session));
  CHECK_CONTAINS(dlc_session_message(session), "profiling");
  dlc_session_destroy(session);

  {
    dlc_session_options_t options;
    memset(&options, 0, sizeof(options));
    options.struct_size = 1000;
    CHECK_STATUS(dlc_session_create(model, &options, &session),
                 DLC_ERROR_INVALID_ARGUMENT, dlc_context_message(context));
    CHECK_CONTAINS(dlc_context_message(context), "struct_size");
  }
  dlc_model_destroy(model);
  dlc_ab_free(data);
  dlc_context_destroy(context);
}

/* An input flagged INPUT_REUSED (a later buffer takes its bytes) must be set
 * again before each run: running on what a run left there is refused by
 * name, so a wrong answer becomes an error. The first run may use the
 * arena's zeros; inputs without the flag keep what was set. */
static void test_reused_input(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session;
  float x[60];
  uint8_t *data;
  size_t size;

  memset(x, 0, sizeof(x));
  CHECK_OK(dlc_context_create(NULL, &context), "");
  build_chain(60, 1, 1, &data, &size);
  {
    dlcx_section_t *s = dlc_ab_section(data, DLCX_SECTION_TENSORS);
    ((dlcx_tensor_t *)(data + s->offset))[0].flags = DLCX_TENSOR_INPUT_REUSED;
    dlc_ab_reseal(data, size);
  }
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  session = make_session(model, 1, 0);
  CHECK_OK(dlc_session_run(session), dlc_session_message(session));
  run_and_check_chain(session, 60, 5);
  CHECK_STATUS(dlc_session_run(session), DLC_ERROR_INVALID_ARGUMENT,
               dlc_session_message(session));
  CHECK_CONTAINS(dlc_session_message(session),
                 "input 0 ('x') was not set since the last run");
  /* 'y' (input 1) has no flag and keeps its values. */
  CHECK_OK(dlc_session_set_input(session, 0, x, sizeof(x)),
           dlc_session_message(session));
  CHECK_OK(dlc_session_run(session), dlc_session_message(session));
  dlc_session_destroy(session);
  dlc_model_destroy(model);
  dlc_ab_free(data);
  dlc_context_destroy(context);
}

/* Scratch beyond the session's cap (64 MiB per thread unless raised) fails
 * session creation with a message, instead of allocating gigabytes per
 * thread for a corrupt cpu_scratch_size. */
static void test_scratch_limit(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session = NULL;
  dlc_session_options_t options;
  uint8_t *data;
  size_t size;

  CHECK_OK(dlc_context_create(NULL, &context), "");
  build_chain(60, 1, 1, &data, &size);
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.max_cpu_scratch_size = DLC_TEST_SCRATCH_SIZE - 1;
  CHECK_STATUS(dlc_session_create(model, &options, &session),
               DLC_ERROR_UNSUPPORTED, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context),
                 "need 256 bytes of scratch per thread, more than the "
                 "session allows (255;");
  CHECK(session == NULL);
  options.max_cpu_scratch_size = DLC_TEST_SCRATCH_SIZE;
  CHECK_OK(dlc_session_create(model, &options, &session),
           dlc_context_message(context));
  dlc_session_destroy(session);
  dlc_model_destroy(model);

  /* 4 GiB per thread, checksum recomputed: the default cap refuses it. */
  {
    dlcx_section_t *s = dlc_ab_section(data, DLCX_SECTION_MODEL);
    ((dlcx_model_t *)(data + s->offset))->cpu_scratch_size = 0xffffffffu;
    dlc_ab_reseal(data, size);
  }
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  CHECK_STATUS(dlc_session_create(model, NULL, &session), DLC_ERROR_UNSUPPORTED,
               dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "need 4294967295 bytes");
  dlc_model_destroy(model);
  dlc_ab_free(data);
  dlc_context_destroy(context);
}

static void test_profiling(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  const dlc_kernel_timing_t *timings;
  uint32_t count, i, threads;
  uint8_t *data;
  size_t size;

  CHECK_OK(dlc_context_create(NULL, &context), "");
  build_chain(10, 10, 10, &data, &size);
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  for (threads = 1; threads <= 3; threads += 2) {
    dlc_session_t *session = make_session(model, threads, 1);
    CHECK_OK(dlc_session_timings(session, &timings, &count), "");
    CHECK(count == 0);
    run_and_check_chain(session, 1000, 0);
    CHECK_OK(dlc_session_timings(session, &timings, &count), "");
    CHECK(count == 6);
    CHECK(strcmp(timings[0].kernel_name, "dlc_test_add") == 0);
    CHECK(strcmp(timings[5].kernel_name, "dlc_test_count") == 0);
    for (i = 1; i < count; ++i)
      CHECK(timings[i].start_ns >=
            timings[i - 1].start_ns + timings[i - 1].duration_ns);
    dlc_session_destroy(session);
  }
  dlc_model_destroy(model);
  dlc_ab_free(data);
  dlc_context_destroy(context);
}

/* Run never allocates; every failed allocation is reported and leaks
 * nothing. */
static void test_allocations(void) {
  counting_allocator_t counting;
  dlc_context_options_t options;
  uint8_t *data;
  size_t size;
  long fail_at, calls_for_success = -1;

  build_chain(10, 10, 10, &data, &size);
  for (fail_at = 0;; ++fail_at) {
    dlc_context_t *context = NULL;
    dlc_model_t *model = NULL;
    dlc_session_t *session = NULL;
    dlc_status_t status;
    counting_init(&counting, fail_at);
    memset(&options, 0, sizeof(options));
    options.struct_size = sizeof(options);
    options.allocator = counting.base;
    status = dlc_context_create(&options, &context);
    if (status == DLC_OK)
      status = dlc_model_load_memory(context, data, size, NULL, &model);
    if (status == DLC_OK) {
      dlc_session_options_t session_options;
      memset(&session_options, 0, sizeof(session_options));
      session_options.struct_size = sizeof(session_options);
      session_options.thread_count = 3;
      session_options.enable_profiling = 1;
      status = dlc_session_create(model, &session_options, &session);
    }
    if (status == DLC_OK) {
      long before = counting.calls;
      run_and_check_chain(session, 1000, 0);
      run_and_check_chain(session, 1000, 1);
      CHECK(counting.calls == before);
      calls_for_success = counting.calls;
    } else {
      CHECK(status == DLC_ERROR_OUT_OF_MEMORY);
    }
    dlc_session_destroy(session);
    dlc_model_destroy(model);
    dlc_context_destroy(context);
    CHECK(counting.live == 0);
    if (status == DLC_OK)
      break;
  }
  /* Every allocation of context, model and session failed once. */
  CHECK(fail_at > 5 && calls_for_success == fail_at);
  dlc_ab_free(data);
}

typedef struct concurrent_job_t {
  dlc_session_t *session;
  uint32_t seed;
} concurrent_job_t;

static void *concurrent_main(void *arg) {
  concurrent_job_t *job = (concurrent_job_t *)arg;
  uint32_t run;
  for (run = 0; run < 50; ++run)
    run_and_check_chain(job->session, 1000, job->seed + run);
  return NULL;
}

/* Sessions of one model run concurrently, each with its own pool of 1, 2
 * and 3 threads; each checks every output against the chain's values (what
 * one session alone computes). The ThreadSanitizer build of scripts/test.sh
 * runs this too. */
static void test_concurrent_sessions(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  concurrent_job_t jobs[3];
  pthread_t threads[3];
  uint8_t *data;
  size_t size;
  int i;

  CHECK_OK(dlc_context_create(NULL, &context), "");
  build_chain_with(10, 100, 1, 1, &data, &size);
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  for (i = 0; i < 3; ++i) {
    jobs[i].session = make_session(model, (uint32_t)(i + 1), i);
    jobs[i].seed = (uint32_t)i * 1000u;
    CHECK(pthread_create(&threads[i], NULL, concurrent_main, &jobs[i]) == 0);
  }
  for (i = 0; i < 3; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    dlc_session_destroy(jobs[i].session);
  }
  dlc_model_destroy(model);
  dlc_ab_free(data);
  dlc_context_destroy(context);
}

/* Loads the 10x10x10 chain model from `data` into `context`, runs it on two
 * threads and checks its outputs. */
static void load_and_check_chain(dlc_context_t *context, const uint8_t *data,
                                 size_t size) {
  dlc_model_t *model = NULL;
  dlc_session_t *session;
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  session = make_session(model, 2, 0);
  run_and_check_chain(session, 1000, 5);
  dlc_session_destroy(session);
  dlc_model_destroy(model);
}

/* The test kernels, linked into this program, by name. */
static const dlc_cpu_symbol_t g_symbols[] = {
    {"dlc_test_add", dlc_test_add},
    {"dlc_test_reverse", dlc_test_reverse},
    {"dlc_test_scale", dlc_test_scale},
    {"dlc_test_zero", dlc_test_zero},
    {"dlc_test_count", dlc_test_count}};

static void test_static_driver(void) {
  dlc_context_t *context = NULL;
  dlc_driver_t *driver = NULL;
  dlc_model_t *model = NULL;
  uint8_t *data;
  size_t size;

  CHECK_OK(dlc_cpu_driver_create_static(NULL, g_symbols, 5, &driver), "");
  CHECK_OK(dlc_context_create(NULL, &context), "");
  CHECK_OK(dlc_context_register_driver(context, driver),
           dlc_context_message(context));
  build_chain(10, 10, 10, &data, &size);
  load_and_check_chain(context, data, size);
  dlc_context_destroy(context);
  dlc_driver_destroy(driver);

  /* A table without dlc_test_scale: the message names it. */
  CHECK_OK(dlc_cpu_driver_create_static(NULL, g_symbols, 2, &driver), "");
  CHECK_OK(dlc_context_create(NULL, &context), "");
  CHECK_OK(dlc_context_register_driver(context, driver), "");
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model),
               DLC_ERROR_INVALID_ARGUMENT, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "'dlc_test_scale'");
  dlc_context_destroy(context);
  dlc_driver_destroy(driver);
  dlc_ab_free(data);
}

/* The linked mode: kernels resolved by name, and the artifact checked
 * against the fingerprint of the object they came from. */
static void test_linked_driver(void) {
  const uint64_t fingerprint = 0x0123456789abcdefull;
  dlc_test_chain_t chain;
  dlc_context_t *context = NULL;
  dlc_driver_t *driver = NULL;
  dlc_model_t *model = NULL;
  uint8_t *data;
  size_t size;

  CHECK_OK(
      dlc_cpu_driver_create_linked(NULL, g_symbols, 5, fingerprint, &driver),
      "");
  CHECK_OK(dlc_context_create(NULL, &context), "");
  CHECK_OK(dlc_context_register_driver(context, driver),
           dlc_context_message(context));
  memset(&chain, 0, sizeof(chain));
  chain.code = g_code;
  chain.code_size = g_code_size;
  chain.grid[0] = 10, chain.grid[1] = 10, chain.grid[2] = 10;
  chain.scale = 3.0f;

  /* The artifact of the linked object: loads and runs. */
  chain.has_code_id = 1;
  chain.code_id = fingerprint;
  dlc_test_build_chain(&chain, &data, &size);
  load_and_check_chain(context, data, size);
  dlc_ab_free(data);

  /* Another object's artifact, although every kernel name resolves. */
  chain.code_id = fingerprint + 1;
  dlc_test_build_chain(&chain, &data, &size);
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model),
               DLC_ERROR_INVALID_ARGUMENT, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "are not this artifact's");
  CHECK_CONTAINS(dlc_context_message(context), "0x0123456789abcdf0");
  dlc_ab_free(data);

  /* No fingerprint to compare: refused. */
  chain.has_code_id = 0;
  dlc_test_build_chain(&chain, &data, &size);
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model),
               DLC_ERROR_INVALID_ARGUMENT, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "no CPU code fingerprint");
  dlc_ab_free(data);
  dlc_context_destroy(context);
  dlc_driver_destroy(driver);

  /* The dlopen driver loads it as any artifact. */
  CHECK_OK(dlc_context_create(NULL, &context), "");
  chain.has_code_id = 1;
  dlc_test_build_chain(&chain, &data, &size);
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  dlc_model_destroy(model);
  dlc_ab_free(data);

  /* An artifact without code (a target without a loader, format 1.4):
   * the dlopen driver has nothing to load and says what to do ... */
  chain.linked = 1;
  chain.code_id = fingerprint;
  dlc_test_build_chain(&chain, &data, &size);
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model),
               DLC_ERROR_UNSUPPORTED, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context),
                 "the artifact carries no code (its target has no loader)");
  dlc_context_destroy(context);
  /* ... and the linked driver runs it with the kernels of this program. */
  CHECK_OK(
      dlc_cpu_driver_create_linked(NULL, g_symbols, 5, fingerprint, &driver),
      "");
  CHECK_OK(dlc_context_create(NULL, &context), "");
  CHECK_OK(dlc_context_register_driver(context, driver),
           dlc_context_message(context));
  load_and_check_chain(context, data, size);
  dlc_ab_free(data);
  dlc_context_destroy(context);
  dlc_driver_destroy(driver);
}

static void test_driver_errors(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_test_chain_t chain;
  uint8_t *data;
  size_t size;

  CHECK_OK(dlc_context_create(NULL, &context), "");
  memset(&chain, 0, sizeof(chain));
  chain.code = g_code;
  chain.code_size = g_code_size;

  chain.scale_kernel = "dlc_test_missing";
  dlc_test_build_chain(&chain, &data, &size);
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model),
               DLC_ERROR_INVALID_ARTIFACT, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "'dlc_test_missing'");
  dlc_ab_free(data);
  chain.scale_kernel = NULL;

  chain.features = dlc_test_host_isa() == DLCX_FEATURE_CPU_AARCH64
                       ? DLCX_FEATURE_CPU_RISCV64
                       : DLCX_FEATURE_CPU_AARCH64;
  dlc_test_build_chain(&chain, &data, &size);
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model),
               DLC_ERROR_UNSUPPORTED, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "this host is");
  dlc_ab_free(data);

  chain.features = dlc_test_host_isa() | DLCX_FEATURE_VK_INT64;
  dlc_test_build_chain(&chain, &data, &size);
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model),
               DLC_ERROR_UNSUPPORTED, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "0x1000");
  dlc_ab_free(data);
  chain.features = 0;

  /* A truncated shared object fails the ELF check, not inside dlopen. */
  chain.code_size = g_code_size / 2;
  dlc_test_build_chain(&chain, &data, &size);
  CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model),
               DLC_ERROR_INVALID_ARTIFACT, dlc_context_message(context));
  CHECK_CONTAINS(dlc_context_message(context), "kernel 0");
  dlc_ab_free(data);
  chain.code_size = g_code_size;

  /* Garbage code. */
  {
    uint8_t junk[256];
    memset(junk, 0x5a, sizeof(junk));
    chain.code = junk;
    chain.code_size = sizeof(junk);
    dlc_test_build_chain(&chain, &data, &size);
    CHECK_STATUS(dlc_model_load_memory(context, data, size, NULL, &model),
                 DLC_ERROR_INVALID_ARTIFACT, dlc_context_message(context));
    CHECK_CONTAINS(dlc_context_message(context), "not an ELF object");
    dlc_ab_free(data);
    chain.code = g_code;
    chain.code_size = g_code_size;
  }

  /* The CPU is device 0 and the only one. */
  {
    dlc_model_options_t options;
    dlc_test_build_chain(&chain, &data, &size);
    memset(&options, 0, sizeof(options));
    options.struct_size = sizeof(options);
    options.device_index = 1;
    CHECK_STATUS(dlc_model_load_memory(context, data, size, &options, &model),
                 DLC_ERROR_UNAVAILABLE, dlc_context_message(context));
    CHECK_CONTAINS(dlc_context_message(context), "device_index 1");
    dlc_ab_free(data);
  }

  /* A target this host cannot run: without a CUDA driver in the build, or
   * with one that finds no libcuda. */
  {
    dlc_ab_t *b = dlc_ab_create(DLCX_TARGET_CUDA, 0);
    dlc_ab_target_sm(b, 87);
    dlc_ab_finish(b, &data, &size);
    dlc_ab_destroy(b);
    dlc_cuda_driver_options_t cuda;
    dlc_context_options_t options;
    dlc_context_t *cuda_context = NULL;
    memset(&cuda, 0, sizeof(cuda));
    cuda.struct_size = sizeof(cuda);
    cuda.library = "/nonexistent/libcuda.so.1";
    memset(&options, 0, sizeof(options));
    options.struct_size = sizeof(options);
    options.cuda = &cuda;
    CHECK_OK(dlc_context_create(&options, &cuda_context), "");
    CHECK_STATUS(dlc_model_load_memory(cuda_context, data, size, NULL, &model),
                 DLC_ERROR_UNAVAILABLE, dlc_context_message(cuda_context));
    CHECK_CONTAINS(dlc_context_message(cuda_context), "cuda");
    dlc_context_destroy(cuda_context);
    dlc_ab_free(data);
  }
  dlc_context_destroy(context);
}

/* Quantization parameters reach dlc_tensor_info_t; a model without
 * kernels needs no code. */
static void test_quantized_info(void) {
  static const float scales[2] = {0.5f, 0.25f};
  static const int32_t zero_points[2] = {1, 2};
  static const int8_t weights[2] = {3, 4};
  int64_t dims[2] = {2, 3};
  int64_t two[1] = {2};
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session;
  dlc_tensor_info_t info;
  int8_t in[6] = {1, 2, 3, 4, 5, 6}, out[6];
  dlc_ab_t *b = dlc_ab_create(DLCX_TARGET_CPU, dlc_test_host_isa());
  uint32_t t = dlc_ab_arena_tensor(b, "q", DLCX_DTYPE_I8, 2, dims);
  uint32_t w = dlc_ab_constant_tensor(b, "w", DLCX_DTYPE_I8, 1, two, weights);
  uint8_t *data;
  size_t size;
  dlc_ab_quantize(b, t, 0.5f, -3, -1, NULL, NULL);
  dlc_ab_quantize(b, w, 1.0f, 0, 0, scales, zero_points);
  dlc_ab_input(b, t);
  dlc_ab_output(b, t);
  dlc_ab_finish(b, &data, &size);
  dlc_ab_destroy(b);

  CHECK_OK(dlc_context_create(NULL, &context), "");
  CHECK_OK(dlc_model_load_memory(context, data, size, NULL, &model),
           dlc_context_message(context));
  CHECK_OK(dlc_model_input_info(model, 0, &info), "");
  CHECK(info.scale == 0.5f && info.zero_point == -3 && info.size_bytes == 6);
  session = make_session(model, 0, 1);
  CHECK_OK(dlc_session_set_input(session, 0, in, sizeof(in)), "");
  CHECK_OK(dlc_session_run(session), "");
  CHECK_OK(dlc_session_get_output(session, 0, out, sizeof(out)), "");
  CHECK(memcmp(in, out, sizeof(in)) == 0);
  dlc_session_destroy(session);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  dlc_ab_free(data);
}

/* Many models at once: each keeps its own copy of the code loaded. */
static void test_many_models(void) {
  dlc_context_t *context = NULL;
  dlc_model_t *models[8];
  uint8_t *data[8];
  size_t size;
  int i;
  CHECK_OK(dlc_context_create(NULL, &context), "");
  for (i = 0; i < 8; ++i) {
    build_chain((uint32_t)(i + 1), 1, 1, &data[i], &size);
    CHECK_OK(dlc_model_load_memory(context, data[i], size, NULL, &models[i]),
             dlc_context_message(context));
  }
  for (i = 0; i < 8; ++i) {
    dlc_session_t *session = make_session(models[i], 1, 0);
    run_and_check_chain(session, (uint32_t)(i + 1), 0);
    dlc_session_destroy(session);
    dlc_model_destroy(models[i]);
    dlc_ab_free(data[i]);
  }
  dlc_context_destroy(context);
}

int main(void) {
  g_code = dlc_test_read_kernels(&g_code_size);
  CHECK(g_code);
  test_status_names();
  test_context();
  test_load_and_describe();
  test_threads_split();
  test_errors_on_io();
  test_reused_input();
  test_scratch_limit();
  test_profiling();
  test_allocations();
  test_concurrent_sessions();
  test_static_driver();
  test_linked_driver();
  test_driver_errors();
  test_quantized_info();
  test_many_models();
  free(g_code);
  printf("test_runtime: all passed\n");
  return 0;
}
