/*===- dlc-run.c - run, check and measure a .dlcx artifact ----------------===*
 *
 * The command-line face of the runtime: everything it does goes through the
 * public C API, so it doubles as an example of using it. Exit status: 0 on
 * success, 1 when an --expect comparison fails, 2 on any other error.
 *===----------------------------------------------------------------------===*/

#define _XOPEN_SOURCE 700

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "dlc/cuda_driver.h"
#include "dlc/runtime.h"
#include "dlc/vulkan_driver.h"
#include "tensor_file.h"

#define DLC_RUN_VERSION "0.1.0"
#define DLC_RUN_MAX_ARGS 256
#define DLC_EXIT_MISMATCH 1
#define DLC_EXIT_ERROR 2

typedef struct dlc_run_options_t {
  const char *model_path;
  const char *inputs[DLC_RUN_MAX_ARGS]; /* NAME=FILE or FILE */
  int input_count;
  const char *expects[DLC_RUN_MAX_ARGS]; /* NAME=FILE */
  int expect_count;
  const char *output_dir;
  const char *profile_path;
  double rtol, atol;
  unsigned long bench, warmup, threads;
  unsigned long long seed;
  int print_io;
} dlc_run_options_t;

static void dlc_run_usage(FILE *out) {
  fprintf(out,
          "usage: dlc-run MODEL.dlcx [options]\n"
          "\n"
          "Runs a compiled model once (or --bench times) on its target.\n"
          "\n"
          "  --input NAME=FILE    input NAME from FILE (.npy or ONNX "
          "TensorProto .pb)\n"
          "  --input FILE         the next input, by position\n"
          "                       (no inputs: deterministic random ones)\n"
          "  --output-dir DIR     write each output to DIR/<name>.npy\n"
          "  --expect NAME=FILE   compare output NAME with a reference\n"
          "  --rtol R, --atol A   pass when |out-ref| <= A + R*|ref| "
          "(1e-4, 1e-5)\n"
          "  --bench N            time N runs: p50/p90/p99, throughput, "
          "peak RSS\n"
          "  --warmup N           untimed runs before timing (default 3 "
          "with --bench)\n"
          "  --threads N          CPU worker threads (0: one per core)\n"
          "  --profile FILE       write a Chrome trace of the last run's "
          "kernels\n"
          "  --seed S             seed of the random inputs (default 0)\n"
          "  --print-io           describe inputs and outputs, show output "
          "values\n"
          "  --help, --version\n"
          "\n"
          "Driver options from the environment (runtime/README.md):\n"
          "  DLC_VULKAN_LIBRARY, DLC_VULKAN_DEVICE, DLC_VULKAN_VALIDATE=1,\n"
          "  DLC_VULKAN_STAGING=1, DLC_VULKAN_MASK_FEATURES, "
          "DLC_CUDA_LIBRARY\n"
          "\n"
          "exit status: 0 ok, 1 an --expect mismatch, 2 any other error\n");
}

/* Prints the error and returns 0, so that a check can
 * `return dlc_run_error(...)`; callers that end the program return
 * DLC_EXIT_ERROR themselves. */
static int dlc_run_error(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static int dlc_run_error(const char *format, ...) {
  va_list args;
  fputs("dlc-run: error: ", stderr);
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  return 0;
}

static int dlc_run_usage_error(const char *format, const char *arg) {
  fputs("dlc-run: ", stderr);
  fprintf(stderr, format, arg);
  fputs("\n\n", stderr);
  dlc_run_usage(stderr);
  return DLC_EXIT_ERROR;
}

static int dlc_parse_unsigned(const char *text, unsigned long *out) {
  char *end;
  unsigned long long value;
  if (!text || !*text || *text == '-')
    return 0;
  errno = 0;
  value = strtoull(text, &end, 10);
  if (errno || *end || value > 0xffffffffull)
    return 0;
  *out = (unsigned long)value;
  return 1;
}

static int dlc_parse_double(const char *text, double *out) {
  char *end;
  if (!text || !*text)
    return 0;
  errno = 0;
  *out = strtod(text, &end);
  return !errno && !*end && *out >= 0.0;
}

static int dlc_option_known(const char *name) {
  static const char *const names[] = {
      "--input", "--expect", "--output-dir", "--profile", "--rtol",
      "--atol",  "--bench",  "--warmup",     "--threads", "--seed"};
  size_t i;
  for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i)
    if (strcmp(name, names[i]) == 0)
      return 1;
  return 0;
}

/* Parses argv; returns -1 to go on, else the exit status. */
static int dlc_run_parse(int argc, char **argv, dlc_run_options_t *o) {
  int i;
  memset(o, 0, sizeof(*o));
  o->rtol = 1e-4;
  o->atol = 1e-5;
  o->warmup = (unsigned long)-1;
  for (i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    const char *value = NULL;
    char name[32];
    const char *eq;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      dlc_run_usage(stdout);
      return 0;
    }
    if (strcmp(arg, "--version") == 0) {
      printf("dlc-run %s (runtime %d.%d.%d, artifact format %u.%u)\n",
             DLC_RUN_VERSION, DLC_RUNTIME_VERSION_MAJOR,
             DLC_RUNTIME_VERSION_MINOR, DLC_RUNTIME_VERSION_PATCH,
             (unsigned)DLCX_VERSION_MAJOR, (unsigned)DLCX_VERSION_MINOR);
      return 0;
    }
    if (strcmp(arg, "--print-io") == 0) {
      o->print_io = 1;
      continue;
    }
    if (arg[0] != '-' || arg[1] != '-') {
      if (arg[0] == '-' && arg[1])
        return dlc_run_usage_error("unknown option '%s'", arg);
      if (o->model_path)
        return dlc_run_usage_error(
            "unexpected argument '%s' (one model only; inputs go after "
            "--input)",
            arg);
      o->model_path = arg;
      continue;
    }
    /* --name=value or --name value */
    eq = strchr(arg, '=');
    if (eq && (size_t)(eq - arg) < sizeof(name)) {
      snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
      value = eq + 1;
    } else {
      snprintf(name, sizeof(name), "%s", arg);
      if (!dlc_option_known(name))
        return dlc_run_usage_error("unknown option '%s'", arg);
      if (i + 1 >= argc)
        return dlc_run_usage_error("option '%s' needs a value", arg);
      value = argv[++i];
    }
    if (strcmp(name, "--input") == 0) {
      if (o->input_count == DLC_RUN_MAX_ARGS)
        return dlc_run_usage_error("too many %s options", name);
      o->inputs[o->input_count++] = value;
    } else if (strcmp(name, "--expect") == 0) {
      if (o->expect_count == DLC_RUN_MAX_ARGS)
        return dlc_run_usage_error("too many %s options", name);
      if (!strchr(value, '='))
        return dlc_run_usage_error("--expect takes NAME=FILE, got '%s'", value);
      o->expects[o->expect_count++] = value;
    } else if (strcmp(name, "--output-dir") == 0) {
      o->output_dir = value;
    } else if (strcmp(name, "--profile") == 0) {
      o->profile_path = value;
    } else if (strcmp(name, "--rtol") == 0) {
      if (!dlc_parse_double(value, &o->rtol))
        return dlc_run_usage_error("--rtol takes a number >= 0, got '%s'",
                                   value);
    } else if (strcmp(name, "--atol") == 0) {
      if (!dlc_parse_double(value, &o->atol))
        return dlc_run_usage_error("--atol takes a number >= 0, got '%s'",
                                   value);
    } else if (strcmp(name, "--bench") == 0) {
      if (!dlc_parse_unsigned(value, &o->bench) || o->bench == 0)
        return dlc_run_usage_error("--bench takes a count >= 1, got '%s'",
                                   value);
    } else if (strcmp(name, "--warmup") == 0) {
      if (!dlc_parse_unsigned(value, &o->warmup))
        return dlc_run_usage_error("--warmup takes a count, got '%s'", value);
    } else if (strcmp(name, "--threads") == 0) {
      if (!dlc_parse_unsigned(value, &o->threads) || o->threads > 1024)
        return dlc_run_usage_error("--threads takes 0 to 1024, got '%s'",
                                   value);
    } else if (strcmp(name, "--seed") == 0) {
      char *end;
      errno = 0;
      o->seed = strtoull(value, &end, 10);
      if (errno || !*value || *end || *value == '-')
        return dlc_run_usage_error("--seed takes an unsigned integer, got "
                                   "'%s'",
                                   value);
    } else {
      return dlc_run_usage_error("unknown option '%s'", name);
    }
  }
  if (!o->model_path)
    return dlc_run_usage_error("%s", "no model given");
  if (o->warmup == (unsigned long)-1)
    o->warmup = o->bench ? 3 : 0;
  return -1;
}

static double dlc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* splitmix64: tiny, and the same sequence on every platform. */
static uint64_t dlc_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void dlc_fill_random(dlc_host_tensor_t *t, uint64_t *state) {
  uint64_t i;
  for (i = 0; i < t->count; ++i) {
    uint64_t r = dlc_random(state);
    double value;
    if (dlc_tensor_dtype_is_float(t->dtype))
      value = (double)(r >> 11) * (2.0 / 9007199254740992.0) - 1.0; /* [-1,1) */
    else if (t->dtype == DLCX_DTYPE_BOOL)
      value = (double)(r & 1);
    else if (t->dtype == DLCX_DTYPE_I4)
      value = (double)(int)(r % 16) - 8;
    else if (t->dtype == DLCX_DTYPE_U4)
      value = (double)(r % 16);
    else if (t->dtype == DLCX_DTYPE_I8 || t->dtype == DLCX_DTYPE_I16 ||
             t->dtype == DLCX_DTYPE_I32 || t->dtype == DLCX_DTYPE_I64)
      value = (double)(int)(r % 21) - 10; /* small: no overflow in kernels */
    else
      value = (double)(r % 21);
    dlc_tensor_set(t, i, value);
  }
}

/* Makes `t` (read from `path`) fit `info`, or says why it cannot and
 * returns 0. The conversions are the lossless ones .npy files need: bf16
 * as raw uint16 bits, 8- and 4-bit floats as raw uint8 bits (one per
 * element), int4/uint4 as one int8/uint8 per element. */
static int dlc_fit_tensor(dlc_host_tensor_t *t, const dlc_tensor_info_t *info,
                          const char *what, const char *path) {
  char want[160], got[160];
  uint32_t d;
  int same_shape = t->rank == info->rank;
  for (d = 0; same_shape && d < t->rank; ++d)
    same_shape = t->dims[d] == info->dims[d];
  if (same_shape && t->dtype != (uint32_t)info->dtype) {
    int unpacked4 =
        (info->dtype == DLCX_DTYPE_I4 && t->dtype == DLCX_DTYPE_I8) ||
        (info->dtype == DLCX_DTYPE_U4 && t->dtype == DLCX_DTYPE_U8);
    int bits4 = dlcx_dtype_bits(info->dtype) == 4;
    if (info->dtype == DLCX_DTYPE_BF16 && t->dtype == DLCX_DTYPE_U16) {
      t->dtype = DLCX_DTYPE_BF16;
    } else if (dlcx_dtype_is_minifloat(info->dtype) &&
               t->dtype == DLCX_DTYPE_U8) {
      uint64_t i;
      for (i = 0; bits4 && i < t->count; ++i)
        if (t->data[i] > 15)
          return dlc_run_error("%s: element %llu of %s is %u, not the bits "
                               "of a 4-bit float",
                               what, (unsigned long long)i, path, t->data[i]);
      if (bits4) { /* pack: element i's bits into nibble i */
        for (i = 0; i < t->count; ++i)
          t->data[i / 2] =
              (uint8_t)(i % 2 ? t->data[i / 2] | t->data[i] << 4 : t->data[i]);
        t->size = (size_t)(t->count / 2 + t->count % 2);
      }
      t->dtype = info->dtype;
    } else if (unpacked4) {
      dlc_host_tensor_t packed;
      uint64_t i;
      double low = info->dtype == DLCX_DTYPE_I4 ? -8 : 0;
      if (!dlc_tensor_alloc(&packed, info->dtype, info->rank, info->dims))
        return dlc_run_error("out of memory");
      for (i = 0; i < t->count; ++i) {
        double value = dlc_tensor_get(t, i);
        if (value < low || value > low + 15) {
          dlc_tensor_free(&packed);
          return dlc_run_error("%s: element %llu of %s is %g, outside "
                               "%s",
                               what, (unsigned long long)i, path, value,
                               dlc_tensor_dtype_name(info->dtype));
        }
        dlc_tensor_set(&packed, i, value);
      }
      dlc_tensor_free(t);
      *t = packed;
    }
  }
  if (same_shape && t->dtype == (uint32_t)info->dtype)
    return 1;
  dlc_tensor_format_shape(info->rank, info->dims, want, sizeof(want));
  dlc_tensor_format_shape(t->rank, t->dims, got, sizeof(got));
  dlc_run_error("%s: the model expects %s %s, %s holds %s %s", what,
                dlc_tensor_dtype_name(info->dtype), want, path,
                dlc_tensor_dtype_name(t->dtype), got);
  return 0;
}

/* The model's input or output tensors, with host buffers. */
typedef struct dlc_run_io_t {
  dlc_tensor_info_t info;
  dlc_host_tensor_t tensor;
  const char *source; /* file it came from; NULL: random or computed */
} dlc_run_io_t;

static int dlc_load_inputs(const dlc_run_options_t *o, dlc_model_t *model,
                           dlc_run_io_t *inputs, uint32_t count) {
  uint64_t state = o->seed;
  uint32_t i, next = 0;
  int k;
  char error[512];

  for (i = 0; i < count; ++i)
    inputs[i].source = NULL;
  /* Named first, so that positional ones fill the rest in order. */
  for (k = 0; k < o->input_count; ++k) {
    const char *eq = strchr(o->inputs[k], '=');
    char name[256];
    uint32_t index;
    if (!eq)
      continue;
    snprintf(name, sizeof(name), "%.*s", (int)(eq - o->inputs[k]),
             o->inputs[k]);
    if (dlc_model_find_input(model, name, &index) != DLC_OK) {
      struct stat st;
      if (stat(o->inputs[k], &st) == 0)
        continue; /* a file whose name has '=' in it */
      fprintf(stderr,
              "dlc-run: error: the model has no input '%s'; its "
              "inputs are:",
              name);
      for (i = 0; i < count; ++i)
        fprintf(stderr, " %s", inputs[i].info.name);
      fputc('\n', stderr);
      return 0;
    }
    if (inputs[index].source)
      return dlc_run_error("input '%s' given twice", name);
    inputs[index].source = eq + 1;
  }
  for (k = 0; k < o->input_count; ++k) {
    const char *eq = strchr(o->inputs[k], '=');
    char name[256];
    uint32_t index;
    if (eq) {
      snprintf(name, sizeof(name), "%.*s", (int)(eq - o->inputs[k]),
               o->inputs[k]);
      if (dlc_model_find_input(model, name, &index) == DLC_OK)
        continue;
    }
    while (next < count && inputs[next].source)
      ++next;
    if (next == count)
      return dlc_run_error("more inputs given than the model's %u",
                           (unsigned)count);
    inputs[next].source = o->inputs[k];
  }

  for (i = 0; i < count; ++i) {
    char what[300];
    snprintf(what, sizeof(what), "input '%s'", inputs[i].info.name);
    if (!inputs[i].source) {
      if (o->input_count > 0)
        return dlc_run_error("%s is not given (give all inputs, or none "
                             "for random ones)",
                             what);
      if (!dlc_tensor_alloc(&inputs[i].tensor, inputs[i].info.dtype,
                            inputs[i].info.rank, inputs[i].info.dims))
        return dlc_run_error("%s: out of memory", what);
      dlc_fill_random(&inputs[i].tensor, &state);
      continue;
    }
    if (!dlc_tensor_read_file(inputs[i].source, &inputs[i].tensor, error,
                              sizeof(error)))
      return dlc_run_error("%s: %s", what, error);
    if (!dlc_fit_tensor(&inputs[i].tensor, &inputs[i].info, what,
                        inputs[i].source))
      return 0;
  }
  return 1;
}

/* Output names become file names: keep them to a safe alphabet. */
static void dlc_file_name(const char *name, char *out, size_t out_size) {
  size_t i;
  for (i = 0; name[i] && i + 1 < out_size; ++i) {
    char c = name[i];
    int safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    out[i] = safe ? c : '_';
  }
  out[i] = '\0';
  if (i == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
    snprintf(out, out_size, "output");
}

static int dlc_make_dirs(const char *path) {
  char buffer[4096];
  size_t i, length = strlen(path);
  if (length >= sizeof(buffer))
    return 0;
  memcpy(buffer, path, length + 1);
  for (i = 1; i <= length; ++i) {
    if (buffer[i] == '/' || buffer[i] == '\0') {
      char saved = buffer[i];
      buffer[i] = '\0';
      if (mkdir(buffer, 0777) != 0 && errno != EEXIST)
        return 0;
      buffer[i] = saved;
    }
  }
  return 1;
}

static int dlc_write_outputs(const char *dir, dlc_run_io_t *outputs,
                             uint32_t count) {
  uint32_t i;
  char error[512];
  if (!dlc_make_dirs(dir))
    return dlc_run_error("cannot create directory '%s': %s", dir,
                         strerror(errno));
  for (i = 0; i < count; ++i) {
    char name[256], path[4096 + 256];
    dlc_file_name(outputs[i].info.name, name, sizeof(name));
    snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
    if (!dlc_tensor_write_npy(path, &outputs[i].tensor, error, sizeof(error)))
      return dlc_run_error("%s", error);
  }
  return 1;
}

/* Compares against each --expect reference; returns the exit status. */
static int dlc_check_expects(const dlc_run_options_t *o, dlc_model_t *model,
                             dlc_run_io_t *outputs) {
  int k, status = 0;
  char error[512];
  for (k = 0; k < o->expect_count; ++k) {
    const char *eq = strchr(o->expects[k], '=');
    const char *path = eq + 1;
    dlc_host_tensor_t ref;
    dlc_run_io_t *out;
    char name[256], what[300];
    uint64_t i, mismatches = 0, first_bad = 0;
    double max_abs = 0.0, max_rel = 0.0;
    uint32_t index;
    int is_float;

    snprintf(name, sizeof(name), "%.*s", (int)(eq - o->expects[k]),
             o->expects[k]);
    if (dlc_model_find_output(model, name, &index) != DLC_OK) {
      uint32_t j;
      fprintf(stderr,
              "dlc-run: error: the model has no output '%s'; its "
              "outputs are:",
              name);
      for (j = 0; j < dlc_model_output_count(model); ++j)
        fprintf(stderr, " %s", outputs[j].info.name);
      fputc('\n', stderr);
      return DLC_EXIT_ERROR;
    }
    out = &outputs[index];
    snprintf(what, sizeof(what), "output '%s'", name);
    if (!dlc_tensor_read_file(path, &ref, error, sizeof(error))) {
      dlc_run_error("%s: %s", what, error);
      return DLC_EXIT_ERROR;
    }
    if (!dlc_fit_tensor(&ref, &out->info, what, path)) {
      dlc_tensor_free(&ref);
      return DLC_EXIT_MISMATCH;
    }
    is_float = dlc_tensor_dtype_is_float(ref.dtype);
    for (i = 0; i < ref.count; ++i) {
      double a = dlc_tensor_get(&out->tensor, i);
      double b = dlc_tensor_get(&ref, i);
      double diff = fabs(a - b);
      int ok;
      if (!is_float) {
        ok = dlc_tensor_same_bits(&out->tensor, &ref, i);
      } else if (isnan(a) || isnan(b)) {
        ok = isnan(a) && isnan(b);
        diff = ok ? 0.0 : INFINITY;
      } else if (a == b) { /* equal infinities too */
        ok = 1;
        diff = 0.0;
      } else {
        ok = diff <= o->atol + o->rtol * fabs(b);
      }
      if (diff > max_abs)
        max_abs = diff;
      if (b != 0.0 && diff / fabs(b) > max_rel)
        max_rel = diff / fabs(b);
      if (!ok && mismatches++ == 0)
        first_bad = i;
    }
    if (mismatches) {
      printf("%s: MISMATCH: %llu of %llu elements, max abs err %.6g, max "
             "rel err %.6g; first at %llu: got %.9g, expected %.9g "
             "(rtol %g, atol %g)\n",
             what, (unsigned long long)mismatches,
             (unsigned long long)ref.count, max_abs, max_rel,
             (unsigned long long)first_bad,
             dlc_tensor_get(&out->tensor, first_bad),
             dlc_tensor_get(&ref, first_bad), o->rtol, o->atol);
      status = DLC_EXIT_MISMATCH;
    } else {
      printf("%s: OK: %llu elements, max abs err %.6g, max rel err %.6g\n",
             what, (unsigned long long)ref.count, max_abs, max_rel);
    }
    dlc_tensor_free(&ref);
  }
  return status;
}

static void dlc_print_info(const char *kind, uint32_t index,
                           const dlc_tensor_info_t *info) {
  char shape[160];
  dlc_tensor_format_shape(info->rank, info->dims, shape, sizeof(shape));
  printf("%-6s %u: %s %s %s (%lu bytes)", kind, (unsigned)index, info->name,
         dlc_tensor_dtype_name(info->dtype), shape,
         (unsigned long)info->size_bytes);
  if (info->scale != 0.0f)
    printf(" quantized: scale %g zero point %d", (double)info->scale,
           (int)info->zero_point);
  putchar('\n');
}

static void dlc_print_values(const dlc_run_io_t *io) {
  uint64_t i, shown = io->tensor.count < 8 ? io->tensor.count : 8;
  printf("%s = [", io->info.name);
  for (i = 0; i < shown; ++i) {
    double v = dlc_tensor_get(&io->tensor, i);
    /* Whole numbers in full (an int32's ten digits), others to 6 digits. */
    if (v > -9.0e15 && v < 9.0e15 && v == (double)(long long)v)
      printf("%s%lld", i ? ", " : "", (long long)v);
    else
      printf("%s%.6g", i ? ", " : "", v);
  }
  printf("%s]\n", shown < io->tensor.count ? ", ..." : "");
}

static void dlc_json_string(FILE *out, const char *text) {
  fputc('"', out);
  for (; *text; ++text) {
    unsigned char c = (unsigned char)*text;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static int dlc_write_profile(const char *path, dlc_session_t *session) {
  const dlc_kernel_timing_t *timings;
  uint32_t count, i;
  FILE *out;
  if (dlc_session_timings(session, &timings, &count) != DLC_OK)
    return dlc_run_error("no timings: %s", dlc_session_message(session));
  out = fopen(path, "w");
  if (!out)
    return dlc_run_error("cannot write '%s': %s", path, strerror(errno));
  fputs("[\n", out);
  for (i = 0; i < count; ++i) {
    fputs("  {\"name\": ", out);
    dlc_json_string(out, timings[i].kernel_name);
    fprintf(out,
            ", \"cat\": \"kernel\", \"ph\": \"X\", \"ts\": %.3f, "
            "\"dur\": %.3f, \"pid\": 1, \"tid\": 1, \"args\": {\"launch\": "
            "%u}}%s\n",
            (double)timings[i].start_ns / 1e3,
            (double)timings[i].duration_ns / 1e3, (unsigned)i,
            i + 1 < count ? "," : "");
  }
  fputs("]\n", out);
  if (fclose(out) != 0)
    return dlc_run_error("cannot write '%s'", path);
  return 1;
}

/* Peak resident set size in KiB, or 0 when unknown. */
static long dlc_peak_rss_kib(void) {
  FILE *status = fopen("/proc/self/status", "r");
  struct rusage usage;
  if (status) {
    char line[256];
    long kib = 0;
    while (fgets(line, sizeof(line), status))
      if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
        break;
    fclose(status);
    if (kib > 0)
      return kib;
  }
  if (getrusage(RUSAGE_SELF, &usage) == 0)
    return usage.ru_maxrss; /* KiB on Linux and the BSDs */
  return 0;
}

static int dlc_compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double dlc_percentile(const double *sorted, unsigned long n, double p) {
  unsigned long rank = (unsigned long)ceil(p * (double)n);
  return sorted[rank ? rank - 1 : 0];
}

/* Runs the model as asked; returns the exit status. */
static int dlc_run_session(const dlc_run_options_t *o, dlc_model_t *model,
                           dlc_session_t *session, dlc_run_io_t *inputs,
                           dlc_run_io_t *outputs) {
  uint32_t input_count = dlc_model_input_count(model);
  uint32_t output_count = dlc_model_output_count(model);
  unsigned long runs = o->bench ? o->bench : 1, r;
  double *latencies = (double *)malloc(runs * sizeof(double));
  double total = 0.0;
  uint32_t i;

  if (!latencies) {
    dlc_run_error("out of memory");
    return DLC_EXIT_ERROR;
  }
  for (r = 0; r < o->warmup + runs; ++r) {
    double start;
    /* Every run gets its inputs (a run may reuse their memory), outside
     * the timed part. */
    for (i = 0; i < input_count; ++i)
      if (dlc_session_set_input(session, i, inputs[i].tensor.data,
                                inputs[i].tensor.size) != DLC_OK) {
        free(latencies);
        dlc_run_error("%s", dlc_session_message(session));
        return DLC_EXIT_ERROR;
      }
    start = dlc_now_ms();
    if (dlc_session_run(session) != DLC_OK) {
      free(latencies);
      dlc_run_error("run failed: %s", dlc_session_message(session));
      return DLC_EXIT_ERROR;
    }
    if (r >= o->warmup) {
      latencies[r - o->warmup] = dlc_now_ms() - start;
      total += latencies[r - o->warmup];
    }
  }
  for (i = 0; i < output_count; ++i)
    if (dlc_session_get_output(session, i, outputs[i].tensor.data,
                               outputs[i].tensor.size) != DLC_OK) {
      free(latencies);
      dlc_run_error("%s", dlc_session_message(session));
      return DLC_EXIT_ERROR;
    }

  if (o->bench) {
    qsort(latencies, runs, sizeof(double), dlc_compare_doubles);
    printf("bench: %lu runs (%lu warmup), latency ms: p50 %.4f p90 %.4f "
           "p99 %.4f min %.4f max %.4f mean %.4f\n",
           runs, o->warmup, dlc_percentile(latencies, runs, 0.50),
           dlc_percentile(latencies, runs, 0.90),
           dlc_percentile(latencies, runs, 0.99), latencies[0],
           latencies[runs - 1], total / (double)runs);
    printf("bench: throughput %.2f runs/s, peak RSS %.1f MiB, arena %.1f "
           "KiB\n",
           total > 0.0 ? (double)runs * 1e3 / total : 0.0,
           (double)dlc_peak_rss_kib() / 1024.0,
           (double)dlc_model_arena_size(model) / 1024.0);
  } else {
    printf("ran %s in %.3f ms\n", o->model_path, latencies[0]);
  }
  free(latencies);

  if (o->print_io)
    for (i = 0; i < output_count; ++i)
      dlc_print_values(&outputs[i]);
  if (o->profile_path && !dlc_write_profile(o->profile_path, session))
    return DLC_EXIT_ERROR;
  if (o->output_dir && !dlc_write_outputs(o->output_dir, outputs, output_count))
    return DLC_EXIT_ERROR;
  return dlc_check_expects(o, model, outputs);
}

/* The runtime reads no DLC_* variable; dlc-run maps these onto the
 * drivers' options (runtime/README.md). 0, with an error printed, when one
 * is malformed. */
static int dlc_run_driver_options(dlc_vulkan_driver_options_t *vulkan,
                                  dlc_cuda_driver_options_t *cuda) {
  static const char *const flags[] = {"DLC_VULKAN_VALIDATE",
                                      "DLC_VULKAN_STAGING"};
  const char *mask = getenv("DLC_VULKAN_MASK_FEATURES");
  uint32_t values[2];
  size_t i;
  memset(vulkan, 0, sizeof(*vulkan));
  memset(cuda, 0, sizeof(*cuda));
  vulkan->struct_size = sizeof(*vulkan);
  cuda->struct_size = sizeof(*cuda);
  for (i = 0; i < 2; ++i) {
    const char *text = getenv(flags[i]);
    if (text && *text && strcmp(text, "0") != 0 && strcmp(text, "1") != 0) {
      dlc_run_error("%s is '%s'; set it to 1 or 0", flags[i], text);
      return 0;
    }
    values[i] = text && strcmp(text, "1") == 0;
  }
  vulkan->validate = values[0];
  vulkan->force_staging = values[1];
  vulkan->library = getenv("DLC_VULKAN_LIBRARY");
  vulkan->device_filter = getenv("DLC_VULKAN_DEVICE");
  if (mask && *mask) {
    char *end = NULL;
    errno = 0;
    vulkan->masked_features = strtoull(mask, &end, 0);
    if (errno != 0 || !end || *end != '\0' || mask[0] == '-') {
      dlc_run_error("DLC_VULKAN_MASK_FEATURES is '%s'; set it to a number "
                    "such as 0x1100",
                    mask);
      return 0;
    }
  }
  cuda->library = getenv("DLC_CUDA_LIBRARY");
  return 1;
}

int main(int argc, char **argv) {
  dlc_run_options_t o;
  dlc_context_options_t context_options;
  dlc_vulkan_driver_options_t vulkan_options;
  dlc_cuda_driver_options_t cuda_options;
  dlc_context_t *context = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session = NULL;
  dlc_session_options_t session_options;
  dlc_run_io_t *inputs = NULL, *outputs = NULL;
  uint32_t input_count = 0, output_count = 0, i;
  int status = dlc_run_parse(argc, argv, &o);
  if (status >= 0)
    return status;

  status = DLC_EXIT_ERROR;
  if (!dlc_run_driver_options(&vulkan_options, &cuda_options))
    goto done;
  memset(&context_options, 0, sizeof(context_options));
  context_options.struct_size = sizeof(context_options);
  context_options.vulkan = &vulkan_options;
  context_options.cuda = &cuda_options;
  if (dlc_context_create(&context_options, &context) != DLC_OK) {
    dlc_run_error("cannot create a runtime context");
    goto done;
  }
  if (dlc_model_load_file(context, o.model_path, NULL, &model) != DLC_OK) {
    dlc_run_error("cannot load '%s': %s", o.model_path,
                  dlc_context_message(context));
    goto done;
  }
  input_count = dlc_model_input_count(model);
  output_count = dlc_model_output_count(model);
  inputs = (dlc_run_io_t *)calloc(input_count + 1, sizeof(dlc_run_io_t));
  outputs = (dlc_run_io_t *)calloc(output_count + 1, sizeof(dlc_run_io_t));
  if (!inputs || !outputs) {
    dlc_run_error("out of memory");
    goto done;
  }
  if (o.print_io)
    printf("model: %s (target %s, %u kernels, %u launches, arena %llu "
           "bytes)\n",
           o.model_path, dlc_model_driver_name(model),
           (unsigned)dlc_model_kernel_count(model),
           (unsigned)dlc_model_launch_count(model),
           (unsigned long long)dlc_model_arena_size(model));
  for (i = 0; i < input_count; ++i) {
    dlc_model_input_info(model, i, &inputs[i].info);
    if (o.print_io)
      dlc_print_info("input", i, &inputs[i].info);
  }
  for (i = 0; i < output_count; ++i) {
    dlc_model_output_info(model, i, &outputs[i].info);
    if (o.print_io)
      dlc_print_info("output", i, &outputs[i].info);
    if (!dlc_tensor_alloc(&outputs[i].tensor, outputs[i].info.dtype,
                          outputs[i].info.rank, outputs[i].info.dims)) {
      dlc_run_error("out of memory for output '%s'", outputs[i].info.name);
      goto done;
    }
  }
  if (!dlc_load_inputs(&o, model, inputs, input_count))
    goto done;

  memset(&session_options, 0, sizeof(session_options));
  session_options.struct_size = sizeof(session_options);
  session_options.thread_count = (uint32_t)o.threads;
  session_options.enable_profiling = o.profile_path != NULL;
  if (dlc_session_create(model, &session_options, &session) != DLC_OK) {
    dlc_run_error("cannot create a session: %s", dlc_context_message(context));
    goto done;
  }
  status = dlc_run_session(&o, model, session, inputs, outputs);

done:
  for (i = 0; inputs && i < input_count; ++i)
    dlc_tensor_free(&inputs[i].tensor);
  for (i = 0; outputs && i < output_count; ++i)
    dlc_tensor_free(&outputs[i].tensor);
  free(inputs);
  free(outputs);
  dlc_session_destroy(session);
  dlc_model_destroy(model);
  dlc_context_destroy(context);
  return status;
}
