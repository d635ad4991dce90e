/*===- tensor_file.h - tensors from and to .npy and .pb files ----*- C -*-===*
 *
 * What dlc-run reads inputs and references from and writes outputs to:
 * NumPy .npy (format 1.0, 2.0 and 3.0, little-endian, C order) and ONNX
 * TensorProto .pb files as the ONNX backend tests ship them. Data is kept
 * in the artifact's layout (little-endian, i4/u4 packed two per byte).
 *===----------------------------------------------------------------------===*/

#ifndef DLC_RUN_TENSOR_FILE_H
#define DLC_RUN_TENSOR_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "dlc/artifact_format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dlc_host_tensor_t {
  uint32_t dtype; /* dlcx_dtype_t */
  uint32_t rank;
  int64_t dims[DLCX_MAX_RANK];
  uint64_t count; /* elements */
  uint8_t *data;  /* malloc'd */
  size_t size;    /* bytes */
} dlc_host_tensor_t;

/* Reads a .npy or a TensorProto .pb file, told apart by content. On failure
 * returns 0 and writes the reason to `error`. */
int dlc_tensor_read_file(const char *path, dlc_host_tensor_t *out, char *error,
                         size_t error_size);

/* Decodes a serialized TensorProto. */
int dlc_tensor_decode_proto(const uint8_t *bytes, size_t size,
                            dlc_host_tensor_t *out, char *error,
                            size_t error_size);

/* Writes a .npy (format 1.0). i4/u4 become one i1/u1 per element, bf16 its
 * raw bits as <u2. */
int dlc_tensor_write_npy(const char *path, const dlc_host_tensor_t *tensor,
                         char *error, size_t error_size);

void dlc_tensor_free(dlc_host_tensor_t *tensor);

/* Fills `out` for `dtype` and shape: size, count and a zeroed buffer. */
int dlc_tensor_alloc(dlc_host_tensor_t *out, uint32_t dtype, uint32_t rank,
                     const int64_t *dims);

/* "float32", "int8", ...: the names NumPy and ONNX users know. */
const char *dlc_tensor_dtype_name(uint32_t dtype);
int dlc_tensor_dtype_is_float(uint32_t dtype);

/* Element `index` as a double (exact for every integer below 2^53). */
double dlc_tensor_get(const dlc_host_tensor_t *tensor, uint64_t index);
/* Sets element `index` from a double, rounding floats to the dtype. */
void dlc_tensor_set(dlc_host_tensor_t *tensor, uint64_t index, double value);
/* Whether element `index` of two tensors of one dtype has the same bits. */
int dlc_tensor_same_bits(const dlc_host_tensor_t *a, const dlc_host_tensor_t *b,
                         uint64_t index);

/* "[1, 3, 224, 224]" into `out`. */
void dlc_tensor_format_shape(uint32_t rank, const int64_t *dims, char *out,
                             size_t out_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_RUN_TENSOR_FILE_H */
