/*===- semihosting.c - the debugger's channel to the host (Arm) -----------===*/

#include "semihosting.h"

#include <stdint.h>
#include <string.h>

enum {
  SYS_OPEN = 0x01,
  SYS_CLOSE = 0x02,
  SYS_WRITE0 = 0x04,
  SYS_WRITE = 0x05,
  SYS_READ = 0x06,
  SYS_FLEN = 0x0c,
  SYS_GET_CMDLINE = 0x15,
  SYS_EXIT = 0x18,
};
/* SYS_OPEN modes (ISO C's "rb" and "wb") and SYS_EXIT's reasons. */
enum { MODE_READ_BINARY = 1, MODE_WRITE_BINARY = 5 };
enum { EXIT_APPLICATION = 0x20026, EXIT_RUNTIME_ERROR = 0x20023 };

static intptr_t semihost(uintptr_t operation, const void *argument) {
  register uintptr_t r0 __asm__("r0") = operation;
  register const void *r1 __asm__("r1") = argument;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return (intptr_t)r0;
}

void semihosting_write0(const char *text) { semihost(SYS_WRITE0, text); }

int semihosting_command_line(char *buffer, size_t size) {
  uintptr_t block[2] = {(uintptr_t)buffer, size};
  return semihost(SYS_GET_CMDLINE, block) == 0 ? 0 : -1;
}

static intptr_t open_file(const char *path, uintptr_t mode) {
  uintptr_t block[3] = {(uintptr_t)path, mode, strlen(path)};
  return semihost(SYS_OPEN, block);
}

static void close_file(intptr_t handle) {
  uintptr_t block[1] = {(uintptr_t)handle};
  semihost(SYS_CLOSE, block);
}

int semihosting_read_file(const char *path, void *data, size_t size) {
  intptr_t handle = open_file(path, MODE_READ_BINARY);
  uintptr_t length[1], block[3];
  int ok;
  if (handle < 0)
    return -1;
  length[0] = (uintptr_t)handle;
  block[0] = (uintptr_t)handle;
  block[1] = (uintptr_t)data;
  block[2] = size;
  /* SYS_READ answers the bytes it did not read. */
  ok = semihost(SYS_FLEN, length) == (intptr_t)size &&
       semihost(SYS_READ, block) == 0;
  close_file(handle);
  return ok ? 0 : -1;
}

int semihosting_write_file(const char *path, const void *data, size_t size) {
  intptr_t handle = open_file(path, MODE_WRITE_BINARY);
  uintptr_t block[3];
  int ok;
  if (handle < 0)
    return -1;
  block[0] = (uintptr_t)handle;
  block[1] = (uintptr_t)data;
  block[2] = size;
  ok = semihost(SYS_WRITE, block) == 0;
  close_file(handle);
  return ok ? 0 : -1;
}

void semihosting_exit(int status) {
  /* On 32-bit Arm the reason is the argument itself; QEMU exits 0 for an
   * application exit and 1 for the others. */
  semihost(SYS_EXIT,
           (const void *)(uintptr_t)(status == 0 ? EXIT_APPLICATION
                                                 : EXIT_RUNTIME_ERROR));
}
