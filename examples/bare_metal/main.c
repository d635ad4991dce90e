/*===- main.c - a dlc model on a bare Cortex-M4 ---------------------------===*
 *
 * Firmware that runs one model compiled with
 *   dlc-compile model.onnx --target=cpu:thumbv7em-none-eabihf -o model.dlcx
 *   dlc-compile model.onnx --target=cpu:thumbv7em-none-eabihf --emit=obj \
 *       -o model.o                 (also writes model.kernels.c)
 * with no operating system: the artifact is in flash (model_data.S, used
 * in place), the kernels are linked in (model.o and its table), and every
 * allocation the runtime makes comes from a static pool while the model
 * and its session are set up; after that nothing is allocated (checked:
 * the pool refuses, and the C library's malloc is counted).
 *
 * The tensors travel through semihosting (the debugger's channel, here
 * QEMU's): for each input i the file DIR/input<i>.bin (its raw bytes), for
 * each output DIR/output<i>.bin, where DIR is the command line's one
 * argument:
 *   qemu-system-arm -M mps2-an386 -nographic -kernel firmware.elf \
 *     -semihosting-config enable=on,target=native,arg=firmware,arg=DIR
 * Exit status 0 on success (QEMU's own), 1 on any error, with the message.
 *===----------------------------------------------------------------------===*/

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlc/cpu_driver.h"
#include "dlc/runtime.h"
#include "semihosting.h"

/* The model: the artifact (model_data.S) and the kernel table. */
extern const unsigned char dlc_model_data[], dlc_model_end[];
extern const dlc_cpu_symbol_t dlc_kernels[];
extern const size_t dlc_kernel_count;
extern const uint64_t dlc_kernels_fingerprint;

/* CMakeLists.txt sets it from FIRMWARE_POOL_KIB. */
#ifndef FIRMWARE_POOL_BYTES
#define FIRMWARE_POOL_BYTES (96u * 1024u)
#endif

/* The runtime's memory: a bump allocator over a static pool, which frees
 * nothing (the firmware never tears the model down) and refuses every
 * allocation once setup is over. */
static unsigned char pool[FIRMWARE_POOL_BYTES] __attribute__((aligned(64)));
static size_t pool_used;
static int setup_done;
static unsigned late_allocations;

static void *pool_alloc(void *self, size_t size, size_t alignment) {
  size_t start = (pool_used + alignment - 1) & ~(alignment - 1);
  (void)self;
  if (setup_done) {
    ++late_allocations;
    return NULL;
  }
  if (start > sizeof(pool) || size > sizeof(pool) - start)
    return NULL;
  pool_used = start + size;
  return pool + start;
}

static void pool_free(void *self, void *ptr) {
  (void)self;
  (void)ptr;
}

/* The C library's malloc, counted once setup is over (-Wl,--wrap=malloc). */
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_malloc(size_t size) {
  if (setup_done)
    ++late_allocations;
  return __real_malloc(size);
}

static void say(const char *format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  semihosting_write0(line);
}

static int fail(const char *what, dlc_status_t status, const char *message) {
  say("firmware: %s: %s: %s\n", what, dlc_status_name(status), message);
  return 1;
}

int main(void) {
  char command_line[256], path[300];
  const char *dir;
  dlc_allocator_t allocator = {NULL, pool_alloc, pool_free};
  dlc_context_options_t context_options;
  dlc_context_t *context = NULL;
  dlc_driver_t *cpu = NULL;
  dlc_model_t *model = NULL;
  dlc_session_t *session = NULL;
  dlc_tensor_info_t info;
  dlc_status_t status;
  unsigned char *io_buffer;
  size_t io_bytes = 1;
  uint32_t i;

  if (semihosting_command_line(command_line, sizeof(command_line)) != 0 ||
      !(dir = strchr(command_line, ' ')))
    return fail("usage", DLC_ERROR_INVALID_ARGUMENT,
                "give the tensors' directory as the argument");
  ++dir;

  memset(&context_options, 0, sizeof(context_options));
  context_options.struct_size = sizeof(context_options);
  context_options.allocator = allocator;
  status = dlc_context_create(&context_options, &context);
  if (status != DLC_OK)
    return fail("dlc_context_create", status, "");
  status = dlc_cpu_driver_create_linked(
      &allocator, dlc_kernels, dlc_kernel_count, dlc_kernels_fingerprint, &cpu);
  if (status == DLC_OK)
    status = dlc_context_register_driver(context, cpu);
  if (status != DLC_OK)
    return fail("the linked kernels", status, dlc_context_message(context));
  status = dlc_model_load_memory(context, dlc_model_data,
                                 (size_t)(dlc_model_end - dlc_model_data), NULL,
                                 &model);
  if (status != DLC_OK)
    return fail("cannot load the model", status, dlc_context_message(context));
  status = dlc_session_create(model, NULL, &session);
  if (status != DLC_OK)
    return fail("cannot create a session", status,
                dlc_context_message(context));
  /* One buffer for the largest input or output, from the pool as well:
   * tensors pass through it one at a time. */
  for (i = 0; i < dlc_model_input_count(model); ++i)
    if (dlc_model_input_info(model, i, &info) == DLC_OK &&
        info.size_bytes > io_bytes)
      io_bytes = info.size_bytes;
  for (i = 0; i < dlc_model_output_count(model); ++i)
    if (dlc_model_output_info(model, i, &info) == DLC_OK &&
        info.size_bytes > io_bytes)
      io_bytes = info.size_bytes;
  io_buffer = (unsigned char *)pool_alloc(NULL, io_bytes, 16);
  if (!io_buffer)
    return fail("the I/O buffer", DLC_ERROR_OUT_OF_MEMORY,
                "the pool is too small (FIRMWARE_POOL_KIB)");
  setup_done = 1;
  say("firmware: model of %u bytes in flash, %u kernels, %u launches, arena "
      "%u bytes; %u bytes of the pool in use (I/O buffer included)\n",
      (unsigned)(dlc_model_end - dlc_model_data),
      (unsigned)dlc_model_kernel_count(model),
      (unsigned)dlc_model_launch_count(model),
      (unsigned)dlc_model_arena_size(model), (unsigned)pool_used);

  for (i = 0; i < dlc_model_input_count(model); ++i) {
    dlc_model_input_info(model, i, &info);
    snprintf(path, sizeof(path), "%s/input%u.bin", dir, (unsigned)i);
    if (semihosting_read_file(path, io_buffer, info.size_bytes) != 0)
      return fail(path, DLC_ERROR_INVALID_ARGUMENT,
                  "cannot read the input's bytes (its exact size)");
    status = dlc_session_set_input(session, i, io_buffer, info.size_bytes);
    if (status != DLC_OK)
      return fail("dlc_session_set_input", status,
                  dlc_session_message(session));
  }
  status = dlc_session_run(session);
  if (status != DLC_OK)
    return fail("dlc_session_run", status, dlc_session_message(session));
  for (i = 0; i < dlc_model_output_count(model); ++i) {
    dlc_model_output_info(model, i, &info);
    status = dlc_session_get_output(session, i, io_buffer, info.size_bytes);
    if (status != DLC_OK)
      return fail("dlc_session_get_output", status,
                  dlc_session_message(session));
    snprintf(path, sizeof(path), "%s/output%u.bin", dir, (unsigned)i);
    if (semihosting_write_file(path, io_buffer, info.size_bytes) != 0)
      return fail(path, DLC_ERROR_INVALID_ARGUMENT, "cannot write the output");
  }
  if (late_allocations)
    return fail("allocation after setup", DLC_ERROR_INVALID_ARGUMENT,
                "the run allocated memory");
  say("firmware: ran; no allocation after setup\n");
  return 0;
}
