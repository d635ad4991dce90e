/*===- cpu_pool.c - a persistent thread pool for one session --------------===*
 *
 * Threads are created once per session so that a run only wakes them.
 * Between kernels of a run, which follow each other within microseconds, a
 * waiting thread first spins for a bounded few microseconds, then blocks on
 * a condition variable: edge devices often share their few cores with the
 * rest of the application, so nothing spins for long.
 *===----------------------------------------------------------------------===*/

#if !defined(DLC_RUNTIME_SINGLE_THREADED)

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "cpu_pool.h"

typedef struct dlc_cpu_worker_t {
  dlc_cpu_pool_t *pool;
  uint32_t index;
  pthread_t thread;
} dlc_cpu_worker_t;

struct dlc_cpu_pool_t {
  dlc_allocator_t allocator;
  uint32_t thread_count;
  uint32_t worker_count; /* started so far */
  dlc_cpu_worker_t *workers;

  /* Start of a run: workers wait for `generation` to change. */
  pthread_mutex_t start_mutex;
  pthread_cond_t start_cond;
  uint64_t generation;
  int stop;
  dlc_cpu_job_fn job;
  void *job_arg;

  /* The end of a run: the caller stores the run's generation in
   * `finished` once the job is done on its thread, then waits until no
   * worker is `active` in it. A worker counts itself active before it
   * checks `finished`, and skips a run already finished: a worker that
   * wakes late (blocked, or descheduled) is never waited for, so a run is
   * never slower than the caller alone by a worker's wake-up. */
  uint64_t finished;
  uint32_t active;
};

/* Polls of a bounded spin before blocking (a few microseconds). */
#define DLC_CPU_SPIN 2000

static void dlc_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#endif
}

/* Spins until `*word` differs from `seen` or the spin budget runs out. */
static void dlc_cpu_spin_while_equal(const uint64_t *word, uint64_t seen) {
  int i;
  for (i = 0; i < DLC_CPU_SPIN; ++i) {
    if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != seen)
      return;
    dlc_cpu_relax();
  }
}

void dlc_cpu_wait_count(const uint32_t *count, uint32_t target) {
  int i;
  for (i = 0; __atomic_load_n(count, __ATOMIC_ACQUIRE) < target; ++i) {
    if (i < DLC_CPU_SPIN)
      dlc_cpu_relax();
    else
      sched_yield();
  }
}

/* Capped: a default should not start thousands of threads per session. */
uint32_t dlc_cpu_online_count(void) {
  long count = sysconf(_SC_NPROCESSORS_ONLN);
  return count < 1 ? 1u : count > 1024 ? 1024u : (uint32_t)count;
}

static void *dlc_cpu_worker_main(void *arg) {
  dlc_cpu_worker_t *worker = (dlc_cpu_worker_t *)arg;
  dlc_cpu_pool_t *pool = worker->pool;
  uint64_t seen = 0;
  for (;;) {
    dlc_cpu_job_fn job;
    void *job_arg;
    dlc_cpu_spin_while_equal(&pool->generation, seen);
    pthread_mutex_lock(&pool->start_mutex);
    while (__atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE) == seen &&
           !pool->stop)
      pthread_cond_wait(&pool->start_cond, &pool->start_mutex);
    if (pool->stop) {
      pthread_mutex_unlock(&pool->start_mutex);
      return NULL;
    }
    seen = pool->generation;
    job = pool->job;
    job_arg = pool->job_arg;
    pthread_mutex_unlock(&pool->start_mutex);
    /* Sequentially consistent, with the caller's store of `finished` and
     * load of `active`: either the caller sees this worker active and
     * waits for it, or this worker sees the run finished and skips it. */
    __atomic_add_fetch(&pool->active, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&pool->finished, __ATOMIC_SEQ_CST) < seen)
      job(job_arg, worker->index, pool->thread_count);
    __atomic_sub_fetch(&pool->active, 1, __ATOMIC_RELEASE);
  }
}

void dlc_cpu_pool_run(dlc_cpu_pool_t *pool, dlc_cpu_job_fn job, void *arg) {
  uint64_t generation;
  int i;
  pthread_mutex_lock(&pool->start_mutex);
  pool->job = job;
  pool->job_arg = arg;
  generation = __atomic_add_fetch(&pool->generation, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool->start_cond);
  pthread_mutex_unlock(&pool->start_mutex);
  job(arg, 0, pool->thread_count);
  /* The job leaves nothing for other threads once it returns here (the
   * caller's share is all that no worker took). Nobody touches `arg` after
   * the wait: it may live on the caller's stack. */
  __atomic_store_n(&pool->finished, generation, __ATOMIC_SEQ_CST);
  for (i = 0; __atomic_load_n(&pool->active, __ATOMIC_SEQ_CST) != 0; ++i) {
    if (i < DLC_CPU_SPIN)
      dlc_cpu_relax();
    else
      sched_yield();
  }
}

void dlc_cpu_pool_destroy(dlc_cpu_pool_t *pool) {
  uint32_t i;
  if (!pool)
    return;
  pthread_mutex_lock(&pool->start_mutex);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->start_cond);
  pthread_mutex_unlock(&pool->start_mutex);
  for (i = 0; i < pool->worker_count; ++i)
    pthread_join(pool->workers[i].thread, NULL);
  pthread_cond_destroy(&pool->start_cond);
  pthread_mutex_destroy(&pool->start_mutex);
  pool->allocator.free(pool->allocator.self, pool->workers);
  pool->allocator.free(pool->allocator.self, pool);
}

dlc_status_t dlc_cpu_pool_create(const dlc_allocator_t *allocator,
                                 uint32_t thread_count, dlc_message_t *message,
                                 dlc_cpu_pool_t **out_pool) {
  dlc_cpu_pool_t *pool;
  uint32_t i;
  pool = (dlc_cpu_pool_t *)allocator->alloc(allocator->self, sizeof(*pool), 16);
  if (!pool)
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the thread pool");
  memset(pool, 0, sizeof(*pool));
  pool->allocator = *allocator;
  pool->thread_count = thread_count;
  pool->workers = (dlc_cpu_worker_t *)allocator->alloc(
      allocator->self, sizeof(dlc_cpu_worker_t) * (thread_count - 1), 16);
  if (!pool->workers) {
    allocator->free(allocator->self, pool);
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate %u worker threads",
                           (unsigned)(thread_count - 1));
  }
  pthread_mutex_init(&pool->start_mutex, NULL);
  pthread_cond_init(&pool->start_cond, NULL);
  for (i = 0; i + 1 < thread_count; ++i) {
    dlc_cpu_worker_t *worker = &pool->workers[i];
    int error;
    worker->pool = pool;
    worker->index = i + 1;
    error = pthread_create(&worker->thread, NULL, dlc_cpu_worker_main, worker);
    if (error != 0) {
      dlc_cpu_pool_destroy(pool);
      return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                             "cannot start worker thread %u of %u: %s",
                             (unsigned)(i + 1), (unsigned)(thread_count - 1),
                             strerror(error));
    }
    ++pool->worker_count;
  }
  *out_pool = pool;
  return DLC_OK;
}

#else

/* ISO C forbids an empty translation unit. */
typedef int dlc_cpu_pool_unused_t;

#endif
