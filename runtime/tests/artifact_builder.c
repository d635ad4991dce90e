/*===- artifact_builder.c - write .dlcx artifacts in tests ----------------===*/

#define _POSIX_C_SOURCE 200809L

#include "artifact_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dlc_ab_buffer_t {
  uint8_t *data;
  size_t size;
  size_t capacity;
} dlc_ab_buffer_t;

struct dlc_ab_t {
  dlcx_header_t header;
  dlcx_model_t model;
  dlc_ab_buffer_t strings, tensors, kernels, launches, bindings, code,
      constants, inputs, outputs, cubin, loop_iterations;
  int has_cubin;
  int has_code_id;
  dlc_ab_buffer_t code_id;
};

static void *dlc_ab_check(void *ptr) {
  if (!ptr) {
    fprintf(stderr, "artifact_builder: out of memory\n");
    abort();
  }
  return ptr;
}

static size_t dlc_ab_append(dlc_ab_buffer_t *b, const void *data, size_t size) {
  size_t offset = b->size;
  if (b->size + size > b->capacity) {
    size_t capacity = b->capacity ? b->capacity : 256;
    while (capacity < b->size + size)
      capacity *= 2;
    b->data = (uint8_t *)dlc_ab_check(realloc(b->data, capacity));
    b->capacity = capacity;
  }
  if (size)
    memcpy(b->data + b->size, data, size);
  b->size += size;
  return offset;
}

static void dlc_ab_pad(dlc_ab_buffer_t *b, size_t alignment) {
  static const uint8_t zeros[DLCX_ALIGNMENT];
  size_t pad = (alignment - b->size % alignment) % alignment;
  dlc_ab_append(b, zeros, pad);
}

dlc_ab_t *dlc_ab_create(uint32_t target, uint64_t target_features) {
  dlc_ab_t *b = (dlc_ab_t *)dlc_ab_check(calloc(1, sizeof(dlc_ab_t)));
  b->header.target = target;
  b->header.target_features = target_features;
  /* String 0 is the empty string, so a zeroed reference is valid. */
  dlc_ab_append(&b->strings, "", 1);
  b->model.name = dlc_ab_string(b, "test_graph");
  b->model.producer = dlc_ab_string(b, "dlc artifact_builder");
  return b;
}

void dlc_ab_destroy(dlc_ab_t *b) {
  dlc_ab_buffer_t *buffers[] = {
      &b->strings,  &b->tensors, &b->kernels,         &b->launches,
      &b->bindings, &b->code,    &b->constants,       &b->inputs,
      &b->outputs,  &b->cubin,   &b->loop_iterations, &b->code_id};
  size_t i;
  for (i = 0; i < sizeof(buffers) / sizeof(buffers[0]); ++i)
    free(buffers[i]->data);
  free(b);
}

uint32_t dlc_ab_string(dlc_ab_t *b, const char *text) {
  return (uint32_t)dlc_ab_append(&b->strings, text, strlen(text) + 1);
}

static uint64_t dlc_ab_tensor_size(uint32_t dtype, uint32_t rank,
                                   const int64_t *dims) {
  uint64_t count = 1, bits;
  uint32_t i;
  for (i = 0; i < rank; ++i)
    count *= (uint64_t)dims[i];
  /* Unknown dtypes (corrupt artifacts the tests build) as 4 bytes. */
  bits = dlcx_dtype_bits(dtype);
  if (!bits)
    bits = 32;
  return (count * bits + 7) / 8;
}

static uint32_t dlc_ab_tensor(dlc_ab_t *b, const char *name, uint32_t dtype,
                              uint32_t storage, uint32_t rank,
                              const int64_t *dims, uint64_t offset) {
  dlcx_tensor_t t;
  memset(&t, 0, sizeof(t));
  t.name = dlc_ab_string(b, name);
  t.dtype = dtype;
  t.storage = storage;
  t.rank = rank;
  t.offset = offset;
  t.size = dlc_ab_tensor_size(dtype, rank, dims);
  if (rank)
    memcpy(t.dims, dims, rank * sizeof(int64_t));
  t.quant_axis = -1;
  return (uint32_t)(dlc_ab_append(&b->tensors, &t, sizeof(t)) / sizeof(t));
}

uint32_t dlc_ab_arena_tensor(dlc_ab_t *b, const char *name, uint32_t dtype,
                             uint32_t rank, const int64_t *dims) {
  uint64_t offset = b->model.arena_size;
  uint64_t size = dlc_ab_tensor_size(dtype, rank, dims);
  b->model.arena_size =
      (offset + size + DLCX_ALIGNMENT - 1) / DLCX_ALIGNMENT * DLCX_ALIGNMENT;
  b->model.arena_lower_bound = b->model.arena_size;
  return dlc_ab_tensor(b, name, dtype, DLCX_STORAGE_ARENA, rank, dims, offset);
}

uint32_t dlc_ab_constant_tensor(dlc_ab_t *b, const char *name, uint32_t dtype,
                                uint32_t rank, const int64_t *dims,
                                const void *data) {
  uint64_t offset;
  dlc_ab_pad(&b->constants, DLCX_ALIGNMENT);
  offset = dlc_ab_append(&b->constants, data,
                         (size_t)dlc_ab_tensor_size(dtype, rank, dims));
  return dlc_ab_tensor(b, name, dtype, DLCX_STORAGE_CONSTANT, rank, dims,
                       offset);
}

void dlc_ab_quantize(dlc_ab_t *b, uint32_t tensor, float scale,
                     int32_t zero_point, int32_t axis, const float *scales,
                     const int32_t *zero_points) {
  dlcx_tensor_t *t = (dlcx_tensor_t *)b->tensors.data + tensor;
  t->scale = scale;
  t->zero_point = zero_point;
  t->quant_axis = axis;
  if (axis >= 0) {
    size_t channels = (size_t)t->dims[axis];
    dlc_ab_pad(&b->constants, DLCX_ALIGNMENT);
    t->quant_params =
        dlc_ab_append(&b->constants, scales, channels * sizeof(float));
    dlc_ab_append(&b->constants, zero_points, channels * sizeof(int32_t));
  }
}

uint64_t dlc_ab_code(dlc_ab_t *b, const void *data, uint64_t size) {
  dlc_ab_pad(&b->code, 16);
  return dlc_ab_append(&b->code, data, (size_t)size);
}

uint32_t dlc_ab_kernel(dlc_ab_t *b, const char *name, uint32_t code_format,
                       uint64_t code_offset, uint64_t code_size,
                       uint32_t binding_count) {
  dlcx_kernel_t k;
  memset(&k, 0, sizeof(k));
  k.name = dlc_ab_string(b, name);
  k.code_format = code_format;
  k.code_offset = code_offset;
  k.code_size = code_size;
  k.binding_count = binding_count;
  k.workgroup_size[0] = k.workgroup_size[1] = k.workgroup_size[2] = 1;
  return (uint32_t)(dlc_ab_append(&b->kernels, &k, sizeof(k)) / sizeof(k));
}

void dlc_ab_kernel_loops(dlc_ab_t *b, uint32_t kernel, uint32_t iterations) {
  static const uint32_t zero = 0;
  while (b->loop_iterations.size <= kernel * sizeof(uint32_t))
    dlc_ab_append(&b->loop_iterations, &zero, sizeof(zero));
  ((uint32_t *)b->loop_iterations.data)[kernel] = iterations;
}

void dlc_ab_kernel_workgroup(dlc_ab_t *b, uint32_t kernel, uint32_t x,
                             uint32_t y, uint32_t z) {
  dlcx_kernel_t *k = (dlcx_kernel_t *)b->kernels.data + kernel;
  k->workgroup_size[0] = x;
  k->workgroup_size[1] = y;
  k->workgroup_size[2] = z;
}

void dlc_ab_cpu_scratch(dlc_ab_t *b, uint32_t bytes) {
  b->model.cpu_scratch_size = bytes;
}

void dlc_ab_target_sm(dlc_ab_t *b, uint32_t sm) { b->header.target_sm = sm; }

void dlc_ab_cubin(dlc_ab_t *b, const void *data, uint64_t size) {
  dlc_ab_append(&b->cubin, data, (size_t)size);
  b->has_cubin = 1;
  b->header.target_features |= DLCX_FEATURE_CUDA_CUBIN;
}

void dlc_ab_cpu_code_id(dlc_ab_t *b, const void *data, uint64_t size) {
  dlc_ab_append(&b->code_id, data, (size_t)size);
  b->has_code_id = 1;
}

void dlc_ab_launch(dlc_ab_t *b, uint32_t kernel, const uint32_t *tensors,
                   uint32_t tensor_count, uint32_t gx, uint32_t gy,
                   uint32_t gz) {
  dlcx_launch_t l;
  memset(&l, 0, sizeof(l));
  l.kernel = kernel;
  l.binding_begin = (uint32_t)(dlc_ab_append(&b->bindings, tensors,
                                             tensor_count * sizeof(uint32_t)) /
                               sizeof(uint32_t));
  l.binding_count = tensor_count;
  l.grid[0] = gx;
  l.grid[1] = gy;
  l.grid[2] = gz;
  dlc_ab_append(&b->launches, &l, sizeof(l));
}

void dlc_ab_input(dlc_ab_t *b, uint32_t tensor) {
  dlc_ab_append(&b->inputs, &tensor, sizeof(tensor));
  ++b->model.input_count;
}

void dlc_ab_output(dlc_ab_t *b, uint32_t tensor) {
  dlc_ab_append(&b->outputs, &tensor, sizeof(tensor));
  ++b->model.output_count;
}

/* KERNEL_LIMITS and KERNEL_ARGS as the compiler writes them: each kernel's
 * grid and buffer sizes are those of its first launch (1x1x1 and zeros for
 * a kernel no launch runs); loop iterations as dlc_ab_kernel_loops set
 * them (0 otherwise). */
static void dlc_ab_kernel_limits(const dlc_ab_t *b, dlc_ab_buffer_t *grids,
                                 dlc_ab_buffer_t *args) {
  const dlcx_kernel_t *kernels = (const dlcx_kernel_t *)b->kernels.data;
  const dlcx_launch_t *launches = (const dlcx_launch_t *)b->launches.data;
  const uint32_t *bindings = (const uint32_t *)b->bindings.data;
  const dlcx_tensor_t *tensors = (const dlcx_tensor_t *)b->tensors.data;
  size_t kernel_count = b->kernels.size / sizeof(dlcx_kernel_t);
  size_t launch_count = b->launches.size / sizeof(dlcx_launch_t);
  size_t k, l;
  uint32_t i;
  for (k = 0; k < kernel_count; ++k) {
    dlcx_kernel_limits_t grid = {{1, 1, 1}, 0};
    const dlcx_launch_t *first = NULL;
    for (l = 0; l < launch_count && !first; ++l)
      if (launches[l].kernel == k)
        first = &launches[l];
    if (first)
      memcpy(grid.grid, first->grid, sizeof(grid.grid));
    if ((k + 1) * sizeof(uint32_t) <= b->loop_iterations.size)
      grid.max_loop_iterations = ((const uint32_t *)b->loop_iterations.data)[k];
    dlc_ab_append(grids, &grid, sizeof(grid));
    for (i = 0; i < kernels[k].binding_count; ++i) {
      uint64_t bytes =
          first ? tensors[bindings[first->binding_begin + i]].size : 0;
      dlc_ab_append(args, &bytes, sizeof(bytes));
    }
  }
}

void dlc_ab_finish(dlc_ab_t *b, uint8_t **out_data, size_t *out_size) {
  dlc_ab_buffer_t io = {NULL, 0, 0};
  dlc_ab_buffer_t out = {NULL, 0, 0};
  dlc_ab_buffer_t grids = {NULL, 0, 0}, args = {NULL, 0, 0};
  dlcx_section_t sections[13];
  struct {
    uint32_t kind;
    const dlc_ab_buffer_t *content;
  } parts[13];
  uint32_t count = 11;
  dlc_ab_buffer_t model = {NULL, 0, 0};
  uint32_t i;
  void *aligned;

  memset(sections, 0, sizeof(sections));
  dlc_ab_append(&io, b->inputs.data, b->inputs.size);
  dlc_ab_append(&io, b->outputs.data, b->outputs.size);
  dlc_ab_append(&model, &b->model, sizeof(b->model));
  dlc_ab_kernel_limits(b, &grids, &args);
  parts[0].kind = DLCX_SECTION_MODEL, parts[0].content = &model;
  parts[1].kind = DLCX_SECTION_STRINGS, parts[1].content = &b->strings;
  parts[2].kind = DLCX_SECTION_TENSORS, parts[2].content = &b->tensors;
  parts[3].kind = DLCX_SECTION_KERNELS, parts[3].content = &b->kernels;
  parts[4].kind = DLCX_SECTION_LAUNCHES, parts[4].content = &b->launches;
  parts[5].kind = DLCX_SECTION_BINDINGS, parts[5].content = &b->bindings;
  parts[6].kind = DLCX_SECTION_IO, parts[6].content = &io;
  parts[7].kind = DLCX_SECTION_KERNEL_LIMITS, parts[7].content = &grids;
  parts[8].kind = DLCX_SECTION_KERNEL_ARGS, parts[8].content = &args;
  parts[9].kind = DLCX_SECTION_CODE, parts[9].content = &b->code;
  parts[10].kind = DLCX_SECTION_CONSTANTS, parts[10].content = &b->constants;
  if (b->has_cubin)
    parts[count].kind = DLCX_SECTION_CUBIN, parts[count++].content = &b->cubin;
  if (b->has_code_id)
    parts[count].kind = DLCX_SECTION_CPU_CODE_ID,
    parts[count++].content = &b->code_id;

  b->header.magic = DLCX_MAGIC;
  b->header.version_major = DLCX_VERSION_MAJOR;
  b->header.version_minor = DLCX_VERSION_MINOR;
  b->header.header_size = sizeof(dlcx_header_t);
  b->header.section_count = count;
  b->header.section_table_offset = sizeof(dlcx_header_t);
  dlc_ab_append(&out, &b->header, sizeof(b->header));
  dlc_ab_append(&out, sections, count * sizeof(dlcx_section_t));
  for (i = 0; i < count; ++i) {
    dlc_ab_pad(&out, DLCX_ALIGNMENT);
    sections[i].kind = parts[i].kind;
    sections[i].offset = out.size;
    sections[i].size = parts[i].content->size;
    dlc_ab_append(&out, parts[i].content->data, parts[i].content->size);
  }
  memcpy(out.data + sizeof(dlcx_header_t), sections,
         count * sizeof(dlcx_section_t));
  ((dlcx_header_t *)out.data)->file_size = out.size;
  dlc_ab_reseal(out.data, out.size);

  if (posix_memalign(&aligned, DLCX_ALIGNMENT, out.size ? out.size : 1) != 0)
    dlc_ab_check(NULL);
  memcpy(aligned, out.data, out.size);
  *out_data = (uint8_t *)aligned;
  *out_size = out.size;
  free(out.data);
  free(io.data);
  free(model.data);
  free(grids.data);
  free(args.data);
}

void dlc_ab_free(uint8_t *data) { free(data); }

void dlc_ab_reseal(uint8_t *data, size_t size) {
  uint64_t checksum =
      dlcx_checksum(data + DLCX_CHECKSUM_START, size - DLCX_CHECKSUM_START);
  memcpy(data + offsetof(dlcx_header_t, checksum), &checksum, sizeof(checksum));
}

dlcx_section_t *dlc_ab_section(uint8_t *data, uint32_t kind) {
  dlcx_header_t *h = (dlcx_header_t *)data;
  dlcx_section_t *s = (dlcx_section_t *)(data + h->section_table_offset);
  uint32_t i;
  for (i = 0; i < h->section_count; ++i)
    if (s[i].kind == kind)
      return &s[i];
  return NULL;
}

int dlc_ab_write_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  int ok;
  if (!f)
    return 0;
  ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

uint8_t *dlc_ab_read_file(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  uint8_t *data;
  long size;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
      fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  data = (uint8_t *)malloc(size ? (size_t)size : 1);
  if (data && fread(data, 1, (size_t)size, f) != (size_t)size) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *out_size = (size_t)size;
  return data;
}
