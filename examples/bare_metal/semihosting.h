/*===- semihosting.h - the debugger's channel to the host (Arm) -----------===*
 *
 * Arm semihosting: a `bkpt 0xab` that the debugger (here QEMU, with
 * -semihosting-config enable=on) answers with host file I/O. The firmware
 * uses it for its command line, its input and output tensors and its exit
 * status; a device in the field would use its sensor and its UART instead.
 *===----------------------------------------------------------------------===*/

#ifndef DLC_EXAMPLE_SEMIHOSTING_H
#define DLC_EXAMPLE_SEMIHOSTING_H

#include <stddef.h>

void semihosting_write0(const char *text);
/* The command line QEMU was given (-semihosting-config arg=...); 0 on
 * success. */
int semihosting_command_line(char *buffer, size_t size);
/* Reads exactly `size` bytes of the file at `path`; 0 on success, -1 when
 * it cannot be opened, has another size or cannot be read. */
int semihosting_read_file(const char *path, void *data, size_t size);
/* Writes `size` bytes to a new file at `path`; 0 on success. */
int semihosting_write_file(const char *path, const void *data, size_t size);
/* Ends the run: status 0 as success, anything else as an error. */
void semihosting_exit(int status);

#endif /* DLC_EXAMPLE_SEMIHOSTING_H */
