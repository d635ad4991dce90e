/*===- test_dlc_run.c - dlc-run from the outside --------------------------===*
 *
 * Runs the dlc-run binary on artifacts and tensor files this test writes
 * itself (.npy by hand, TensorProto .pb encoded by hand, both packed and
 * unpacked), and, where Debian's libonnx-testdata is installed, on the ONNX
 * backend test "test_add" with its own input and expected output files.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact_builder.h"
#include "test_models.h"
#include "test_util.h"

#define N 60

static char g_dir[64];

static char g_out[1 << 16], g_err[1 << 16];

static void slurp(const char *path, char *out, size_t out_size) {
  FILE *f = fopen(path, "rb");
  size_t n = 0;
  if (f) {
    n = fread(out, 1, out_size - 1, f);
    fclose(f);
  }
  out[n] = '\0';
}

/* Runs `dlc-run ARGS` in the test directory; returns its exit status and
 * leaves stdout and stderr in g_out and g_err. */
static int dlc_run(const char *args) {
  char command[4096], out_path[128], err_path[128];
  int status;
  snprintf(out_path, sizeof(out_path), "%s/stdout", g_dir);
  snprintf(err_path, sizeof(err_path), "%s/stderr", g_dir);
  snprintf(command, sizeof(command), "cd %s && %s %s >stdout 2>stderr", g_dir,
           DLC_RUN_COMMAND, args);
  status = system(command);
  CHECK(status != -1 && WIFEXITED(status));
  slurp(out_path, g_out, sizeof(g_out));
  slurp(err_path, g_err, sizeof(g_err));
  return WEXITSTATUS(status);
}

#define EXPECT_RUN(args, code)                                                 \
  do {                                                                         \
    int run_status_ = dlc_run(args);                                           \
    if (run_status_ != (code)) {                                               \
      fprintf(stderr,                                                          \
              "%s:%d: dlc-run %s exited %d, expected %d\nstdout:\n%s\n"        \
              "stderr:\n%s\n",                                                 \
              __FILE__, __LINE__, args, run_status_, code, g_out, g_err);      \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static void write_bytes(const char *name, const void *data, size_t size) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", g_dir, name);
  CHECK(dlc_ab_write_file(path, (const uint8_t *)data, size));
}

/* A .npy file, written here independently of dlc-run's writer. */
static void write_npy(const char *name, const char *descr, const char *shape,
                      const void *data, size_t size, int version) {
  uint8_t buffer[1 << 14];
  char header[256];
  size_t prefix = version == 1 ? 10 : 12, length, total;
  length = (size_t)snprintf(header, sizeof(header),
                            "{'descr': '%s', 'fortran_order': False, "
                            "'shape': %s, }",
                            descr, shape);
  total = (prefix + length + 1 + 63) / 64 * 64;
  CHECK(total + size <= sizeof(buffer));
  memset(buffer, ' ', total);
  memcpy(buffer, "\x93NUMPY", 6);
  buffer[6] = (uint8_t)version;
  buffer[7] = 0;
  if (version == 1) {
    buffer[8] = (uint8_t)(total - prefix);
    buffer[9] = (uint8_t)((total - prefix) >> 8);
  } else {
    uint32_t header_length = (uint32_t)(total - prefix);
    memcpy(buffer + 8, &header_length, 4);
  }
  memcpy(buffer + prefix, header, length);
  buffer[total - 1] = '\n';
  memcpy(buffer + total, data, size);
  write_bytes(name, buffer, total + size);
}

/* Reads the data of a .npy file dlc-run wrote; returns its byte count. */
static size_t read_npy_data(const char *name, void *out, size_t out_size,
                            char *header, size_t header_size) {
  char path[256];
  uint8_t *bytes;
  size_t size, header_length;
  snprintf(path, sizeof(path), "%s/%s", g_dir, name);
  bytes = dlc_ab_read_file(path, &size);
  CHECK(bytes && size >= 10 && memcmp(bytes, "\x93NUMPY\x01", 7) == 0);
  header_length = (size_t)bytes[8] | (size_t)bytes[9] << 8;
  CHECK((10 + header_length) % 64 == 0 && 10 + header_length <= size);
  snprintf(header, header_size, "%.*s", (int)header_length, bytes + 10);
  CHECK(size - 10 - header_length <= out_size);
  memcpy(out, bytes + 10 + header_length, size - 10 - header_length);
  free(bytes);
  return size - 10 - header_length;
}

/*===--- protobuf, by hand ----------------------------------------------===*/

typedef struct pb_t {
  uint8_t data[1 << 14];
  size_t size;
} pb_t;

static void pb_byte(pb_t *pb, uint8_t byte) {
  CHECK(pb->size < sizeof(pb->data));
  pb->data[pb->size++] = byte;
}

static void pb_varint(pb_t *pb, uint64_t value) {
  while (value >= 0x80) {
    pb_byte(pb, (uint8_t)(value | 0x80));
    value >>= 7;
  }
  pb_byte(pb, (uint8_t)value);
}

static void pb_key(pb_t *pb, uint32_t field, uint32_t wire) {
  pb_varint(pb, (uint64_t)field << 3 | wire);
}

static void pb_bytes(pb_t *pb, uint32_t field, const void *data, size_t size) {
  size_t i;
  pb_key(pb, field, 2);
  pb_varint(pb, size);
  for (i = 0; i < size; ++i)
    pb_byte(pb, ((const uint8_t *)data)[i]);
}

/* A float TensorProto of shape [N]: dims packed or not, values in
 * float_data packed, float_data unpacked, or raw_data. */
static void write_pb(const char *name, const char *tensor_name,
                     const float *values, int packed_dims, int layout) {
  pb_t pb;
  int i;
  pb.size = 0;
  if (packed_dims) {
    uint8_t dim[2] = {N, 0};
    pb_bytes(&pb, 1, dim, 1);
  } else {
    pb_key(&pb, 1, 0);
    pb_varint(&pb, N);
  }
  pb_key(&pb, 2, 0);
  pb_varint(&pb, 1); /* FLOAT */
  pb_bytes(&pb, 8, tensor_name, strlen(tensor_name));
  if (layout == 0) {
    pb_bytes(&pb, 4, values, N * sizeof(float));
  } else if (layout == 1) {
    for (i = 0; i < N; ++i) {
      pb_key(&pb, 4, 5);
      pb_byte(&pb, ((const uint8_t *)&values[i])[0]);
      pb_byte(&pb, ((const uint8_t *)&values[i])[1]);
      pb_byte(&pb, ((const uint8_t *)&values[i])[2]);
      pb_byte(&pb, ((const uint8_t *)&values[i])[3]);
    }
  } else {
    pb_bytes(&pb, 9, values, N * sizeof(float));
  }
  write_bytes(name, pb.data, pb.size);
}

/*===--- the tests --------------------------------------------------------===*/

static void test_basics(void) {
  EXPECT_RUN("--help", 0);
  CHECK_CONTAINS(g_out, "usage: dlc-run MODEL.dlcx");
  EXPECT_RUN("--version", 0);
  CHECK_CONTAINS(g_out, "dlc-run 0.1.0");
  EXPECT_RUN("", 2);
  CHECK_CONTAINS(g_err, "no model given");
  CHECK_CONTAINS(g_err, "usage:");
  EXPECT_RUN("model.dlcx --frobnicate", 2);
  CHECK_CONTAINS(g_err, "unknown option '--frobnicate'");
  EXPECT_RUN("model.dlcx --bench 0", 2);
  CHECK_CONTAINS(g_err, "--bench takes a count >= 1");
  EXPECT_RUN("model.dlcx --rtol", 2);
  CHECK_CONTAINS(g_err, "needs a value");
  EXPECT_RUN("missing.dlcx", 2);
  CHECK_CONTAINS(g_err, "cannot load 'missing.dlcx'");
  EXPECT_RUN("x.npy", 2);
  CHECK_CONTAINS(g_err, "magic");
}

/* The driver options dlc-run takes from the environment: malformed ones
 * are refused, naming the variable (a CPU model needs no GPU driver, so
 * well-formed ones change nothing here). */
static void test_driver_environment(void) {
  CHECK(setenv("DLC_VULKAN_VALIDATE", "yes", 1) == 0);
  EXPECT_RUN("model.dlcx", 2);
  CHECK_CONTAINS(g_err, "DLC_VULKAN_VALIDATE is 'yes'; set it to 1 or 0");
  CHECK(unsetenv("DLC_VULKAN_VALIDATE") == 0);
  CHECK(setenv("DLC_VULKAN_MASK_FEATURES", "0x11zz", 1) == 0);
  EXPECT_RUN("model.dlcx", 2);
  CHECK_CONTAINS(g_err, "DLC_VULKAN_MASK_FEATURES is '0x11zz'; set it to a "
                        "number such as 0x1100");
  CHECK(setenv("DLC_VULKAN_MASK_FEATURES", "0x1100", 1) == 0);
  CHECK(setenv("DLC_VULKAN_STAGING", "1", 1) == 0);
  CHECK(setenv("DLC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1) == 0);
  EXPECT_RUN("model.dlcx", 0);
  CHECK(unsetenv("DLC_VULKAN_MASK_FEATURES") == 0);
  CHECK(unsetenv("DLC_VULKAN_STAGING") == 0);
  CHECK(unsetenv("DLC_CUDA_LIBRARY") == 0);
}

static void test_npy(const float *expected) {
  uint32_t twos[N];
  float out[N], perturbed[N];
  char header[256];
  int i;

  for (i = 0; i < N; ++i)
    twos[i] = 2;
  write_npy("ref_hits.npy", "<u4", "(60,)", twos, sizeof(twos), 1);
  write_npy("ref_out.npy", "<f4", "(60,)", expected, N * sizeof(float), 1);

  EXPECT_RUN("model.dlcx --input x=x.npy --input y=y.npy --output-dir out/a "
             "--expect out=ref_out.npy --expect hits=ref_hits.npy",
             0);
  CHECK_CONTAINS(g_out, "output 'out': OK: 60 elements");
  CHECK_CONTAINS(g_out, "output 'hits': OK");
  CHECK(read_npy_data("out/a/out.npy", out, sizeof(out), header,
                      sizeof(header)) == sizeof(out));
  CHECK_CONTAINS(header, "'descr': '<f4'");
  CHECK_CONTAINS(header, "'shape': (60,)");
  CHECK(memcmp(out, expected, sizeof(out)) == 0);
  CHECK(read_npy_data("out/a/hits.npy", twos, sizeof(twos), header,
                      sizeof(header)) == sizeof(twos));
  CHECK_CONTAINS(header, "'<u4'");
  CHECK(twos[0] == 2 && twos[N - 1] == 2);

  /* By position, and the .npy v2 header. */
  EXPECT_RUN("model.dlcx --input x.npy --input=y2.npy --expect=out=ref_out.npy "
             "--threads 3",
             0);

  /* Off by 1e-3 relative: fails the default tolerance, passes rtol 1e-2. */
  for (i = 0; i < N; ++i)
    perturbed[i] = expected[i] * 1.001f + (i == 7 ? 0.5f : 0.0f);
  write_npy("ref_bad.npy", "<f4", "(60,)", perturbed, sizeof(perturbed), 1);
  EXPECT_RUN("model.dlcx --input x=x.npy --input y=y.npy "
             "--expect out=ref_bad.npy",
             1);
  CHECK_CONTAINS(g_out, "output 'out': MISMATCH");
  CHECK_CONTAINS(g_out, "first at 0");
  EXPECT_RUN("model.dlcx --input x=x.npy --input y=y.npy "
             "--expect out=ref_bad.npy --rtol 0.01 --atol 1",
             0);

  /* Integers compare exactly. */
  for (i = 0; i < N; ++i)
    twos[i] = i == 59 ? 3 : 2;
  write_npy("ref_hits_bad.npy", "<u4", "(60,)", twos, sizeof(twos), 1);
  EXPECT_RUN("model.dlcx --input x=x.npy --input y=y.npy "
             "--expect hits=ref_hits_bad.npy --atol 10",
             1);
  CHECK_CONTAINS(g_out, "1 of 60 elements");
}

static void test_input_errors(const float *x) {
  double x64[N];
  int i;
  for (i = 0; i < N; ++i)
    x64[i] = x[i];
  write_npy("x59.npy", "<f4", "(59,)", x, 59 * sizeof(float), 1);
  write_npy("x2d.npy", "<f4", "(6, 10)", x, N * sizeof(float), 1);
  write_npy("x64.npy", "<f8", "(60,)", x64, sizeof(x64), 1);
  write_npy("xbig.npy", ">f4", "(60,)", x, N * sizeof(float), 1);
  write_npy("xshort.npy", "<f4", "(60,)", x, 8, 1);

  EXPECT_RUN("model.dlcx --input x=x59.npy --input y=y.npy", 2);
  CHECK_CONTAINS(g_err, "input 'x': the model expects float32 [60], x59.npy "
                        "holds float32 [59]");
  EXPECT_RUN("model.dlcx --input x=x2d.npy --input y=y.npy", 2);
  CHECK_CONTAINS(g_err, "holds float32 [6, 10]");
  EXPECT_RUN("model.dlcx --input x=x64.npy --input y=y.npy", 2);
  CHECK_CONTAINS(g_err, "holds float64 [60]");
  EXPECT_RUN("model.dlcx --input x=xbig.npy --input y=y.npy", 2);
  CHECK_CONTAINS(g_err, "dtype '>f4' is not supported");
  EXPECT_RUN("model.dlcx --input x=xshort.npy --input y=y.npy", 2);
  CHECK_CONTAINS(g_err, "data is 8 bytes");
  EXPECT_RUN("model.dlcx --input q=x.npy --input y=y.npy", 2);
  CHECK_CONTAINS(g_err, "the model has no input 'q'; its inputs are: x y");
  EXPECT_RUN("model.dlcx --input x=x.npy", 2);
  CHECK_CONTAINS(g_err, "input 'y' is not given");
  EXPECT_RUN("model.dlcx --input x.npy --input y.npy --input x.npy", 2);
  CHECK_CONTAINS(g_err, "more inputs given");
  EXPECT_RUN("model.dlcx --input x=x.npy --input x=x.npy --input y.npy", 2);
  CHECK_CONTAINS(g_err, "given twice");
  EXPECT_RUN("model.dlcx --input x=nope.npy --input y=y.npy", 2);
  CHECK_CONTAINS(g_err, "cannot open 'nope.npy'");
  EXPECT_RUN("model.dlcx --expect nope=x.npy", 2);
  CHECK_CONTAINS(g_err, "no output 'nope'; its outputs are: out hits");
  EXPECT_RUN("model.dlcx --expect out=x59.npy", 1);
  CHECK_CONTAINS(g_err, "output 'out': the model expects float32 [60]");
}

static void test_pb(const float *x, const float *y, const float *expected) {
  write_pb("x.pb", "x", x, 1, 0);
  write_pb("y.pb", "y", y, 0, 1);
  write_pb("ref_out.pb", "out", expected, 0, 2);
  EXPECT_RUN("model.dlcx --input x=x.pb --input y=y.pb --expect out=ref_out.pb",
             0);
  CHECK_CONTAINS(g_out, "output 'out': OK");
  write_bytes("junk.pb", "\xff\xff\xff", 3);
  EXPECT_RUN("model.dlcx --input x=junk.pb --input y=y.pb", 2);
  CHECK_CONTAINS(g_err, "neither a .npy file nor a TensorProto");
}

static void test_random_bench_profile(void) {
  char path[256];
  uint8_t *trace;
  size_t size, events = 0;
  const char *p;

  EXPECT_RUN("model.dlcx --output-dir r1 --seed 7", 0);
  EXPECT_RUN("model.dlcx --output-dir r2 --seed 7 --threads 2", 0);
  {
    float a[N], b[N];
    char header[256];
    read_npy_data("r1/out.npy", a, sizeof(a), header, sizeof(header));
    read_npy_data("r2/out.npy", b, sizeof(b), header, sizeof(header));
    CHECK(memcmp(a, b, sizeof(a)) == 0);
  }
  EXPECT_RUN("model.dlcx --bench 20 --warmup 2 --threads 2", 0);
  CHECK_CONTAINS(g_out, "20 runs (2 warmup)");
  CHECK_CONTAINS(g_out, "p50");
  CHECK_CONTAINS(g_out, "p99");
  CHECK_CONTAINS(g_out, "throughput");
  CHECK_CONTAINS(g_out, "peak RSS");

  EXPECT_RUN("model.dlcx --profile trace.json --print-io", 0);
  CHECK_CONTAINS(g_out, "input  0: x float32 [60] (240 bytes)");
  CHECK_CONTAINS(g_out, "output 1: hits uint32 [60]");
  CHECK_CONTAINS(g_out, "hits = [2, 2, 2");
  snprintf(path, sizeof(path), "%s/trace.json", g_dir);
  trace = dlc_ab_read_file(path, &size);
  CHECK(trace);
  trace = (uint8_t *)realloc(trace, size + 1);
  CHECK(trace);
  trace[size] = '\0';
  CHECK(trace[0] == '[');
  CHECK_CONTAINS((char *)trace, "\"name\": \"dlc_test_reverse\"");
  for (p = (char *)trace; (p = strstr(p, "\"ph\": \"X\"")) != NULL; ++p)
    ++events;
  CHECK(events == 6);
  free(trace);
}

static void test_onnx_backend(const uint8_t *code, size_t code_size) {
  char args[1024], probe[512];
  struct stat st;
  int64_t dims[3] = {3, 4, 5};
  uint8_t *data;
  size_t size;
  snprintf(probe, sizeof(probe), "%s/test_add/test_data_set_0/output_0.pb",
           DLC_ONNX_TESTDATA);
  if (stat(probe, &st) != 0) {
    printf("test_dlc_run: %s not found, skipping the ONNX backend test\n",
           probe);
    return;
  }
  dlc_test_build_add(code, code_size, 3, dims, &data, &size);
  write_bytes("add.dlcx", data, size);
  dlc_ab_free(data);
  snprintf(args, sizeof(args),
           "add.dlcx --input x=%s/test_add/test_data_set_0/input_0.pb "
           "--input y=%s/test_add/test_data_set_0/input_1.pb "
           "--expect sum=%s",
           DLC_ONNX_TESTDATA, DLC_ONNX_TESTDATA, probe);
  EXPECT_RUN(args, 0);
  CHECK_CONTAINS(g_out, "output 'sum': OK: 60 elements");
}

int main(void) {
  float x[N], y[N], expected[N];
  uint8_t *code, *data;
  size_t code_size, size;
  dlc_test_chain_t chain;
  char command[256];
  int i;

  snprintf(g_dir, sizeof(g_dir), "/tmp/dlc-run-test-XXXXXX");
  CHECK(mkdtemp(g_dir));
  code = dlc_test_read_kernels(&code_size);
  CHECK(code);
  memset(&chain, 0, sizeof(chain));
  chain.code = code;
  chain.code_size = code_size;
  dlc_test_build_chain(&chain, &data, &size);
  write_bytes("model.dlcx", data, size);
  dlc_ab_free(data);

  for (i = 0; i < N; ++i) {
    x[i] = (float)i * 0.25f - 3.0f;
    y[i] = 1.0f / (float)(i + 1);
  }
  dlc_test_chain_reference(x, y, N, 2.0f, expected);
  write_npy("x.npy", "<f4", "(60,)", x, sizeof(x), 1);
  write_npy("y.npy", "<f4", "(60,)", y, sizeof(y), 1);
  write_npy("y2.npy", "<f4", "(60,)", y, sizeof(y), 2);

  test_basics();
  test_driver_environment();
  test_npy(expected);
  test_input_errors(x);
  test_pb(x, y, expected);
  test_random_bench_profile();
  test_onnx_backend(code, code_size);

  snprintf(command, sizeof(command), "rm -rf %s", g_dir);
  CHECK(system(command) == 0);
  free(code);
  printf("test_dlc_run: all passed\n");
  return 0;
}
