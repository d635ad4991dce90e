/*===- cpu_driver.c - run native kernels on the host CPU ------------------===*
 *
 * Model prepare resolves every kernel to a function pointer; session create
 * allocates the arena and resolves every binding to an address (arena base
 * plus offset, or the weight in the mapped artifact, used in place). A run
 * is then only calls: each launch's workgroups [0, total) are cut into one
 * contiguous range per thread; a thread done with its own range takes
 * workgroups left in the others', and moves on to the next launch once all
 * of the launch's workgroups are done.
 *
 * How many workgroups a kernel has is the compiler's decision from the
 * kernel's work (one unless each gets at least a minimum of it), and a
 * kernel of one workgroup gains nothing from a second thread: the calling
 * thread runs it alone, and the others go on to the next launch of several
 * workgroups, which starts once the calling thread gets there (after the
 * kernels before it). A model whose launches all have one workgroup gets no
 * threads at all: a run is then only calls on the caller's thread. A run
 * never waits for a worker that has not started it (cpu_pool.c), so threads
 * cost a small model at most the wake-up call, not a worker's wake-up.
 *===----------------------------------------------------------------------===*/

#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L
#define DLC_HAVE_CLOCK_GETTIME 1
#else
#define DLC_HAVE_CLOCK_GETTIME 0
#endif

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../format_macros.h"
#include "cpu_loader.h"
#include "cpu_pool.h"
#include "dlc/cpu_driver.h"

#define DLC_CPU_ISA_MASK                                                       \
  ((uint64_t)(DLCX_FEATURE_CPU_X86_64 | DLCX_FEATURE_CPU_AARCH64 |             \
              DLCX_FEATURE_CPU_ARMV7 | DLCX_FEATURE_CPU_RISCV64 |              \
              DLCX_FEATURE_CPU_ARMV7EM))

typedef struct dlc_cpu_driver_state_t {
  dlc_driver_t driver; /* first: the vtable's address is the state's */
  dlc_allocator_t allocator;
  const dlc_cpu_symbol_t *symbols; /* static driver only */
  size_t symbol_count;
  int is_static;
  /* Linked mode: the kernels' object fingerprint, checked at load. */
  int check_code_id;
  uint64_t code_id;
} dlc_cpu_driver_state_t;

/* One loaded code blob; kernels usually all share one. */
typedef struct dlc_cpu_blob_t {
  uint64_t offset;
  uint64_t size;
  dlc_cpu_library_t library;
} dlc_cpu_blob_t;

typedef struct dlc_cpu_model_t {
  dlc_allocator_t allocator;
  const dlc_artifact_t *artifact;
  dlcx_cpu_kernel_fn *kernels; /* per artifact kernel */
  dlc_cpu_blob_t *blobs;
  uint32_t blob_count;
} dlc_cpu_model_t;

typedef struct dlc_cpu_launch_t {
  dlcx_cpu_kernel_fn fn;
  void *const *bindings;
  uint32_t total; /* workgroups */
  /* Per run, with a pool, for a launch of several workgroups: how many are
   * done. A thread moves on to the next launch once all are, without a
   * barrier: a thread that has no workgroups in a launch does not have to
   * arrive anywhere. */
  uint32_t done;
  /* Per run, likewise: 1 once the calling thread reached this launch, so
   * that every launch before it is done (those of one workgroup, the
   * calling thread ran itself). */
  uint32_t ready;
} dlc_cpu_launch_t;

/* Per run, with a pool: the workgroups of one launch that thread t has not
 * yet handed out are [begin + next, end) of its own range. Its owner and,
 * once done with their own ranges, the other threads take them one at a
 * time. One cache line each, so that a thread taking its own workgroups
 * touches no line another thread writes until someone steals. */
typedef struct dlc_cpu_cursor_t {
  uint32_t next;
  uint8_t pad[DLCX_ALIGNMENT - sizeof(uint32_t)];
} dlc_cpu_cursor_t;

typedef struct dlc_cpu_session_t {
  dlc_cpu_model_t *model;
  uint8_t *arena;
  void **bindings; /* BINDINGS resolved to addresses */
  dlc_cpu_launch_t *launches;
  uint32_t launch_count;
  dlc_kernel_timing_t *timings; /* NULL unless profiling */
  uint32_t timing_count;        /* 0 until the first run */
  uint64_t run_start_ns;
  dlc_cpu_pool_t *pool;      /* NULL: run on the calling thread */
  dlc_cpu_cursor_t *cursors; /* [launch][thread], with a pool */
  uint32_t thread_count;     /* of the pool */
  uint8_t *scratch;          /* per thread: scratch_stride bytes; or NULL */
  size_t scratch_stride;
} dlc_cpu_session_t;

static uint64_t dlc_cpu_now_ns(void) {
#if DLC_HAVE_CLOCK_GETTIME
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#else
  return (uint64_t)clock() * (1000000000u / CLOCKS_PER_SEC);
#endif
}

static void *dlc_cpu_alloc(const dlc_allocator_t *allocator, uint64_t count,
                           size_t element_size, size_t alignment) {
  /* Zero-length tables still get a distinct pointer. */
  if (count == 0)
    count = 1;
  if (count > (uint64_t)((size_t)-1 / element_size))
    return NULL;
  return allocator->alloc(allocator->self, (size_t)count * element_size,
                          alignment);
}

static dlc_status_t dlc_cpu_probe(const dlc_driver_t *driver,
                                  dlc_message_t *message) {
  const dlc_cpu_driver_state_t *state =
      (const dlc_cpu_driver_state_t *)driver->self;
  if (!dlc_cpu_host_isa())
    return dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                           "this runtime was built for a CPU that artifacts "
                           "cannot target");
  if (!state->is_static && !dlc_cpu_can_load_code())
    return dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                           "this runtime was built without a dynamic loader; "
                           "use dlc_cpu_driver_create_static");
  return DLC_OK;
}

static void dlc_cpu_model_release(void *model_ptr) {
  dlc_cpu_model_t *model = (dlc_cpu_model_t *)model_ptr;
  uint32_t i;
  if (!model)
    return;
  for (i = 0; i < model->blob_count; ++i)
    dlc_cpu_library_close(&model->blobs[i].library);
  model->allocator.free(model->allocator.self, model->blobs);
  model->allocator.free(model->allocator.self, model->kernels);
  model->allocator.free(model->allocator.self, model);
}

/* Loads the code blob of kernel `index` unless an earlier kernel did, and
 * resolves the kernel in it. */
static dlc_status_t dlc_cpu_resolve_loaded(dlc_cpu_model_t *model,
                                           uint32_t index,
                                           dlc_message_t *message) {
  const dlc_artifact_t *a = model->artifact;
  const dlcx_kernel_t *k = &a->kernels[index];
  const char *name = a->strings + k->name;
  dlc_cpu_blob_t *blob = NULL;
  uint32_t i;

  if (k->code_format == DLCX_CODE_LINKED)
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "kernel %" PRIu32 " ('%s'): the artifact carries "
                           "no code (its target has no loader); link the "
                           "object and kernel table dlc-compile --emit=obj "
                           "writes, and register dlc_cpu_driver_create_linked",
                           index, name);
  if (k->code_format != DLCX_CODE_ELF_SHARED)
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "kernel %" PRIu32 " ('%s'): code_format %" PRIu32
                           " is not a CPU shared object",
                           index, name, k->code_format);
  for (i = 0; i < model->blob_count && !blob; ++i)
    if (model->blobs[i].offset == k->code_offset &&
        model->blobs[i].size == k->code_size)
      blob = &model->blobs[i];
  if (!blob) {
    char what[64];
    dlc_status_t status;
    blob = &model->blobs[model->blob_count];
    blob->offset = k->code_offset;
    blob->size = k->code_size;
    snprintf(what, sizeof(what), "the code of kernel %" PRIu32, index);
    /* No CODE section: an empty blob, which the ELF check rejects. */
    status = dlc_cpu_library_open(a->code ? a->code + k->code_offset : a->code,
                                  k->code_size, what, message, &blob->library);
    if (status != DLC_OK)
      return status;
    ++model->blob_count;
  }
  model->kernels[index] = dlc_cpu_library_symbol(&blob->library, name);
  if (!model->kernels[index])
    return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                           "kernel %" PRIu32 ": symbol '%s' is not defined in "
                           "its code object",
                           index, name);
  return DLC_OK;
}

static dlc_status_t dlc_cpu_resolve_static(const dlc_cpu_driver_state_t *state,
                                           dlc_cpu_model_t *model,
                                           uint32_t index,
                                           dlc_message_t *message) {
  const dlc_artifact_t *a = model->artifact;
  const char *name = a->strings + a->kernels[index].name;
  size_t i;
  for (i = 0; i < state->symbol_count; ++i)
    if (strcmp(state->symbols[i].name, name) == 0) {
      model->kernels[index] = state->symbols[i].fn;
      return DLC_OK;
    }
  return dlc_message_set(message, DLC_ERROR_INVALID_ARGUMENT,
                         "kernel %" PRIu32 ": '%s' is not in the "
                         "application's symbol table (%lu symbols)",
                         index, name, (unsigned long)state->symbol_count);
}

/* Refuses code that uses an instruction-set extension this CPU lacks: its
 * first kernel would die on an illegal instruction. */
static dlc_status_t dlc_cpu_check_extensions(uint64_t needed,
                                             dlc_message_t *message) {
  uint64_t missing = needed & ~dlc_cpu_host_extensions();
  char names[256];
  size_t used = 0;
  unsigned bit, count = 0;
  if (!missing)
    return DLC_OK;
  names[0] = '\0';
  for (bit = 32; bit < 64; ++bit) {
    const char *name;
    size_t length;
    if (!(missing & DLCX_CPU_EXTENSION_MASK(bit)))
      continue;
    name = dlc_cpu_extension_name(bit);
    length = strlen(name);
    if (used + length + 3 < sizeof(names)) {
      if (count++)
        names[used++] = ',', names[used++] = ' ';
      memcpy(names + used, name, length + 1);
      used += length;
    }
  }
  return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                         "the artifact's code uses %s, which this CPU does "
                         "not have; compile it for this CPU (--target=cpu) "
                         "or for a CPU model it has (--cpu=<name>)",
                         names);
}

static dlc_status_t dlc_cpu_model_prepare(const dlc_driver_t *driver,
                                          const dlc_allocator_t *allocator,
                                          const dlc_artifact_t *artifact,
                                          const dlc_model_options_t *options,
                                          dlc_message_t *message,
                                          void **out_model) {
  const dlc_cpu_driver_state_t *state =
      (const dlc_cpu_driver_state_t *)driver->self;
  uint64_t features = artifact->header->target_features;
  uint64_t isa = features & DLC_CPU_ISA_MASK;
  dlc_cpu_model_t *model;
  dlc_status_t status = DLC_OK;
  uint32_t i;

  if (options->device_index != 0)
    return dlc_message_set(message, DLC_ERROR_UNAVAILABLE,
                           "device_index %" PRIu32
                           ": the CPU driver has one device, index 0",
                           options->device_index);
  if (isa != dlc_cpu_host_isa())
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "the artifact's code is for %s (target_features "
                           "0x%" PRIx64 "), this host is %s",
                           dlc_cpu_isa_name(isa), features,
                           dlc_cpu_isa_name(dlc_cpu_host_isa()));
  if (features & ~(DLC_CPU_ISA_MASK | DLCX_CPU_EXTENSIONS_ALL))
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "the artifact needs target features 0x%" PRIx64
                           " that the CPU driver does not know",
                           features &
                               ~(DLC_CPU_ISA_MASK | DLCX_CPU_EXTENSIONS_ALL));
  status =
      dlc_cpu_check_extensions(features & DLCX_CPU_EXTENSIONS_ALL, message);
  if (status != DLC_OK)
    return status;

  if (state->check_code_id && !artifact->has_cpu_code_id)
    return dlc_message_set(message, DLC_ERROR_INVALID_ARGUMENT,
                           "the artifact has no CPU code fingerprint (written "
                           "since format 1.3), so nothing shows that the "
                           "kernels linked into this program are its own; "
                           "recompile it with this dlc-compile");
  if (state->check_code_id && artifact->cpu_code_id != state->code_id)
    return dlc_message_set(
        message, DLC_ERROR_INVALID_ARGUMENT,
        "the kernels linked into this program (object fingerprint "
        "0x%016" PRIx64 ") are not this artifact's (0x%016" PRIx64
        "): it was compiled from another model, for another target or with "
        "other options; link the object and kernel table that dlc-compile "
        "--emit=obj writes for it",
        state->code_id, artifact->cpu_code_id);
  model =
      (dlc_cpu_model_t *)allocator->alloc(allocator->self, sizeof(*model), 16);
  if (!model)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the CPU model");
  memset(model, 0, sizeof(*model));
  model->allocator = *allocator;
  model->artifact = artifact;
  model->kernels = (dlcx_cpu_kernel_fn *)dlc_cpu_alloc(
      allocator, artifact->kernel_count, sizeof(dlcx_cpu_kernel_fn), 16);
  if (!state->is_static)
    model->blobs = (dlc_cpu_blob_t *)dlc_cpu_alloc(
        allocator, artifact->kernel_count, sizeof(dlc_cpu_blob_t), 16);
  if (!model->kernels || (!state->is_static && !model->blobs)) {
    dlc_cpu_model_release(model);
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate %" PRIu32 " CPU kernels",
                           artifact->kernel_count);
  }
  for (i = 0; i < artifact->kernel_count && status == DLC_OK; ++i)
    status = state->is_static ? dlc_cpu_resolve_static(state, model, i, message)
                              : dlc_cpu_resolve_loaded(model, i, message);
  if (status != DLC_OK) {
    dlc_cpu_model_release(model);
    return status;
  }
  *out_model = model;
  return DLC_OK;
}

static void dlc_cpu_session_destroy(void *session_ptr) {
  dlc_cpu_session_t *session = (dlc_cpu_session_t *)session_ptr;
  const dlc_allocator_t *allocator;
  if (!session)
    return;
  allocator = &session->model->allocator;
#if !defined(DLC_RUNTIME_SINGLE_THREADED)
  dlc_cpu_pool_destroy(session->pool);
#endif
  allocator->free(allocator->self, session->scratch);
  allocator->free(allocator->self, session->cursors);
  allocator->free(allocator->self, session->timings);
  allocator->free(allocator->self, session->launches);
  allocator->free(allocator->self, session->bindings);
  allocator->free(allocator->self, session->arena);
  allocator->free(allocator->self, session);
}

static dlc_status_t dlc_cpu_session_create(void *model_ptr,
                                           const dlc_session_options_t *options,
                                           dlc_message_t *message,
                                           void **out_session) {
  dlc_cpu_model_t *model = (dlc_cpu_model_t *)model_ptr;
  const dlc_allocator_t *allocator = &model->allocator;
  const dlc_artifact_t *a = model->artifact;
  dlc_cpu_session_t *session;
  uint64_t arena_size = a->model->arena_size;
  uint32_t threads = options->thread_count;
  uint32_t i;

  session = (dlc_cpu_session_t *)allocator->alloc(allocator->self,
                                                  sizeof(*session), 16);
  if (!session)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the CPU session");
  memset(session, 0, sizeof(*session));
  session->model = model;
  session->launch_count = a->launch_count;
  /* Zeroed once so that a run never reads indeterminate arena bytes. */
  session->arena =
      (uint8_t *)dlc_cpu_alloc(allocator, arena_size, 1, DLCX_ALIGNMENT);
  session->bindings =
      (void **)dlc_cpu_alloc(allocator, a->binding_count, sizeof(void *), 16);
  session->launches = (dlc_cpu_launch_t *)dlc_cpu_alloc(
      allocator, a->launch_count, sizeof(dlc_cpu_launch_t), 16);
  if (options->enable_profiling)
    session->timings = (dlc_kernel_timing_t *)dlc_cpu_alloc(
        allocator, a->launch_count, sizeof(dlc_kernel_timing_t), 16);
  if (!session->arena || !session->bindings || !session->launches ||
      (options->enable_profiling && !session->timings)) {
    dlc_cpu_session_destroy(session);
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the CPU session (arena %" PRIu64
                           " bytes)",
                           arena_size);
  }
  memset(session->arena, 0, (size_t)arena_size);

  for (i = 0; i < a->binding_count; ++i) {
    const dlcx_tensor_t *t = &a->tensors[a->bindings[i]];
    /* Constants are read in place from the artifact, which is read-only
     * memory when mapped: kernels never write their constant bindings. */
    if (t->storage == DLCX_STORAGE_ARENA)
      session->bindings[i] = session->arena + t->offset;
    else if (a->constants)
      session->bindings[i] = (void *)(uintptr_t)(a->constants + t->offset);
    else /* an empty constant in an artifact without CONSTANTS */
      session->bindings[i] = NULL;
  }
  for (i = 0; i < a->launch_count; ++i) {
    const dlcx_launch_t *l = &a->launches[i];
    session->launches[i].fn = model->kernels[l->kernel];
    session->launches[i].bindings = session->bindings + l->binding_begin;
    session->launches[i].total = l->grid[0] * l->grid[1] * l->grid[2];
    if (session->timings)
      session->timings[i].kernel_name = a->strings + a->kernels[l->kernel].name;
  }

#if !defined(DLC_RUNTIME_SINGLE_THREADED)
  if (threads == 0)
    threads = dlc_cpu_online_count();
  /* Without a launch of several workgroups, threads would only wait. */
  for (i = 0; i < a->launch_count && session->launches[i].total <= 1; ++i)
    ;
  if (i == a->launch_count)
    threads = 1;
  if (threads > 1) {
    dlc_status_t status;
    session->cursors = (dlc_cpu_cursor_t *)dlc_cpu_alloc(
        allocator, (uint64_t)a->launch_count * threads,
        sizeof(dlc_cpu_cursor_t), DLCX_ALIGNMENT);
    if (!session->cursors) {
      dlc_cpu_session_destroy(session);
      return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                             "cannot allocate the CPU session's work queues");
    }
    session->thread_count = threads;
    status = dlc_cpu_pool_create(allocator, threads, message, &session->pool);
    if (status != DLC_OK) {
      dlc_cpu_session_destroy(session);
      return status;
    }
  }
#else
  (void)threads;
#endif
  /* Each thread's own scratch for the kernels' temporaries, in whole
   * cache lines so that no two threads share one. */
  if (a->model->cpu_scratch_size) {
    uint32_t count = session->thread_count ? session->thread_count : 1;
    session->scratch_stride =
        ((size_t)a->model->cpu_scratch_size + DLCX_ALIGNMENT - 1) /
        DLCX_ALIGNMENT * DLCX_ALIGNMENT;
    session->scratch = (uint8_t *)dlc_cpu_alloc(
        allocator, count, session->scratch_stride, DLCX_ALIGNMENT);
    if (!session->scratch) {
      dlc_cpu_session_destroy(session);
      return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                             "cannot allocate the CPU session's scratch "
                             "(%" PRIu32 " threads x %" PRIu32 " bytes)",
                             count, a->model->cpu_scratch_size);
    }
  }
  *out_session = session;
  return DLC_OK;
}

static dlc_status_t dlc_cpu_set_input(void *session_ptr,
                                      const dlcx_tensor_t *tensor,
                                      const void *data,
                                      dlc_message_t *message) {
  dlc_cpu_session_t *session = (dlc_cpu_session_t *)session_ptr;
  (void)message;
  if (tensor->size)
    memcpy(session->arena + tensor->offset, data, (size_t)tensor->size);
  return DLC_OK;
}

static dlc_status_t dlc_cpu_get_output(void *session_ptr,
                                       const dlcx_tensor_t *tensor, void *data,
                                       dlc_message_t *message) {
  dlc_cpu_session_t *session = (dlc_cpu_session_t *)session_ptr;
  (void)message;
  if (tensor->size)
    memcpy(data, session->arena + tensor->offset, (size_t)tensor->size);
  return DLC_OK;
}

#if !defined(DLC_RUNTIME_SINGLE_THREADED)
/* Runs the workgroups still left in thread `owner`'s range of launch `l`
 * (cursor `c`), one at a time, and returns how many this thread ran. */
static uint32_t dlc_cpu_take(const dlc_cpu_launch_t *l, dlc_cpu_cursor_t *c,
                             uint32_t owner, uint32_t thread_count,
                             void *scratch) {
  uint32_t begin = (uint32_t)((uint64_t)l->total * owner / thread_count);
  uint32_t end = (uint32_t)((uint64_t)l->total * (owner + 1) / thread_count);
  uint32_t ran = 0;
  while (__atomic_load_n(&c->next, __ATOMIC_RELAXED) < end - begin) {
    uint32_t w = begin + __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED);
    if (w >= end)
      break;
    l->fn(l->bindings, w, w + 1, scratch);
    ++ran;
  }
  return ran;
}
#endif

/* Runs this thread's share of every launch; a launch starts once the
 * previous one is done. Thread 0 keeps the time. */
static void dlc_cpu_run_job(void *arg, uint32_t thread_index,
                            uint32_t thread_count) {
  dlc_cpu_session_t *session = (dlc_cpu_session_t *)arg;
  dlc_kernel_timing_t *timings = thread_index == 0 ? session->timings : NULL;
  void *scratch = session->scratch ? session->scratch +
                                         session->scratch_stride * thread_index
                                   : NULL;
  uint32_t i;
  for (i = 0; i < session->launch_count; ++i) {
    dlc_cpu_launch_t *l = &session->launches[i];
    uint64_t start = timings ? dlc_cpu_now_ns() : 0;
    if (thread_count == 1 || l->total <= 1) {
      /* One workgroup: the calling thread's alone; the others skip it. */
      if (l->total && thread_index == 0)
        l->fn(l->bindings, 0, l->total, scratch);
    } else {
#if !defined(DLC_RUNTIME_SINGLE_THREADED)
      dlc_cpu_cursor_t *cursors = session->cursors + (size_t)i * thread_count;
      uint32_t ran = 0, k;
      if (thread_index == 0)
        __atomic_store_n(&l->ready, 1, __ATOMIC_RELEASE);
      else
        dlc_cpu_wait_count(&l->ready, 1);
      /* Its own range first, then the others', from the next thread on. */
      for (k = 0; k < thread_count; ++k) {
        uint32_t owner = (thread_index + k) % thread_count;
        ran += dlc_cpu_take(l, &cursors[owner], owner, thread_count, scratch);
      }
      if (ran)
        __atomic_add_fetch(&l->done, ran, __ATOMIC_RELEASE);
      dlc_cpu_wait_count(&l->done, l->total);
#endif
    }
    if (timings) {
      uint64_t now = dlc_cpu_now_ns();
      timings[i].start_ns = start - session->run_start_ns;
      timings[i].duration_ns = now - start;
    }
  }
}

static dlc_status_t dlc_cpu_run(void *session_ptr, dlc_message_t *message) {
  dlc_cpu_session_t *session = (dlc_cpu_session_t *)session_ptr;
  (void)message;
  if (session->timings)
    session->run_start_ns = dlc_cpu_now_ns();
#if !defined(DLC_RUNTIME_SINGLE_THREADED)
  if (session->pool) {
    uint32_t i;
    /* The pool's start publishes these to the workers; the previous run's
     * end waited for all of them. */
    for (i = 0; i < session->launch_count; ++i) {
      session->launches[i].done = 0;
      session->launches[i].ready = 0;
    }
    memset(session->cursors, 0,
           sizeof(dlc_cpu_cursor_t) * session->launch_count *
               session->thread_count);
    dlc_cpu_pool_run(session->pool, dlc_cpu_run_job, session);
  } else
#endif
    dlc_cpu_run_job(session, 0, 1);
  session->timing_count = session->launch_count;
  return DLC_OK;
}

static dlc_status_t dlc_cpu_timings(const void *session_ptr,
                                    const dlc_kernel_timing_t **out_timings,
                                    uint32_t *out_count) {
  const dlc_cpu_session_t *session = (const dlc_cpu_session_t *)session_ptr;
  *out_timings = session->timings;
  *out_count = session->timing_count;
  return DLC_OK;
}

static void dlc_cpu_driver_destroy(dlc_driver_t *driver) {
  dlc_cpu_driver_state_t *state = (dlc_cpu_driver_state_t *)driver->self;
  state->allocator.free(state->allocator.self, state);
}

static dlc_status_t dlc_cpu_driver_new(const dlc_allocator_t *allocator,
                                       const dlc_cpu_symbol_t *symbols,
                                       size_t symbol_count, int is_static,
                                       dlc_driver_t **out_driver) {
  dlc_allocator_t resolved =
      allocator && allocator->alloc ? *allocator : dlc_allocator_system();
  dlc_cpu_driver_state_t *state;
  if (!out_driver || (is_static && !symbols && symbol_count))
    return DLC_ERROR_INVALID_ARGUMENT;
  state = (dlc_cpu_driver_state_t *)resolved.alloc(resolved.self,
                                                   sizeof(*state), 16);
  if (!state)
    return DLC_ERROR_OUT_OF_MEMORY;
  memset(state, 0, sizeof(*state));
  state->allocator = resolved;
  state->symbols = symbols;
  state->symbol_count = symbol_count;
  state->is_static = is_static;
  state->driver.abi_version = DLC_DRIVER_ABI_VERSION;
  state->driver.target = DLCX_TARGET_CPU;
  state->driver.name = "cpu";
  state->driver.self = state;
  state->driver.probe = dlc_cpu_probe;
  state->driver.model_prepare = dlc_cpu_model_prepare;
  state->driver.model_release = dlc_cpu_model_release;
  state->driver.session_create = dlc_cpu_session_create;
  state->driver.session_destroy = dlc_cpu_session_destroy;
  state->driver.set_input = dlc_cpu_set_input;
  state->driver.run = dlc_cpu_run;
  state->driver.get_output = dlc_cpu_get_output;
  state->driver.timings = dlc_cpu_timings;
  state->driver.destroy = dlc_cpu_driver_destroy;
  *out_driver = &state->driver;
  return DLC_OK;
}

dlc_status_t dlc_cpu_driver_create(const dlc_allocator_t *allocator,
                                   dlc_driver_t **out_driver) {
  return dlc_cpu_driver_new(allocator, NULL, 0, 0, out_driver);
}

dlc_status_t dlc_cpu_driver_create_static(const dlc_allocator_t *allocator,
                                          const dlc_cpu_symbol_t *symbols,
                                          size_t symbol_count,
                                          dlc_driver_t **out_driver) {
  return dlc_cpu_driver_new(allocator, symbols, symbol_count, 1, out_driver);
}

dlc_status_t dlc_cpu_driver_create_linked(const dlc_allocator_t *allocator,
                                          const dlc_cpu_symbol_t *symbols,
                                          size_t symbol_count,
                                          uint64_t fingerprint,
                                          dlc_driver_t **out_driver) {
  dlc_status_t status =
      dlc_cpu_driver_new(allocator, symbols, symbol_count, 1, out_driver);
  if (status == DLC_OK) {
    dlc_cpu_driver_state_t *state =
        (dlc_cpu_driver_state_t *)(*out_driver)->self;
    state->check_code_id = 1;
    state->code_id = fingerprint;
  }
  return status;
}
