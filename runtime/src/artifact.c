/*===- artifact.c - validate an artifact once, at load --------------------===*
 *
 * Everything the run path and the drivers rely on is checked here, so that
 * they can index tables and offset pointers without checks: every offset,
 * size and index is in bounds, every size is consistent with its shape, and
 * every sum and product is computed without overflow. Rejections name the
 * field and its value. docs/artifact-format.md lists the rules.
 *===----------------------------------------------------------------------===*/

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format_macros.h"
#include "internal.h"

#define DLC_SECTION_KIND_MAX DLCX_SECTION_CPU_CODE_ID

typedef struct dlc_validator_t {
  const uint8_t *data;
  uint64_t size;
  dlc_message_t *message;
  /* A string reference below this is NUL-terminated inside STRINGS. */
  uint64_t strings_limit;
  dlc_artifact_t *out;
  /* Since 1.2 (NULL before): each kernel's grid, and the bytes of each of
   * its buffers, kernel after kernel. */
  const dlcx_kernel_limits_t *kernel_limits;
  const uint64_t *kernel_args;
} dlc_validator_t;

static dlc_status_t dlc_invalid(dlc_validator_t *v, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static dlc_status_t dlc_invalid(dlc_validator_t *v, const char *format, ...) {
  va_list args;
  int n =
      snprintf(v->message->text, v->message->capacity, "invalid artifact: ");
  va_start(args, format);
  if (n > 0 && (size_t)n < v->message->capacity)
    vsnprintf(v->message->text + n, v->message->capacity - (size_t)n, format,
              args);
  va_end(args);
  return DLC_ERROR_INVALID_ARTIFACT;
}

/* Whether [offset, offset + size) lies within [0, limit). */
static int dlc_range_ok(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

static int dlc_ranges_overlap(uint64_t a, uint64_t a_size, uint64_t b,
                              uint64_t b_size) {
  return a_size && b_size && a < b + b_size && b < a + a_size;
}

static const char *dlc_section_name(uint32_t kind) {
  static const char *const names[] = {
      "?",           "STRINGS",    "TENSORS", "KERNELS",
      "LAUNCHES",    "BINDINGS",   "IO",      "CODE",
      "CONSTANTS",   "MODEL",      "CUBIN",   "KERNEL_LIMITS",
      "KERNEL_ARGS", "CPU_CODE_ID"};
  return kind <= DLC_SECTION_KIND_MAX ? names[kind] : "?";
}

static int dlc_host_is_little_endian(void) {
  const uint16_t probe = 1;
  return *(const uint8_t *)&probe == 1;
}

static dlc_status_t dlc_check_header(dlc_validator_t *v) {
  const dlcx_header_t *h = (const dlcx_header_t *)v->data;
  uint64_t checksum;

  if (v->size < sizeof(dlcx_header_t))
    return dlc_invalid(
        v, "truncated: %" PRIu64 " bytes, but the header alone takes %u",
        v->size, (unsigned)sizeof(dlcx_header_t));
  if (h->magic != DLCX_MAGIC)
    return dlc_invalid(v,
                       "magic is 0x%08" PRIx32 ", expected 0x%08x (\"DLCX\"):"
                       " not a .dlcx file",
                       h->magic, (unsigned)DLCX_MAGIC);
  if (h->version_major != DLCX_VERSION_MAJOR ||
      h->version_minor > DLCX_VERSION_MINOR)
    return dlc_message_set(
        v->message, DLC_ERROR_UNSUPPORTED,
        "artifact format version %u.%u is not supported: this runtime reads "
        "%u.0 to %u.%u; recompile the model with a matching dlc-compile",
        (unsigned)h->version_major, (unsigned)h->version_minor,
        (unsigned)DLCX_VERSION_MAJOR, (unsigned)DLCX_VERSION_MAJOR,
        (unsigned)DLCX_VERSION_MINOR);
  if (h->header_size != sizeof(dlcx_header_t))
    return dlc_invalid(v, "header_size is %" PRIu32 ", expected %u",
                       h->header_size, (unsigned)sizeof(dlcx_header_t));
  if (h->file_size != v->size)
    return dlc_invalid(v,
                       "file_size is %" PRIu64 " but the artifact has %" PRIu64
                       " bytes (truncated or padded)",
                       h->file_size, v->size);
  checksum = dlcx_checksum(v->data + DLCX_CHECKSUM_START,
                           v->size - DLCX_CHECKSUM_START);
  if (h->checksum != checksum)
    return dlc_invalid(v,
                       "checksum is 0x%016" PRIx64
                       " but the content hashes to 0x%016" PRIx64
                       ": the file is corrupt",
                       h->checksum, checksum);
  if (h->flags != 0 || h->reserved != 0)
    return dlc_invalid(
        v, "header flags/reserved are 0x%" PRIx32 "/0x%" PRIx32 ", must be 0",
        h->flags, h->reserved);
  if (h->target < DLCX_TARGET_CPU || h->target > DLCX_TARGET_CUDA)
    return dlc_invalid(v, "header target is %" PRIu32 ", not a known target",
                       h->target);
  if (h->target != DLCX_TARGET_CUDA && h->target_sm != 0)
    return dlc_invalid(
        v, "header target_sm is %" PRIu32 " in a %s artifact, must be 0",
        h->target_sm, dlc_target_name(h->target));
  v->out->header = h;
  return DLC_OK;
}

/* Checks the section table and returns each section by kind. */
static dlc_status_t
dlc_check_sections(dlc_validator_t *v,
                   const dlcx_section_t *by_kind[DLC_SECTION_KIND_MAX + 1]) {
  static const uint32_t required[] = {
      DLCX_SECTION_STRINGS,  DLCX_SECTION_TENSORS,  DLCX_SECTION_KERNELS,
      DLCX_SECTION_LAUNCHES, DLCX_SECTION_BINDINGS, DLCX_SECTION_IO,
      DLCX_SECTION_MODEL};
  const dlcx_header_t *h = v->out->header;
  uint64_t table = h->section_table_offset;
  uint64_t table_size = (uint64_t)h->section_count * sizeof(dlcx_section_t);
  const dlcx_section_t *sections;
  uint32_t i, j;

  if (table % 8 != 0 || table < sizeof(dlcx_header_t) ||
      !dlc_range_ok(table, table_size, v->size))
    return dlc_invalid(v,
                       "section table at offset %" PRIu64 " with %" PRIu32
                       " entries does not fit after the header in %" PRIu64
                       " bytes, 8-aligned",
                       table, h->section_count, v->size);
  sections = (const dlcx_section_t *)(v->data + table);
  for (i = 0; i < h->section_count; ++i) {
    const dlcx_section_t *s = &sections[i];
    if (s->kind < 1 || s->kind > DLC_SECTION_KIND_MAX)
      return dlc_invalid(v,
                         "section %" PRIu32 ": kind %" PRIu32
                         " is not a known section kind",
                         i, s->kind);
    if (by_kind[s->kind])
      return dlc_invalid(v, "section %" PRIu32 ": a second %s section", i,
                         dlc_section_name(s->kind));
    if (s->flags != 0)
      return dlc_invalid(
          v, "section %" PRIu32 " (%s): flags is 0x%" PRIx32 ", must be 0", i,
          dlc_section_name(s->kind), s->flags);
    if (s->offset % DLCX_ALIGNMENT != 0)
      return dlc_invalid(v,
                         "section %" PRIu32 " (%s): offset %" PRIu64
                         " is not a multiple of %u",
                         i, dlc_section_name(s->kind), s->offset,
                         (unsigned)DLCX_ALIGNMENT);
    if (!dlc_range_ok(s->offset, s->size, v->size))
      return dlc_invalid(
          v,
          "section %" PRIu32 " (%s): offset %" PRIu64 " + size %" PRIu64
          " ends past the artifact's %" PRIu64 " bytes",
          i, dlc_section_name(s->kind), s->offset, s->size, v->size);
    if (dlc_ranges_overlap(s->offset, s->size, 0, sizeof(dlcx_header_t)) ||
        dlc_ranges_overlap(s->offset, s->size, table, table_size))
      return dlc_invalid(v,
                         "section %" PRIu32 " (%s) at offset %" PRIu64
                         " overlaps the header or the section table",
                         i, dlc_section_name(s->kind), s->offset);
    by_kind[s->kind] = s;
  }
  for (i = 1; i <= DLC_SECTION_KIND_MAX; ++i)
    for (j = i + 1; j <= DLC_SECTION_KIND_MAX; ++j)
      if (by_kind[i] && by_kind[j] &&
          dlc_ranges_overlap(by_kind[i]->offset, by_kind[i]->size,
                             by_kind[j]->offset, by_kind[j]->size))
        return dlc_invalid(v, "sections %s and %s overlap", dlc_section_name(i),
                           dlc_section_name(j));
  for (i = 0; i < sizeof(required) / sizeof(required[0]); ++i)
    if (!by_kind[required[i]])
      return dlc_invalid(v, "the %s section is missing",
                         dlc_section_name(required[i]));
  return DLC_OK;
}

/* The number of `entry_size` entries in section `kind`, which must be a
 * whole number of them and fit in uint32_t. */
static dlc_status_t dlc_section_entries(dlc_validator_t *v,
                                        const dlcx_section_t *s,
                                        uint64_t entry_size,
                                        uint32_t *out_count) {
  uint64_t count = s->size / entry_size;
  if (s->size % entry_size != 0)
    return dlc_invalid(v,
                       "%s section size %" PRIu64
                       " is not a multiple of its entry size %" PRIu64,
                       dlc_section_name(s->kind), s->size, entry_size);
  /* DLCX_NO_INDEX must stay free to mean "none". */
  if (count >= DLCX_NO_INDEX)
    return dlc_invalid(v, "%s section holds %" PRIu64 " entries, too many",
                       dlc_section_name(s->kind), count);
  *out_count = (uint32_t)count;
  return DLC_OK;
}

static int dlc_string_ok(const dlc_validator_t *v, uint32_t ref) {
  return ref < v->strings_limit;
}

static dlc_status_t dlc_check_model(dlc_validator_t *v, uint32_t io_count) {
  const dlcx_model_t *m = v->out->model;
  if (m->cpu_scratch_size != 0 && (v->out->header->version_minor < 1 ||
                                   v->out->header->target != DLCX_TARGET_CPU))
    return dlc_invalid(v,
                       "model cpu_scratch_size is %" PRIu32
                       ", must be 0 in a version 1.0 or non-CPU artifact",
                       m->cpu_scratch_size);
  if (!dlc_string_ok(v, m->name) || !dlc_string_ok(v, m->producer))
    return dlc_invalid(v,
                       "model name/producer string %" PRIu32 "/%" PRIu32
                       " is not a NUL-terminated string in STRINGS",
                       m->name, m->producer);
  if ((uint64_t)m->input_count + m->output_count != io_count)
    return dlc_invalid(v,
                       "model input_count %" PRIu32 " + output_count %" PRIu32
                       " != %" PRIu32 " IO entries",
                       m->input_count, m->output_count, io_count);
  if (m->arena_size > (uint64_t)(size_t)-1)
    return dlc_message_set(v->message, DLC_ERROR_UNSUPPORTED,
                           "model arena_size %" PRIu64
                           " exceeds this host's address space",
                           m->arena_size);
  return DLC_OK;
}

/* The bytes `count` elements of `dtype` take, or 0 on overflow. */
static int dlc_tensor_bytes(uint32_t dtype, uint64_t count, uint64_t *out) {
  uint64_t half = dlc_dtype_half_bytes(dtype);
  if (half == 1) {
    *out = count / 2 + count % 2;
    return 1;
  }
  if (count > UINT64_MAX / (half / 2))
    return 0;
  *out = count * (half / 2);
  return 1;
}

static dlc_status_t dlc_check_tensor(dlc_validator_t *v, uint32_t index) {
  const dlcx_tensor_t *t = &v->out->tensors[index];
  const char *name;
  uint64_t count = 1, bytes, limit;
  uint32_t d;

  if (!dlc_string_ok(v, t->name))
    return dlc_invalid(v,
                       "tensor %" PRIu32 ": name %" PRIu32
                       " is not a NUL-terminated string in STRINGS",
                       index, t->name);
  name = v->out->strings + t->name;
  if (dlc_dtype_half_bytes(t->dtype) == 0)
    return dlc_invalid(v,
                       "tensor %" PRIu32 " ('%s'): dtype %" PRIu32
                       " is not a known element type",
                       index, name, t->dtype);
  if (t->rank > DLCX_MAX_RANK)
    return dlc_invalid(v,
                       "tensor %" PRIu32 " ('%s'): rank %" PRIu32 " exceeds %u",
                       index, name, t->rank, (unsigned)DLCX_MAX_RANK);
  for (d = 0; d < DLCX_MAX_RANK; ++d) {
    int64_t dim = t->dims[d];
    if (d >= t->rank) {
      if (dim != 0)
        return dlc_invalid(v,
                           "tensor %" PRIu32 " ('%s'): dims[%" PRIu32
                           "] is %" PRId64 " beyond rank %" PRIu32
                           ", must be 0",
                           index, name, d, dim, t->rank);
      continue;
    }
    if (dim < 0)
      return dlc_invalid(v,
                         "tensor %" PRIu32 " ('%s'): dims[%" PRIu32
                         "] is %" PRId64 ", must be >= 0",
                         index, name, d, dim);
    if (dim != 0 && count > UINT64_MAX / (uint64_t)dim)
      return dlc_invalid(v,
                         "tensor %" PRIu32 " ('%s'): the element count "
                         "overflows at dims[%" PRIu32 "] = %" PRId64,
                         index, name, d, dim);
    count *= (uint64_t)dim;
  }
  if (!dlc_tensor_bytes(t->dtype, count, &bytes))
    return dlc_invalid(v,
                       "tensor %" PRIu32 " ('%s'): %" PRIu64
                       " elements of %s overflow the byte size",
                       index, name, count, dlc_dtype_name(t->dtype));
  if (t->size != bytes)
    return dlc_invalid(v,
                       "tensor %" PRIu32 " ('%s'): size is %" PRIu64
                       " bytes but its shape and dtype %s need %" PRIu64,
                       index, name, t->size, dlc_dtype_name(t->dtype), bytes);
  if (t->storage == DLCX_STORAGE_ARENA)
    limit = v->out->model->arena_size;
  else if (t->storage == DLCX_STORAGE_CONSTANT)
    limit = v->out->constants_size;
  else
    return dlc_invalid(v,
                       "tensor %" PRIu32 " ('%s'): storage %" PRIu32
                       " is neither ARENA (1) nor CONSTANT (2)",
                       index, name, t->storage);
  if (t->offset % DLCX_ALIGNMENT != 0)
    return dlc_invalid(v,
                       "tensor %" PRIu32 " ('%s'): offset %" PRIu64
                       " is not a multiple of %u",
                       index, name, t->offset, (unsigned)DLCX_ALIGNMENT);
  if (!dlc_range_ok(t->offset, t->size, limit))
    return dlc_invalid(v,
                       "tensor %" PRIu32 " ('%s'): offset %" PRIu64
                       " + size %" PRIu64 " exceeds the %s (%" PRIu64 " bytes)",
                       index, name, t->offset, t->size,
                       t->storage == DLCX_STORAGE_ARENA ? "arena"
                                                        : "CONSTANTS section",
                       limit);
  if ((t->flags & ~(uint32_t)DLCX_TENSOR_INPUT_REUSED) != 0 ||
      (t->flags != 0 && v->out->header->version_minor < 5))
    return dlc_invalid(v,
                       "tensor %" PRIu32 " ('%s'): flags 0x%" PRIx32
                       " has bits this version does not define",
                       index, name, t->flags);
  if (t->quant_axis < -1 ||
      (t->quant_axis >= 0 && (uint32_t)t->quant_axis >= t->rank))
    return dlc_invalid(v,
                       "tensor %" PRIu32 " ('%s'): quant_axis %" PRId32
                       " is neither -1 nor an axis of rank %" PRIu32,
                       index, name, t->quant_axis, t->rank);
  if (t->quant_axis >= 0) {
    /* dims[axis] float scales and as many int32 zero points; dims[axis] is
     * at most `count`, which fits, but times 8 might not. */
    uint64_t channels = (uint64_t)t->dims[t->quant_axis];
    if (channels > UINT64_MAX / 8 || t->quant_params % 4 != 0 ||
        !dlc_range_ok(t->quant_params, channels * 8, v->out->constants_size))
      return dlc_invalid(v,
                         "tensor %" PRIu32 " ('%s'): per-axis quant_params "
                         "at %" PRIu64 " (%" PRIu64
                         " channels) are not 4-aligned inside CONSTANTS",
                         index, name, t->quant_params, channels);
  }
  return DLC_OK;
}

static dlc_status_t dlc_check_kernel(dlc_validator_t *v, uint32_t index) {
  const dlcx_kernel_t *k = &v->out->kernels[index];
  const char *name;
  uint32_t i;
  if (!dlc_string_ok(v, k->name))
    return dlc_invalid(v,
                       "kernel %" PRIu32 ": name %" PRIu32
                       " is not a NUL-terminated string in STRINGS",
                       index, k->name);
  name = v->out->strings + k->name;
  if (k->code_format < DLCX_CODE_ELF_SHARED ||
      k->code_format > DLCX_CODE_LINKED)
    return dlc_invalid(v,
                       "kernel %" PRIu32 " ('%s'): code_format %" PRIu32
                       " is not a known code format",
                       index, name, k->code_format);
  if (k->code_format == DLCX_CODE_LINKED) {
    const dlcx_header_t *h = v->out->header;
    if (h->version_minor < 4)
      return dlc_invalid(v,
                         "kernel %" PRIu32 " ('%s'): linked code in a "
                         "version 1.%u artifact (it exists since 1.4)",
                         index, name, (unsigned)h->version_minor);
    if (h->target != DLCX_TARGET_CPU || !v->out->has_cpu_code_id)
      return dlc_invalid(v,
                         "kernel %" PRIu32 " ('%s'): linked code needs a "
                         "CPU artifact with a CPU_CODE_ID section",
                         index, name);
    if (k->code_offset != 0 || k->code_size != 0)
      return dlc_invalid(v,
                         "kernel %" PRIu32 " ('%s'): linked code has no "
                         "bytes in CODE, but code_offset %" PRIu64
                         " and code_size %" PRIu64,
                         index, name, k->code_offset, k->code_size);
  }
  if (!dlc_range_ok(k->code_offset, k->code_size, v->out->code_size))
    return dlc_invalid(
        v,
        "kernel %" PRIu32 " ('%s'): code_offset %" PRIu64
        " + code_size %" PRIu64 " exceeds the CODE section (%" PRIu64 " bytes)",
        index, name, k->code_offset, k->code_size, v->out->code_size);
  for (i = 0; i < 3; ++i)
    if (k->workgroup_size[i] == 0)
      return dlc_invalid(
          v, "kernel %" PRIu32 " ('%s'): workgroup_size[%" PRIu32 "] is 0",
          index, name, i);
  return DLC_OK;
}

/* Since 1.2: a launch runs its kernel on the grid the kernel was compiled
 * for, and binds buffers of the sizes the kernel reads and writes. */
/* The 1.2 kernel tables: present exactly from 1.2, one grid per kernel,
 * one size per kernel buffer. */
static dlc_status_t dlc_check_kernel_limits(
    dlc_validator_t *v,
    const dlcx_section_t *by_kind[DLC_SECTION_KIND_MAX + 1]) {
  const dlcx_section_t *limits = by_kind[DLCX_SECTION_KERNEL_LIMITS];
  const dlcx_section_t *args = by_kind[DLCX_SECTION_KERNEL_ARGS];
  const dlc_artifact_t *a = v->out;
  uint64_t buffers = 0;
  uint32_t count = 0, i, j;
  dlc_status_t status;
  if (a->header->version_minor < 2) {
    if (limits || args)
      return dlc_invalid(v, "a %s section in a version 1.%u artifact",
                         dlc_section_name(limits ? DLCX_SECTION_KERNEL_LIMITS
                                                 : DLCX_SECTION_KERNEL_ARGS),
                         (unsigned)a->header->version_minor);
    return DLC_OK;
  }
  if (!limits || !args)
    return dlc_invalid(v, "the %s section is missing",
                       dlc_section_name(limits ? DLCX_SECTION_KERNEL_ARGS
                                               : DLCX_SECTION_KERNEL_LIMITS));
  if ((status = dlc_section_entries(v, limits, sizeof(dlcx_kernel_limits_t),
                                    &count)) != DLC_OK)
    return status;
  if (count != a->kernel_count)
    return dlc_invalid(
        v, "KERNEL_LIMITS holds %" PRIu32 " entries for %" PRIu32 " kernels",
        count, a->kernel_count);
  for (i = 0; i < a->kernel_count; ++i)
    buffers += a->kernels[i].binding_count;
  if ((status = dlc_section_entries(v, args, sizeof(uint64_t), &count)) !=
      DLC_OK)
    return status;
  if (count != buffers)
    return dlc_invalid(v,
                       "KERNEL_ARGS holds %" PRIu32 " sizes, but the kernels "
                       "take %" PRIu64 " buffers",
                       count, buffers);
  v->kernel_limits = (const dlcx_kernel_limits_t *)(v->data + limits->offset);
  v->out->kernel_limits = v->kernel_limits;
  v->kernel_args = (const uint64_t *)(v->data + args->offset);
  for (i = 0; i < a->kernel_count; ++i)
    for (j = 0; j < 3; ++j)
      if (v->kernel_limits[i].grid[j] == 0)
        return dlc_invalid(v,
                           "kernel %" PRIu32 " ('%s'): grid[%" PRIu32 "] is 0",
                           i, a->strings + a->kernels[i].name, j);
  return DLC_OK;
}

static dlc_status_t dlc_check_launch_limits(dlc_validator_t *v,
                                            uint32_t index) {
  const dlcx_launch_t *l = &v->out->launches[index];
  const dlcx_kernel_t *k = &v->out->kernels[l->kernel];
  const uint32_t *grid = v->kernel_limits[l->kernel].grid;
  const uint64_t *args = v->kernel_args;
  uint32_t i;
  if (l->grid[0] != grid[0] || l->grid[1] != grid[1] || l->grid[2] != grid[2])
    return dlc_invalid(v,
                       "launch %" PRIu32 ": grid %" PRIu32 "x%" PRIu32
                       "x%" PRIu32 " but kernel '%s' was compiled for "
                       "%" PRIu32 "x%" PRIu32 "x%" PRIu32,
                       index, l->grid[0], l->grid[1], l->grid[2],
                       v->out->strings + k->name, grid[0], grid[1], grid[2]);
  for (i = 0; i < l->kernel; ++i)
    args += v->out->kernels[i].binding_count;
  for (i = 0; i < l->binding_count; ++i) {
    uint32_t tensor = v->out->bindings[l->binding_begin + i];
    if (tensor >= v->out->tensor_count)
      return DLC_OK; /* reported with the bindings */
    if (v->out->tensors[tensor].size != args[i])
      return dlc_invalid(v,
                         "launch %" PRIu32 ": buffer %" PRIu32
                         " is tensor %" PRIu32 " of %" PRIu64
                         " bytes, but kernel '%s' takes %" PRIu64 " there",
                         index, i, tensor, v->out->tensors[tensor].size,
                         v->out->strings + k->name, args[i]);
  }
  return DLC_OK;
}

static dlc_status_t dlc_check_launch(dlc_validator_t *v, uint32_t index) {
  const dlcx_launch_t *l = &v->out->launches[index];
  const dlcx_kernel_t *k;
  uint64_t total = 1;
  uint32_t i;
  if (l->kernel >= v->out->kernel_count)
    return dlc_invalid(v,
                       "launch %" PRIu32 ": kernel %" PRIu32
                       " is out of range (%" PRIu32 " kernels)",
                       index, l->kernel, v->out->kernel_count);
  k = &v->out->kernels[l->kernel];
  if (l->binding_count != k->binding_count)
    return dlc_invalid(v,
                       "launch %" PRIu32 ": binding_count %" PRIu32
                       " but kernel '%s' takes %" PRIu32,
                       index, l->binding_count, v->out->strings + k->name,
                       k->binding_count);
  if (!dlc_range_ok(l->binding_begin, l->binding_count, v->out->binding_count))
    return dlc_invalid(v,
                       "launch %" PRIu32 ": bindings [%" PRIu32 ", +%" PRIu32
                       ") exceed the %" PRIu32 " BINDINGS entries",
                       index, l->binding_begin, l->binding_count,
                       v->out->binding_count);
  for (i = 0; i < 3; ++i) {
    if (l->grid[i] == 0)
      return dlc_invalid(v, "launch %" PRIu32 ": grid[%" PRIu32 "] is 0", index,
                         i);
    total *= l->grid[i];
    if (total > UINT32_MAX)
      return dlc_invalid(v,
                         "launch %" PRIu32 ": grid %" PRIu32 "x%" PRIu32
                         "x%" PRIu32 " has more than 2^32-1 workgroups",
                         index, l->grid[0], l->grid[1], l->grid[2]);
  }
  return v->kernel_limits ? dlc_check_launch_limits(v, index) : DLC_OK;
}

static dlc_status_t dlc_check_io(dlc_validator_t *v) {
  const dlc_artifact_t *a = v->out;
  uint32_t count = a->model->input_count + a->model->output_count;
  uint32_t i;
  for (i = 0; i < count; ++i) {
    uint32_t t = a->inputs[i];
    const char *what = i < a->model->input_count ? "input" : "output";
    uint32_t which = i < a->model->input_count ? i : i - a->model->input_count;
    if (t >= a->tensor_count)
      return dlc_invalid(v,
                         "%s %" PRIu32 ": tensor %" PRIu32
                         " is out of range (%" PRIu32 " tensors)",
                         what, which, t, a->tensor_count);
    if (a->tensors[t].storage != DLCX_STORAGE_ARENA)
      return dlc_invalid(v,
                         "%s %" PRIu32 " ('%s'): tensor %" PRIu32
                         " is a constant, not in the arena",
                         what, which, a->strings + a->tensors[t].name, t);
  }
  for (i = 0; i < a->tensor_count; ++i) {
    uint32_t k = 0;
    if (!(a->tensors[i].flags & DLCX_TENSOR_INPUT_REUSED))
      continue;
    while (k < a->model->input_count && a->inputs[k] != i)
      ++k;
    if (k == a->model->input_count)
      return dlc_invalid(v,
                         "tensor %" PRIu32 " ('%s'): flag INPUT_REUSED on a "
                         "tensor that is no model input",
                         i, a->strings + a->tensors[i].name);
  }
  return DLC_OK;
}

dlc_status_t dlc_artifact_validate(const uint8_t *data, uint64_t size,
                                   dlc_artifact_t *out_artifact,
                                   dlc_message_t *message) {
  const dlcx_section_t *by_kind[DLC_SECTION_KIND_MAX + 1];
  const dlcx_section_t *s;
  dlc_validator_t v;
  dlc_artifact_t *a = out_artifact;
  dlc_status_t status;
  uint32_t io_count = 0, model_count = 0, i;

  memset(a, 0, sizeof(*a));
  memset((void *)by_kind, 0, sizeof(by_kind));
  memset(&v, 0, sizeof(v));
  v.data = data;
  v.size = size;
  v.message = message;
  v.strings_limit = 0;
  v.out = a;
  if (!dlc_host_is_little_endian())
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "artifacts are little-endian; this runtime does "
                           "not byte-swap them on a big-endian host");

  if ((status = dlc_check_header(&v)) != DLC_OK ||
      (status = dlc_check_sections(&v, by_kind)) != DLC_OK)
    return status;

  a->data = data;
  a->size = size;
  s = by_kind[DLCX_SECTION_STRINGS];
  a->strings = (const char *)(data + s->offset);
  /* Everything before the last NUL is terminated by it or an earlier one. */
  for (v.strings_limit = s->size;
       v.strings_limit > 0 && a->strings[v.strings_limit - 1] != '\0';
       --v.strings_limit) {
  }
  if ((s = by_kind[DLCX_SECTION_CODE]) != NULL) {
    a->code = data + s->offset;
    a->code_size = s->size;
  }
  if ((s = by_kind[DLCX_SECTION_CONSTANTS]) != NULL) {
    a->constants = data + s->offset;
    a->constants_size = s->size;
  }
  /* The feature bit is what drivers test; the section must agree with it. */
  s = by_kind[DLCX_SECTION_CUBIN];
  if (!s != !(a->header->target_features & DLCX_FEATURE_CUDA_CUBIN))
    return dlc_invalid(&v, "%s",
                       s ? "a CUBIN section, but target_features lacks "
                           "DLCX_FEATURE_CUDA_CUBIN"
                         : "target_features has DLCX_FEATURE_CUDA_CUBIN, but "
                           "the CUBIN section is missing");
  if (s && a->header->target != DLCX_TARGET_CUDA)
    return dlc_invalid(&v, "a CUBIN section in a %s artifact",
                       dlc_target_name(a->header->target));
  if (s) {
    a->cubin = data + s->offset;
    a->cubin_size = s->size;
  }
  if ((s = by_kind[DLCX_SECTION_CPU_CODE_ID]) != NULL) {
    if (a->header->target != DLCX_TARGET_CPU)
      return dlc_invalid(&v, "a CPU_CODE_ID section in a %s artifact",
                         dlc_target_name(a->header->target));
    if (a->header->version_minor < 3)
      return dlc_invalid(&v,
                         "a CPU_CODE_ID section in a version 1.%u artifact "
                         "(it exists since 1.3)",
                         (unsigned)a->header->version_minor);
    if (s->size != sizeof(uint64_t))
      return dlc_invalid(
          &v, "CPU_CODE_ID section is %" PRIu64 " bytes, expected 8", s->size);
    memcpy(&a->cpu_code_id, data + s->offset, sizeof(uint64_t));
    a->has_cpu_code_id = 1;
  }

  s = by_kind[DLCX_SECTION_MODEL];
  if ((status = dlc_section_entries(&v, s, sizeof(dlcx_model_t),
                                    &model_count)) != DLC_OK)
    return status;
  if (model_count != 1)
    return dlc_invalid(
        &v, "MODEL section holds %" PRIu32 " entries, expected 1", model_count);
  a->model = (const dlcx_model_t *)(data + s->offset);

  s = by_kind[DLCX_SECTION_TENSORS];
  if ((status = dlc_section_entries(&v, s, sizeof(dlcx_tensor_t),
                                    &a->tensor_count)) != DLC_OK)
    return status;
  a->tensors = (const dlcx_tensor_t *)(data + s->offset);
  s = by_kind[DLCX_SECTION_KERNELS];
  if ((status = dlc_section_entries(&v, s, sizeof(dlcx_kernel_t),
                                    &a->kernel_count)) != DLC_OK)
    return status;
  a->kernels = (const dlcx_kernel_t *)(data + s->offset);
  s = by_kind[DLCX_SECTION_LAUNCHES];
  if ((status = dlc_section_entries(&v, s, sizeof(dlcx_launch_t),
                                    &a->launch_count)) != DLC_OK)
    return status;
  a->launches = (const dlcx_launch_t *)(data + s->offset);
  s = by_kind[DLCX_SECTION_BINDINGS];
  if ((status = dlc_section_entries(&v, s, sizeof(uint32_t),
                                    &a->binding_count)) != DLC_OK)
    return status;
  a->bindings = (const uint32_t *)(data + s->offset);
  s = by_kind[DLCX_SECTION_IO];
  if ((status = dlc_section_entries(&v, s, sizeof(uint32_t), &io_count)) !=
      DLC_OK)
    return status;
  a->inputs = (const uint32_t *)(data + s->offset);

  if ((status = dlc_check_model(&v, io_count)) != DLC_OK)
    return status;
  a->outputs = a->inputs + a->model->input_count;

  for (i = 0; i < a->tensor_count; ++i)
    if ((status = dlc_check_tensor(&v, i)) != DLC_OK)
      return status;
  for (i = 0; i < a->kernel_count; ++i)
    if ((status = dlc_check_kernel(&v, i)) != DLC_OK)
      return status;
  if ((status = dlc_check_kernel_limits(&v, by_kind)) != DLC_OK)
    return status;
  for (i = 0; i < a->launch_count; ++i)
    if ((status = dlc_check_launch(&v, i)) != DLC_OK)
      return status;
  for (i = 0; i < a->binding_count; ++i)
    if (a->bindings[i] >= a->tensor_count)
      return dlc_invalid(&v,
                         "binding %" PRIu32 ": tensor %" PRIu32
                         " is out of range (%" PRIu32 " tensors)",
                         i, a->bindings[i], a->tensor_count);
  return dlc_check_io(&v);
}
