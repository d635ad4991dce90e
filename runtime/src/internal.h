/*===- internal.h - shared by the runtime core's sources ---------*- C -*-===*/

#ifndef DLC_RUNTIME_INTERNAL_H
#define DLC_RUNTIME_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dlc/driver.h"
#include "dlc/runtime.h"

/* The tables are used in place, so their layout is the file layout. A
 * compiler that padded them differently would read garbage: fail the build. */
#define DLC_STATIC_ASSERT(cond, name)                                          \
  typedef char dlc_assert_##name[(cond) ? 1 : -1]
DLC_STATIC_ASSERT(sizeof(dlcx_header_t) == 64, header_size);
DLC_STATIC_ASSERT(sizeof(dlcx_section_t) == 24, section_size);
DLC_STATIC_ASSERT(sizeof(dlcx_model_t) == 40, model_size);
DLC_STATIC_ASSERT(sizeof(dlcx_tensor_t) == 120, tensor_size);
DLC_STATIC_ASSERT(sizeof(dlcx_kernel_t) == 40, kernel_size);
DLC_STATIC_ASSERT(sizeof(dlcx_launch_t) == 24, launch_size);

/* Long enough for a message that names a tensor, a field and two values. */
#define DLC_MESSAGE_CAPACITY 512u
/* Built-in plus application drivers one context can hold. */
#define DLC_MAX_DRIVERS 16u

typedef struct dlc_driver_entry_t {
  dlc_driver_t *driver;
  int owned; /* created by the context: destroyed with it */
} dlc_driver_entry_t;

struct dlc_context_t {
  dlc_allocator_t allocator;
  dlc_message_t message;
  uint32_t driver_count;
  dlc_driver_entry_t drivers[DLC_MAX_DRIVERS];
  char message_text[DLC_MESSAGE_CAPACITY];
};

/* How the artifact bytes of a model were obtained, to release them. */
typedef enum dlc_bytes_kind_e {
  DLC_BYTES_BORROWED = 0, /* dlc_model_load_memory: the caller's */
  DLC_BYTES_MAPPED = 1,   /* mmap of the file */
  DLC_BYTES_ALLOCATED = 2 /* read into an allocation */
} dlc_bytes_kind_t;

struct dlc_model_t {
  dlc_context_t *context;
  const dlc_driver_t *driver;
  void *driver_model;
  dlc_artifact_t artifact;
  dlc_bytes_kind_t bytes_kind;
  void *bytes;
  size_t bytes_size;
};

struct dlc_session_t {
  dlc_model_t *model;
  void *driver_session;
  int profiling;
  /* Per input: nonzero while it holds what the caller set (or the arena's
   * zeros); a run clears it for inputs flagged DLCX_TENSOR_INPUT_REUSED. */
  unsigned char *input_valid;
  dlc_message_t message;
  char message_text[DLC_MESSAGE_CAPACITY];
};

/* The most recently registered driver for `target`, or NULL. */
const dlc_driver_t *dlc_context_find_driver(const dlc_context_t *context,
                                            uint32_t target);

void dlc_message_init(dlc_message_t *message, char *text, size_t capacity);

/* Checks everything the run path relies on (see docs/artifact-format.md)
 * and fills `out_artifact` with views into `data`. `data` is aligned to
 * DLCX_ALIGNMENT. */
dlc_status_t dlc_artifact_validate(const uint8_t *data, uint64_t size,
                                   dlc_artifact_t *out_artifact,
                                   dlc_message_t *message);

/* Bytes of one element of `dtype` times 2 (i4/u4 are half a byte), or 0 for
 * an unknown dtype. */
uint32_t dlc_dtype_half_bytes(uint32_t dtype);
const char *dlc_dtype_name(uint32_t dtype);
const char *dlc_target_name(uint32_t target);

/* File access behind one interface: mmap where the platform has it, stdio
 * reads into an aligned allocation otherwise. */
dlc_status_t dlc_file_read(const dlc_allocator_t *allocator, const char *path,
                           dlc_bytes_kind_t *out_kind, void **out_bytes,
                           size_t *out_size, dlc_message_t *message);
void dlc_file_release(const dlc_allocator_t *allocator, dlc_bytes_kind_t kind,
                      void *bytes, size_t size);

/* Copies the leading fields of a caller's options struct that its
 * struct_size covers over `defaults` (already in `out`). A struct_size too
 * small for the size field, or larger than this runtime's struct (a newer
 * header whose fields this runtime cannot honour), is an error. */
dlc_status_t dlc_options_copy(const void *options, size_t known_size, void *out,
                              dlc_message_t *message, const char *type_name);

#endif /* DLC_RUNTIME_INTERNAL_H */
