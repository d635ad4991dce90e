/*===- file.c - get an artifact file's bytes ------------------------------===*
 *
 * Memory-mapping keeps weights out of the heap and lets several processes
 * share them; a platform without mmap reads the file into one aligned
 * allocation instead. Either way the bytes are read-only afterwards.
 *===----------------------------------------------------------------------===*/

#if (defined(__unix__) || defined(__APPLE__)) && !defined(DLC_RUNTIME_NO_MMAP)
#define _POSIX_C_SOURCE 200809L
#define DLC_HAVE_MMAP 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#else
#define DLC_HAVE_MMAP 0
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Reads the whole file with stdio into an aligned allocation. */
static dlc_status_t dlc_file_read_stdio(const dlc_allocator_t *allocator,
                                        const char *path, void **out_bytes,
                                        size_t *out_size,
                                        dlc_message_t *message) {
  FILE *file = fopen(path, "rb");
  long end;
  size_t size;
  void *bytes;
  if (!file)
    return dlc_message_set(message, DLC_ERROR_IO, "cannot open '%s': %s", path,
                           strerror(errno));
  if (fseek(file, 0, SEEK_END) != 0 || (end = ftell(file)) < 0 ||
      fseek(file, 0, SEEK_SET) != 0) {
    fclose(file);
    return dlc_message_set(message, DLC_ERROR_IO,
                           "cannot determine the size of '%s'", path);
  }
  size = (size_t)end;
  bytes = allocator->alloc(allocator->self, size ? size : 1, DLCX_ALIGNMENT);
  if (!bytes) {
    fclose(file);
    return dlc_message_set(message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate %lu bytes for '%s'",
                           (unsigned long)size, path);
  }
  if (fread(bytes, 1, size, file) != size) {
    fclose(file);
    allocator->free(allocator->self, bytes);
    return dlc_message_set(message, DLC_ERROR_IO, "cannot read '%s'", path);
  }
  fclose(file);
  *out_bytes = bytes;
  *out_size = size;
  return DLC_OK;
}

dlc_status_t dlc_file_read(const dlc_allocator_t *allocator, const char *path,
                           dlc_bytes_kind_t *out_kind, void **out_bytes,
                           size_t *out_size, dlc_message_t *message) {
#if DLC_HAVE_MMAP
  struct stat st;
  void *bytes;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return dlc_message_set(message, DLC_ERROR_IO, "cannot open '%s': %s", path,
                           strerror(errno));
  if (fstat(fd, &st) != 0) {
    int error = errno;
    close(fd);
    return dlc_message_set(message, DLC_ERROR_IO, "cannot stat '%s': %s", path,
                           strerror(error));
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0 &&
      (uint64_t)st.st_size <= (uint64_t)(size_t)-1) {
    bytes = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (bytes != MAP_FAILED) {
      close(fd);
      *out_kind = DLC_BYTES_MAPPED;
      *out_bytes = bytes;
      *out_size = (size_t)st.st_size;
      return DLC_OK;
    }
  }
  close(fd);
  if (!S_ISREG(st.st_mode))
    return dlc_message_set(message, DLC_ERROR_IO, "'%s' is not a regular file",
                           path);
#endif
  *out_kind = DLC_BYTES_ALLOCATED;
  return dlc_file_read_stdio(allocator, path, out_bytes, out_size, message);
}

void dlc_file_release(const dlc_allocator_t *allocator, dlc_bytes_kind_t kind,
                      void *bytes, size_t size) {
  (void)size;
  if (kind == DLC_BYTES_ALLOCATED)
    allocator->free(allocator->self, bytes);
#if DLC_HAVE_MMAP
  else if (kind == DLC_BYTES_MAPPED)
    munmap(bytes, size);
#endif
}
