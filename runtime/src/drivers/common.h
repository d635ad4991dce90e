/*===- common.h - what the built-in drivers share ----------------*- C -*-===*
 *
 * A mutex that is nothing in a single-threaded build, and the copying of a
 * driver's creation options (their struct_size contract, their strings).
 * Drivers see the rest of the runtime only through dlc/driver.h.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_DRIVERS_COMMON_H
#define DLC_DRIVERS_COMMON_H

#include <stdint.h>
#include <string.h>

#include "dlc/driver.h"

#if !defined(DLC_RUNTIME_SINGLE_THREADED)
#include <pthread.h>
typedef pthread_mutex_t dlc_mutex_t;
#define dlc_mutex_init(m) (pthread_mutex_init((m), NULL) == 0)
#define dlc_mutex_destroy(m) pthread_mutex_destroy(m)
#define dlc_mutex_lock(m) pthread_mutex_lock(m)
#define dlc_mutex_unlock(m) pthread_mutex_unlock(m)
#else
typedef int dlc_mutex_t;
#define dlc_mutex_init(m) ((void)(m), 1)
#define dlc_mutex_destroy(m) ((void)(m))
#define dlc_mutex_lock(m) ((void)(m))
#define dlc_mutex_unlock(m) ((void)(m))
#endif

/* Copies a driver's options struct into `out` (zeroed by the caller, of
 * `known_size` bytes): an older application's smaller struct leaves the
 * newer fields zero, i.e. at their defaults. NULL `options` keeps `out` as
 * it is. 0 when options->struct_size is neither at least 4 nor at most
 * `known_size`. */
static inline int dlc_driver_options_copy(const void *options,
                                          size_t known_size, void *out) {
  uint32_t struct_size;
  if (!options)
    return 1;
  memcpy(&struct_size, options, sizeof(struct_size));
  if (struct_size < sizeof(struct_size) || struct_size > known_size)
    return 0;
  memcpy(out, options, struct_size);
  return 1;
}

/* A copy of `text` from `allocator`, or NULL for NULL or "". Sets *failed
 * when the allocation fails. */
static inline char *dlc_driver_strdup(const dlc_allocator_t *allocator,
                                      const char *text, int *failed) {
  size_t size;
  char *copy;
  if (!text || !*text)
    return NULL;
  size = strlen(text) + 1;
  copy = (char *)allocator->alloc(allocator->self, size, 1);
  if (!copy) {
    *failed = 1;
    return NULL;
  }
  memcpy(copy, text, size);
  return copy;
}

#endif /* DLC_DRIVERS_COMMON_H */
