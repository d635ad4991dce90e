/*===- tensor_file.c - tensors from and to .npy and .pb files -------------===*/

#include "tensor_file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*===--- dtypes ----------------------------------------------------------===*/

/* Bytes per element in a .npy file and in host tensors: 4-bit types are
 * unpacked there, one element per byte, as ml_dtypes holds them; 0 for an
 * unknown dtype. */
static unsigned dlc_npy_bytes(uint32_t dtype) {
  uint32_t bits = dlcx_dtype_bits(dtype);
  return bits == 4 ? 1u : bits / 8;
}

/* The .npy descr of `dtype` (into `out`, 4 bytes): '<' or '|' (one byte),
 * then NumPy's kind and size. bf16 and the 8- and 4-bit floats have no
 * NumPy type: their raw bits, '<u2' or '|u1' (viewable with ml_dtypes). */
static const char *dlc_npy_descr(uint32_t dtype, char out[4]) {
  unsigned bytes = dlc_npy_bytes(dtype);
  const dlcx_dtype_info_t *info = dlcx_dtype_info(dtype);
  char kind = info ? info->kind : '?';
  if (dtype == DLCX_DTYPE_BF16 || dlcx_dtype_is_minifloat(dtype))
    kind = 'u';
  out[0] = bytes == 1 ? '|' : '<';
  out[1] = kind;
  out[2] = (char)('0' + bytes);
  out[3] = '\0';
  return out;
}

const char *dlc_tensor_dtype_name(uint32_t dtype) {
  const dlcx_dtype_info_t *info = dlcx_dtype_info(dtype);
  return info ? info->long_name : "unknown";
}

int dlc_tensor_dtype_is_float(uint32_t dtype) {
  const dlcx_dtype_info_t *info = dlcx_dtype_info(dtype);
  return info && info->kind == 'f';
}

static int dlc_is_nibble(uint32_t dtype) { return dlcx_dtype_bits(dtype) == 4; }

/* The 4 bits of element `i` of a 4-bit tensor. */
static unsigned dlc_nibble(const dlc_host_tensor_t *t, uint64_t i) {
  return (t->data[i / 2] >> (4 * (i % 2))) & 0xfu;
}

/* The value of `code` in 8- or 4-bit float format `dtype`: sign, exponent
 * and mantissa bits, NaN and infinity as each format defines them (the
 * FNUZ formats: NaN is -0's pattern; E4M3FN: all ones; E5M2: IEEE-like;
 * E2M1: no NaN or infinity). */
static double dlc_minifloat_value(uint32_t dtype, unsigned code) {
  unsigned bits = 8, mantissa = 3, exponent, fraction, magnitude;
  int bias = 7;
  double value;
  /* E8M0: an exponent alone, no sign or mantissa; 0xff is NaN. */
  if (dtype == DLCX_DTYPE_F8E8M0)
    return code == 0xff ? NAN : ldexp(1.0, (int)code - 127);
  switch (dtype) {
  case DLCX_DTYPE_F8E4M3FNUZ:
    bias = 8;
    break;
  case DLCX_DTYPE_F8E5M2:
    mantissa = 2;
    bias = 15;
    break;
  case DLCX_DTYPE_F8E5M2FNUZ:
    mantissa = 2;
    bias = 16;
    break;
  case DLCX_DTYPE_F4E2M1:
    bits = 4;
    mantissa = 1;
    bias = 1;
    break;
  default:
    break;
  }
  magnitude = code & ((1u << (bits - 1)) - 1);
  exponent = magnitude >> mantissa;
  fraction = magnitude & ((1u << mantissa) - 1);
  if ((dtype == DLCX_DTYPE_F8E4M3FNUZ || dtype == DLCX_DTYPE_F8E5M2FNUZ) &&
      code == 0x80)
    return NAN;
  if (dtype == DLCX_DTYPE_F8E4M3FN && magnitude == 0x7f)
    return NAN;
  if (dtype == DLCX_DTYPE_F8E5M2 && exponent == 31)
    value = fraction ? NAN : INFINITY;
  else if (exponent == 0)
    value = ldexp((double)fraction, 1 - bias - (int)mantissa);
  else
    value = ldexp(1.0 + ldexp((double)fraction, -(int)mantissa),
                  (int)exponent - bias);
  return code >> (bits - 1) ? -value : value;
}

/* The code of `dtype` nearest to `value` (ties to the even code), as the
 * tool needs it for random inputs: a search over the 256 or 16 codes. */
static unsigned dlc_minifloat_code(uint32_t dtype, double value) {
  unsigned codes = dlcx_dtype_bits(dtype) == 4 ? 16 : 256, code, best = 0;
  double best_error = INFINITY;
  for (code = 0; code < codes; ++code) {
    double v = dlc_minifloat_value(dtype, code);
    double error = fabs(v - value);
    if (!isnan(v) && !isinf(v) &&
        (error < best_error || (error == best_error && (code & 1) == 0))) {
      best = code;
      best_error = error;
    }
  }
  return best;
}

static int dlc_fail(char *error, size_t error_size, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int dlc_fail(char *error, size_t error_size, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(error, error_size, format, args);
  va_end(args);
  return 0;
}

void dlc_tensor_format_shape(uint32_t rank, const int64_t *dims, char *out,
                             size_t out_size) {
  size_t used = 0;
  uint32_t i;
  out[0] = '\0';
  used += (size_t)snprintf(out, out_size, "[");
  for (i = 0; i < rank && used < out_size; ++i)
    used += (size_t)snprintf(out + used, out_size - used, "%s%lld",
                             i ? ", " : "", (long long)dims[i]);
  if (used < out_size)
    snprintf(out + used, out_size - used, "]");
}

int dlc_tensor_alloc(dlc_host_tensor_t *out, uint32_t dtype, uint32_t rank,
                     const int64_t *dims) {
  unsigned bytes = dlc_npy_bytes(dtype);
  uint64_t count = 1, size;
  uint32_t i;
  memset(out, 0, sizeof(*out));
  if (!bytes || rank > DLCX_MAX_RANK)
    return 0;
  for (i = 0; i < rank; ++i) {
    if (dims[i] < 0 || (dims[i] && count > UINT64_MAX / (uint64_t)dims[i]))
      return 0;
    count *= (uint64_t)dims[i];
    out->dims[i] = dims[i];
  }
  if (dlc_is_nibble(dtype))
    size = count / 2 + count % 2;
  else if (count > UINT64_MAX / bytes)
    return 0;
  else
    size = count * bytes;
  if (size > (uint64_t)(size_t)-1 / 2)
    return 0;
  out->dtype = dtype;
  out->rank = rank;
  out->count = count;
  out->size = (size_t)size;
  out->data = (uint8_t *)calloc(1, out->size ? out->size : 1);
  return out->data != NULL;
}

void dlc_tensor_free(dlc_host_tensor_t *tensor) {
  free(tensor->data);
  tensor->data = NULL;
}

/*===--- elements --------------------------------------------------------===*/

static double dlc_half_to_double(uint16_t h) {
  unsigned exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double value;
  if (exponent == 0)
    value = ldexp((double)mantissa, -24);
  else if (exponent == 31)
    value = mantissa ? NAN : INFINITY;
  else
    value = ldexp((double)(mantissa | 0x400), (int)exponent - 25);
  return (h & 0x8000) ? -value : value;
}

/* Round to nearest even, as every IEEE conversion does. */
static uint16_t dlc_float_to_half(float f) {
  uint32_t x, sign, exponent, mantissa, half, rest, shift;
  int e;
  memcpy(&x, &f, sizeof(x));
  sign = (x >> 16) & 0x8000u;
  exponent = (x >> 23) & 0xffu;
  mantissa = x & 0x7fffffu;
  if (exponent == 0xff)
    return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  e = (int)exponent - 127 + 15;
  if (e >= 31)
    return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10)
      return (uint16_t)sign;
    mantissa |= 0x800000u;
    shift = (uint32_t)(14 - e);
    half = mantissa >> shift;
    rest = mantissa & ((1u << shift) - 1);
    if (rest > (1u << (shift - 1)) ||
        (rest == (1u << (shift - 1)) && (half & 1)))
      ++half;
    return (uint16_t)(sign | half);
  }
  half = ((uint32_t)e << 10) | (mantissa >> 13);
  rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half; /* a carry into the exponent is the correct rounding */
  return (uint16_t)(sign | half);
}

static uint16_t dlc_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof(x));
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static uint64_t dlc_load(const uint8_t *p, unsigned bytes) {
  uint64_t value = 0;
  while (bytes-- > 0)
    value = value << 8 | p[bytes];
  return value;
}

static void dlc_store(uint8_t *p, unsigned bytes, uint64_t value) {
  unsigned i;
  for (i = 0; i < bytes; ++i)
    p[i] = (uint8_t)(value >> (8 * i));
}

static int64_t dlc_sign_extend(uint64_t value, unsigned bits) {
  uint64_t sign = (uint64_t)1 << (bits - 1);
  return (int64_t)((value ^ sign) - sign);
}

double dlc_tensor_get(const dlc_host_tensor_t *t, uint64_t i) {
  const uint8_t *p;
  if (dlcx_dtype_is_minifloat(t->dtype))
    return dlc_minifloat_value(
        t->dtype, dlc_is_nibble(t->dtype) ? dlc_nibble(t, i) : t->data[i]);
  if (dlc_is_nibble(t->dtype)) {
    unsigned nibble = dlc_nibble(t, i);
    return t->dtype == DLCX_DTYPE_I4 ? (double)dlc_sign_extend(nibble, 4)
                                     : (double)nibble;
  }
  p = t->data + i * dlc_npy_bytes(t->dtype);
  switch (t->dtype) {
  case DLCX_DTYPE_F32: {
    float f;
    memcpy(&f, p, sizeof(f));
    return f;
  }
  case DLCX_DTYPE_F64: {
    double d;
    memcpy(&d, p, sizeof(d));
    return d;
  }
  case DLCX_DTYPE_F16:
    return dlc_half_to_double((uint16_t)dlc_load(p, 2));
  case DLCX_DTYPE_BF16: {
    uint32_t bits = (uint32_t)dlc_load(p, 2) << 16;
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
  }
  case DLCX_DTYPE_BOOL:
    return p[0] != 0;
  case DLCX_DTYPE_I8:
    return (double)dlc_sign_extend(p[0], 8);
  case DLCX_DTYPE_I16:
    return (double)dlc_sign_extend(dlc_load(p, 2), 16);
  case DLCX_DTYPE_I32:
    return (double)dlc_sign_extend(dlc_load(p, 4), 32);
  case DLCX_DTYPE_I64:
    return (double)(int64_t)dlc_load(p, 8);
  default:
    return (double)dlc_load(p, dlc_npy_bytes(t->dtype));
  }
}

void dlc_tensor_set(dlc_host_tensor_t *t, uint64_t i, double value) {
  uint8_t *p;
  if (dlcx_dtype_is_minifloat(t->dtype) && !dlc_is_nibble(t->dtype)) {
    t->data[i] = (uint8_t)dlc_minifloat_code(t->dtype, value);
    return;
  }
  if (dlc_is_nibble(t->dtype)) {
    unsigned shift = 4 * (unsigned)(i % 2);
    unsigned nibble = dlcx_dtype_is_minifloat(t->dtype)
                          ? dlc_minifloat_code(t->dtype, value)
                          : (unsigned)((int64_t)value & 0xf);
    t->data[i / 2] =
        (uint8_t)((t->data[i / 2] & ~(0xfu << shift)) | nibble << shift);
    return;
  }
  p = t->data + i * dlc_npy_bytes(t->dtype);
  switch (t->dtype) {
  case DLCX_DTYPE_F32: {
    float f = (float)value;
    memcpy(p, &f, sizeof(f));
    return;
  }
  case DLCX_DTYPE_F64:
    memcpy(p, &value, sizeof(value));
    return;
  case DLCX_DTYPE_F16:
    dlc_store(p, 2, dlc_float_to_half((float)value));
    return;
  case DLCX_DTYPE_BF16:
    dlc_store(p, 2, dlc_float_to_bf16((float)value));
    return;
  case DLCX_DTYPE_BOOL:
    p[0] = value != 0.0;
    return;
  case DLCX_DTYPE_U64:
    dlc_store(p, 8, (uint64_t)value);
    return;
  default:
    dlc_store(p, dlc_npy_bytes(t->dtype), (uint64_t)(int64_t)value);
    return;
  }
}

int dlc_tensor_same_bits(const dlc_host_tensor_t *a, const dlc_host_tensor_t *b,
                         uint64_t i) {
  unsigned bytes;
  if (dlc_is_nibble(a->dtype))
    return dlc_nibble(a, i) == dlc_nibble(b, i);
  bytes = dlc_npy_bytes(a->dtype);
  if (a->dtype == DLCX_DTYPE_BOOL)
    return (a->data[i] != 0) == (b->data[i] != 0);
  return memcmp(a->data + i * bytes, b->data + i * bytes, bytes) == 0;
}

/*===--- .npy ------------------------------------------------------------===*/

/* The value after `'key':` in a .npy header dict, or NULL. */
static const char *dlc_npy_value(const char *header, const char *key) {
  char quoted[32];
  const char *p;
  snprintf(quoted, sizeof(quoted), "'%s'", key);
  p = strstr(header, quoted);
  if (!p) {
    snprintf(quoted, sizeof(quoted), "\"%s\"", key);
    p = strstr(header, quoted);
  }
  if (!p)
    return NULL;
  p += strlen(quoted);
  while (isspace((unsigned char)*p))
    ++p;
  if (*p != ':')
    return NULL;
  ++p;
  while (isspace((unsigned char)*p))
    ++p;
  return p;
}

/* The dtype a .npy descr stands for (bf16 only as '<V2'), or 0. */
static uint32_t dlc_npy_dtype(const char *descr, size_t length) {
  if (length != 3)
    return 0;
  /* One-byte types carry '|'; others must be little-endian ('<'), or native
   * ('='), which is little-endian wherever this runs. */
  if (descr[0] != '<' && descr[0] != '|' && descr[0] != '=')
    return 0;
  if (descr[1] == 'V' && descr[2] == '2')
    return DLCX_DTYPE_BF16;
  if (descr[2] < '1' || descr[2] > '8')
    return 0;
  return dlcx_dtype_find(descr[1], 8u * (uint32_t)(descr[2] - '0'));
}

static int dlc_npy_read(const char *path, const uint8_t *bytes, size_t size,
                        dlc_host_tensor_t *out, char *error,
                        size_t error_size) {
  size_t header_length, header_start;
  const char *value, *end;
  char *header;
  int64_t dims[DLCX_MAX_RANK];
  uint32_t rank = 0, dtype;
  char descr[16];
  size_t descr_length;

  if (size < 10)
    return dlc_fail(error, error_size, "%s: truncated .npy header", path);
  if (bytes[6] == 1) {
    header_length = (size_t)dlc_load(bytes + 8, 2);
    header_start = 10;
  } else if (bytes[6] == 2 || bytes[6] == 3) {
    if (size < 12)
      return dlc_fail(error, error_size, "%s: truncated .npy header", path);
    header_length = (size_t)dlc_load(bytes + 8, 4);
    header_start = 12;
  } else {
    return dlc_fail(error, error_size,
                    "%s: .npy format version %u.%u is "
                    "not supported (1.0, 2.0, 3.0 are)",
                    path, bytes[6], bytes[7]);
  }
  if (header_length > size - header_start)
    return dlc_fail(error, error_size, "%s: truncated .npy header", path);
  header = (char *)malloc(header_length + 1);
  if (!header)
    return dlc_fail(error, error_size, "out of memory");
  memcpy(header, bytes + header_start, header_length);
  header[header_length] = '\0';

  value = dlc_npy_value(header, "descr");
  if (!value || (*value != '\'' && *value != '"') ||
      !(end = strchr(value + 1, *value))) {
    free(header);
    return dlc_fail(error, error_size, "%s: .npy header has no descr", path);
  }
  descr_length = (size_t)(end - value - 1);
  snprintf(descr, sizeof(descr), "%.*s",
           (int)(descr_length < 15 ? descr_length : 15), value + 1);
  dtype = dlc_npy_dtype(descr, descr_length);
  if (!dtype) {
    free(header);
    return dlc_fail(error, error_size,
                    "%s: .npy dtype '%s' is not supported (little-endian "
                    "numbers and bool only)",
                    path, descr);
  }
  value = dlc_npy_value(header, "fortran_order");
  if (!value || strncmp(value, "False", 5) != 0) {
    free(header);
    return dlc_fail(error, error_size,
                    "%s: only C-order .npy files are supported "
                    "(save with np.ascontiguousarray)",
                    path);
  }
  value = dlc_npy_value(header, "shape");
  if (!value || *value != '(') {
    free(header);
    return dlc_fail(error, error_size, "%s: .npy header has no shape", path);
  }
  ++value;
  for (;;) {
    char *after;
    long long dim;
    while (isspace((unsigned char)*value) || *value == ',')
      ++value;
    if (*value == ')')
      break;
    errno = 0;
    dim = strtoll(value, &after, 10);
    if (after == value || errno || dim < 0 || rank == DLCX_MAX_RANK) {
      free(header);
      return dlc_fail(error, error_size,
                      "%s: bad .npy shape (rank at most %u, dims >= 0)", path,
                      (unsigned)DLCX_MAX_RANK);
    }
    dims[rank++] = dim;
    value = after;
    if (*value == 'L')
      ++value;
  }
  free(header);

  if (!dlc_tensor_alloc(out, dtype, rank, dims))
    return dlc_fail(error, error_size, "%s: tensor too large", path);
  header_start += header_length;
  if (size - header_start != out->size) {
    size_t expected = out->size;
    dlc_tensor_free(out);
    return dlc_fail(
        error, error_size, "%s: .npy data is %lu bytes, its header says %lu",
        path, (unsigned long)(size - header_start), (unsigned long)expected);
  }
  memcpy(out->data, bytes + header_start, out->size);
  return 1;
}

int dlc_tensor_write_npy(const char *path, const dlc_host_tensor_t *t,
                         char *error, size_t error_size) {
  char header[512], shape[256], descr[4];
  size_t length, used = 0, padded;
  uint32_t i;
  FILE *file;
  int ok;

  shape[0] = '\0';
  for (i = 0; i < t->rank; ++i)
    used += (size_t)snprintf(shape + used, sizeof(shape) - used, "%lld,%s",
                             (long long)t->dims[i], i + 1 < t->rank ? " " : "");
  /* A one-element tuple keeps its comma: "(5,)". */
  if (t->rank > 1)
    shape[used - 1] = '\0';
  length = (size_t)snprintf(
      header, sizeof(header),
      "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
      dlc_npy_descr(t->dtype, descr), shape);
  /* Magic, version and length take 10 bytes; pad to 64 with a newline. */
  padded = (10 + length + 1 + 63) / 64 * 64 - 10;
  memset(header + length, ' ', padded - length);
  header[padded - 1] = '\n';

  file = fopen(path, "wb");
  if (!file)
    return dlc_fail(error, error_size, "cannot write '%s': %s", path,
                    strerror(errno));
  ok = fwrite("\x93NUMPY\x01\x00", 1, 8, file) == 8;
  ok = ok && fputc((int)(padded & 0xff), file) != EOF &&
       fputc((int)(padded >> 8), file) != EOF;
  ok = ok && fwrite(header, 1, padded, file) == padded;
  if (dlc_is_nibble(t->dtype)) {
    uint64_t e;
    for (e = 0; ok && e < t->count; ++e)
      ok = fputc(dlcx_dtype_is_minifloat(t->dtype)
                     ? (int)dlc_nibble(t, e)
                     : (int)(uint8_t)(int8_t)dlc_tensor_get(t, e),
                 file) != EOF;
  } else {
    ok = ok && fwrite(t->data, 1, t->size, file) == t->size;
  }
  if (fclose(file) != 0 || !ok)
    return dlc_fail(error, error_size, "cannot write '%s': %s", path,
                    strerror(errno));
  return 1;
}

/*===--- TensorProto ------------------------------------------------------===*
 *
 * Protobuf wire format: a sequence of (varint key = field << 3 | wire type,
 * value). Repeated numeric fields come packed (one length-delimited run) or
 * unpacked (one key per value); a decoder must accept both.
 *===----------------------------------------------------------------------===*/

enum {
  DLC_WIRE_VARINT = 0,
  DLC_WIRE_FIXED64 = 1,
  DLC_WIRE_BYTES = 2,
  DLC_WIRE_FIXED32 = 5
};

typedef struct dlc_pb_t {
  const uint8_t *p;
  const uint8_t *end;
} dlc_pb_t;

static int dlc_pb_varint(dlc_pb_t *pb, uint64_t *out) {
  uint64_t value = 0;
  unsigned shift;
  for (shift = 0; shift < 64 && pb->p < pb->end; shift += 7) {
    uint8_t byte = *pb->p++;
    value |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *out = value;
      return 1;
    }
  }
  return 0;
}

/* Reads one field's key and, for length-delimited ones, its extent. */
static int dlc_pb_field(dlc_pb_t *pb, uint32_t *out_field, uint32_t *out_wire,
                        dlc_pb_t *out_bytes, uint64_t *out_scalar) {
  uint64_t key, length;
  *out_scalar = 0;
  if (!dlc_pb_varint(pb, &key) || key >> 3 == 0 || key >> 3 > 0x1fffffff)
    return 0;
  *out_field = (uint32_t)(key >> 3);
  *out_wire = (uint32_t)(key & 7);
  switch (*out_wire) {
  case DLC_WIRE_VARINT:
    return dlc_pb_varint(pb, out_scalar);
  case DLC_WIRE_FIXED64:
    if (pb->end - pb->p < 8)
      return 0;
    *out_scalar = dlc_load(pb->p, 8);
    pb->p += 8;
    return 1;
  case DLC_WIRE_FIXED32:
    if (pb->end - pb->p < 4)
      return 0;
    *out_scalar = dlc_load(pb->p, 4);
    pb->p += 4;
    return 1;
  case DLC_WIRE_BYTES:
    if (!dlc_pb_varint(pb, &length) || length > (uint64_t)(pb->end - pb->p))
      return 0;
    out_bytes->p = pb->p;
    out_bytes->end = pb->p + length;
    pb->p += length;
    return 1;
  }
  return 0; /* groups (3, 4) and reserved types */
}

/* TensorProto field numbers. */
enum {
  DLC_TP_DIMS = 1,
  DLC_TP_DATA_TYPE = 2,
  DLC_TP_FLOAT_DATA = 4,
  DLC_TP_INT32_DATA = 5,
  DLC_TP_STRING_DATA = 6,
  DLC_TP_INT64_DATA = 7,
  DLC_TP_RAW_DATA = 9,
  DLC_TP_DOUBLE_DATA = 10,
  DLC_TP_UINT64_DATA = 11,
  DLC_TP_EXTERNAL_DATA = 13,
  DLC_TP_DATA_LOCATION = 14
};

/* Which typed field holds the values of `dtype`, and how wide each is. */
static uint32_t dlc_tp_typed_field(uint32_t dtype) {
  switch (dtype) {
  case DLCX_DTYPE_F32:
    return DLC_TP_FLOAT_DATA;
  case DLCX_DTYPE_F64:
    return DLC_TP_DOUBLE_DATA;
  case DLCX_DTYPE_I64:
    return DLC_TP_INT64_DATA;
  case DLCX_DTYPE_U32:
  case DLCX_DTYPE_U64:
    return DLC_TP_UINT64_DATA;
  default:
    return DLC_TP_INT32_DATA;
  }
}

/* Stores typed value number `index` (already decoded to raw bits). */
static void dlc_tp_store(dlc_host_tensor_t *t, uint64_t index, uint64_t bits) {
  if (dlc_is_nibble(t->dtype)) {
    t->data[index] = (uint8_t)bits; /* two elements per int32_data entry */
    return;
  }
  dlc_store(t->data + index * dlc_npy_bytes(t->dtype), dlc_npy_bytes(t->dtype),
            bits);
}

int dlc_tensor_decode_proto(const uint8_t *bytes, size_t size,
                            dlc_host_tensor_t *out, char *error,
                            size_t error_size) {
  dlc_pb_t pb, field_bytes = {NULL, NULL}, raw = {NULL, NULL};
  int64_t dims[DLCX_MAX_RANK];
  uint32_t rank = 0, field, wire, typed;
  uint64_t scalar, dtype = 0, values = 0, expected;
  int have_raw = 0;

  /* Pass 1: shape, type and where the data is. */
  pb.p = bytes;
  pb.end = bytes + size;
  while (pb.p < pb.end) {
    if (!dlc_pb_field(&pb, &field, &wire, &field_bytes, &scalar))
      return dlc_fail(error, error_size, "malformed protobuf");
    if (field == DLC_TP_DIMS && wire == DLC_WIRE_VARINT) {
      if (rank == DLCX_MAX_RANK)
        return dlc_fail(error, error_size, "rank above %u",
                        (unsigned)DLCX_MAX_RANK);
      dims[rank++] = (int64_t)scalar;
    } else if (field == DLC_TP_DIMS && wire == DLC_WIRE_BYTES) {
      while (field_bytes.p < field_bytes.end) {
        if (rank == DLCX_MAX_RANK || !dlc_pb_varint(&field_bytes, &scalar))
          return dlc_fail(error, error_size, "malformed or too many dims");
        dims[rank++] = (int64_t)scalar;
      }
    } else if (field == DLC_TP_DATA_TYPE && wire == DLC_WIRE_VARINT) {
      dtype = scalar;
    } else if (field == DLC_TP_RAW_DATA && wire == DLC_WIRE_BYTES) {
      raw = field_bytes;
      have_raw = 1;
    } else if (field == DLC_TP_EXTERNAL_DATA ||
               (field == DLC_TP_DATA_LOCATION && scalar != 0)) {
      return dlc_fail(error, error_size,
                      "the tensor's data is in an external file, which "
                      "dlc-run does not read");
    } else if (field == DLC_TP_STRING_DATA) {
      return dlc_fail(error, error_size, "string tensors are not supported");
    }
  }
  if (dtype > UINT32_MAX || !dlcx_dtype_bits((uint32_t)dtype))
    return dlc_fail(error, error_size,
                    "TensorProto data_type %llu is not supported",
                    (unsigned long long)dtype);
  if (!dlc_tensor_alloc(out, (uint32_t)dtype, rank, dims))
    return dlc_fail(error, error_size, "bad or too large TensorProto dims");
  if (have_raw) {
    if ((size_t)(raw.end - raw.p) != out->size) {
      unsigned long got = (unsigned long)(raw.end - raw.p);
      dlc_tensor_free(out);
      return dlc_fail(error, error_size,
                      "raw_data is %lu bytes, dims and data_type need %lu", got,
                      (unsigned long)out->size);
    }
    memcpy(out->data, raw.p, out->size);
    return 1;
  }

  /* Pass 2: typed values, packed or one per key. */
  typed = dlc_tp_typed_field((uint32_t)dtype);
  expected = dlc_is_nibble(out->dtype) ? out->size : out->count;
  pb.p = bytes;
  while (pb.p < pb.end) {
    dlc_pb_field(&pb, &field, &wire, &field_bytes, &scalar);
    if (field != typed)
      continue;
    if (wire != DLC_WIRE_BYTES) {
      field_bytes.p = NULL;
      field_bytes.end = NULL;
    }
    do {
      if (field_bytes.p) {
        if (typed == DLC_TP_FLOAT_DATA || typed == DLC_TP_DOUBLE_DATA) {
          unsigned width = typed == DLC_TP_FLOAT_DATA ? 4 : 8;
          if (field_bytes.end - field_bytes.p < (long)width)
            break;
          scalar = dlc_load(field_bytes.p, width);
          field_bytes.p += width;
        } else if (!dlc_pb_varint(&field_bytes, &scalar)) {
          break;
        }
      }
      if (values == expected) {
        dlc_tensor_free(out);
        return dlc_fail(error, error_size, "more values than dims allow (%llu)",
                        (unsigned long long)expected);
      }
      dlc_tp_store(out, values++, scalar);
    } while (field_bytes.p && field_bytes.p < field_bytes.end);
    if (field_bytes.p && field_bytes.p != field_bytes.end) {
      dlc_tensor_free(out);
      return dlc_fail(error, error_size, "malformed packed values");
    }
  }
  if (values != expected) {
    dlc_tensor_free(out);
    return dlc_fail(error, error_size, "%llu values for %llu elements",
                    (unsigned long long)values, (unsigned long long)expected);
  }
  return 1;
}

/*===--- files -----------------------------------------------------------===*/

int dlc_tensor_read_file(const char *path, dlc_host_tensor_t *out, char *error,
                         size_t error_size) {
  FILE *file = fopen(path, "rb");
  uint8_t *bytes;
  long size;
  int ok;
  if (!file)
    return dlc_fail(error, error_size, "cannot open '%s': %s", path,
                    strerror(errno));
  if (fseek(file, 0, SEEK_END) != 0 || (size = ftell(file)) < 0 ||
      fseek(file, 0, SEEK_SET) != 0) {
    fclose(file);
    return dlc_fail(error, error_size, "cannot read '%s'", path);
  }
  bytes = (uint8_t *)malloc(size ? (size_t)size : 1);
  if (!bytes || fread(bytes, 1, (size_t)size, file) != (size_t)size) {
    free(bytes);
    fclose(file);
    return dlc_fail(error, error_size, "cannot read '%s'", path);
  }
  fclose(file);
  if (size >= 6 && memcmp(bytes, "\x93NUMPY", 6) == 0) {
    ok = dlc_npy_read(path, bytes, (size_t)size, out, error, error_size);
  } else {
    char reason[256];
    ok = dlc_tensor_decode_proto(bytes, (size_t)size, out, reason,
                                 sizeof(reason));
    if (!ok)
      dlc_fail(error, error_size,
               "%s: neither a .npy file nor a TensorProto: %s", path, reason);
  }
  free(bytes);
  return ok;
}
