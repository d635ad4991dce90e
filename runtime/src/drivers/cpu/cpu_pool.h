/*===- cpu_pool.h - a persistent thread pool for one session -----*- C -*-===*/

#ifndef DLC_CPU_POOL_H
#define DLC_CPU_POOL_H

#include <stdint.h>

#include "dlc/driver.h"

typedef struct dlc_cpu_pool_t dlc_cpu_pool_t;

/* Work every thread of the pool runs once per dlc_cpu_pool_run, with its
 * index in [0, thread_count); index 0 is the calling thread. */
typedef void (*dlc_cpu_job_fn)(void *arg, uint32_t thread_index,
                               uint32_t thread_count);

/* The number of online CPUs, at least 1. */
uint32_t dlc_cpu_online_count(void);

/* Starts thread_count - 1 workers (thread_count >= 2); the caller of
 * dlc_cpu_pool_run is the last thread. */
dlc_status_t dlc_cpu_pool_create(const dlc_allocator_t *allocator,
                                 uint32_t thread_count, dlc_message_t *message,
                                 dlc_cpu_pool_t **out_pool);
void dlc_cpu_pool_destroy(dlc_cpu_pool_t *pool);

/* Runs `job` on the calling thread (index 0) and on every worker that
 * wakes before the caller's share is done, and returns when the job is done
 * on all threads that started it: a job must not count on the workers
 * (threads that arrive find the work the others left). Does not allocate. */
void dlc_cpu_pool_run(dlc_cpu_pool_t *pool, dlc_cpu_job_fn job, void *arg);

/* Returns once `*count` (updated by other threads with release semantics)
 * has reached `target`: spins for a bounded while, then yields the CPU
 * between polls. */
void dlc_cpu_wait_count(const uint32_t *count, uint32_t target);

#endif /* DLC_CPU_POOL_H */
