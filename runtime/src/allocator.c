/*===- allocator.c - the C library allocator ------------------------------===*/

#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200112L
#include <unistd.h>
#endif

#include <stdlib.h>

#include "internal.h"

#if defined(_POSIX_VERSION)

static void *dlc_system_alloc(void *self, size_t size, size_t alignment) {
  void *ptr = NULL;
  (void)self;
  /* posix_memalign wants a multiple of sizeof(void *). */
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  if (posix_memalign(&ptr, alignment, size ? size : 1) != 0)
    return NULL;
  return ptr;
}

static void dlc_system_free(void *self, void *ptr) {
  (void)self;
  free(ptr);
}

#else

/* C99 has no aligned allocation: over-allocate and keep the pointer malloc
 * returned just below the aligned block. */
static void *dlc_system_alloc(void *self, size_t size, size_t alignment) {
  size_t extra;
  unsigned char *raw;
  uintptr_t aligned;
  (void)self;
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  extra = alignment - 1 + sizeof(void *);
  if (size > (size_t)-1 - extra)
    return NULL;
  raw = (unsigned char *)malloc(size + extra);
  if (!raw)
    return NULL;
  aligned = ((uintptr_t)raw + extra) & ~(uintptr_t)(alignment - 1);
  ((void **)aligned)[-1] = raw;
  return (void *)aligned;
}

static void dlc_system_free(void *self, void *ptr) {
  (void)self;
  if (ptr)
    free(((void **)ptr)[-1]);
}

#endif

dlc_allocator_t dlc_allocator_system(void) {
  dlc_allocator_t allocator;
  allocator.self = NULL;
  allocator.alloc = dlc_system_alloc;
  allocator.free = dlc_system_free;
  return allocator;
}
