/*===- cpu_loader.c - load the CODE section's shared object ---------------===*
 *
 * The code is loaded from memory without leaving a file behind: memfd_create
 * plus dlopen("/proc/self/fd/N") on Linux, else a mkstemp file under $TMPDIR
 * that is unlinked right after dlopen. Before either, the ELF layout is
 * checked against the blob's size and the host, because the dynamic loader
 * trusts its input and a truncated object would fault inside it.
 *===----------------------------------------------------------------------===*/

#if (defined(__unix__) || defined(__APPLE__)) && !defined(DLC_RUNTIME_NO_DLOPEN)
#define _GNU_SOURCE /* memfd_create */
#define DLC_HAVE_DLOPEN 1
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#else
#define DLC_HAVE_DLOPEN 0
#endif

#include <inttypes.h>
#include <string.h>

#include "cpu_loader.h"

#if defined(__x86_64__) || defined(_M_X64)
#define DLC_HOST_ISA DLCX_FEATURE_CPU_X86_64
#define DLC_HOST_ELF_MACHINE 62
#elif defined(__aarch64__)
#define DLC_HOST_ISA DLCX_FEATURE_CPU_AARCH64
#define DLC_HOST_ELF_MACHINE 183
#elif defined(__arm__) && defined(__ARM_ARCH_7EM__)
/* Cortex-M4/M7: no loader, only linked kernels. */
#define DLC_HOST_ISA DLCX_FEATURE_CPU_ARMV7EM
#define DLC_HOST_ELF_MACHINE 40
#elif defined(__arm__)
#define DLC_HOST_ISA DLCX_FEATURE_CPU_ARMV7
#define DLC_HOST_ELF_MACHINE 40
#elif defined(__riscv) && __riscv_xlen == 64
#define DLC_HOST_ISA DLCX_FEATURE_CPU_RISCV64
#define DLC_HOST_ELF_MACHINE 243
#else
#define DLC_HOST_ISA 0
#define DLC_HOST_ELF_MACHINE 0
#endif

uint64_t dlc_cpu_host_isa(void) { return DLC_HOST_ISA; }

const char *dlc_cpu_isa_name(uint64_t isa) {
  switch (isa) {
  case DLCX_FEATURE_CPU_X86_64:
    return "x86-64";
  case DLCX_FEATURE_CPU_AARCH64:
    return "aarch64";
  case DLCX_FEATURE_CPU_ARMV7:
    return "armv7";
  case DLCX_FEATURE_CPU_RISCV64:
    return "riscv64";
  case DLCX_FEATURE_CPU_ARMV7EM:
    return "armv7e-m";
  }
  return isa ? "several ISAs" : "no known ISA";
}

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
/* The hwcap bits of the extensions (Linux's asm/hwcap.h numbers). */
#define DLC_HWCAP_FPHP (1ul << 9)
#define DLC_HWCAP_ASIMDHP (1ul << 10)
#define DLC_HWCAP_ASIMDDP (1ul << 20)
#define DLC_HWCAP2_I8MM (1ul << 13)
#define DLC_HWCAP2_BF16 (1ul << 14)
#ifndef AT_HWCAP2
#define AT_HWCAP2 26
#endif
#endif

uint64_t dlc_cpu_host_extensions(void) {
  uint64_t bits = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
#define DLC_X86_EXTENSION(name, bit, isa, text)                                \
  if (__builtin_cpu_supports(text))                                            \
    bits |= DLCX_CPU_EXTENSION_MASK(bit);
  DLCX_CPU_EXTENSIONS_X86(DLC_X86_EXTENSION)
#undef DLC_X86_EXTENSION
#elif defined(__aarch64__) && defined(__linux__)
  unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  if (hwcap & DLC_HWCAP_ASIMDDP)
    bits |= DLCX_CPU_EXTENSION_MASK(58);
  if (hwcap2 & DLC_HWCAP2_I8MM)
    bits |= DLCX_CPU_EXTENSION_MASK(59);
  if ((hwcap & DLC_HWCAP_FPHP) && (hwcap & DLC_HWCAP_ASIMDHP))
    bits |= DLCX_CPU_EXTENSION_MASK(60);
  if (hwcap2 & DLC_HWCAP2_BF16)
    bits |= DLCX_CPU_EXTENSION_MASK(61);
#else
  /* No way to ask this system: the artifact is trusted to fit the CPU. */
  bits = DLCX_CPU_EXTENSIONS_ALL;
#endif
  return bits;
}

const char *dlc_cpu_extension_name(unsigned bit) {
#define DLC_EXTENSION_NAME(name, number, isa, text)                            \
  if (bit == (number))                                                         \
    return text;
  DLCX_CPU_EXTENSIONS(DLC_EXTENSION_NAME)
#undef DLC_EXTENSION_NAME
  return "an unknown extension";
}

int dlc_cpu_can_load_code(void) { return DLC_HAVE_DLOPEN; }

#if DLC_HAVE_DLOPEN

static uint64_t dlc_read_le(const uint8_t *p, unsigned bytes) {
  uint64_t value = 0;
  while (bytes-- > 0)
    value = value << 8 | p[bytes];
  return value;
}

static int dlc_elf_range_ok(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

static dlc_status_t dlc_cpu_check_elf(const uint8_t *code, uint64_t size,
                                      const char *what,
                                      dlc_message_t *message) {
  const int is64 = sizeof(void *) == 8;
  const uint64_t header_size = is64 ? 64 : 52;
  const uint64_t min_phentsize = is64 ? 56 : 32;
  uint64_t phoff, shoff, phentsize, phnum, shentsize, shnum, machine, i;

  if (size < header_size || memcmp(code, "\177ELF", 4) != 0)
    return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                           "%s is not an ELF object (%" PRIu64 " bytes)", what,
                           size);
  if (code[4] != (is64 ? 2 : 1) || code[5] != 1)
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "%s is an ELF object of class %u, data %u; this "
                           "host needs %d-bit little-endian",
                           what, code[4], code[5], is64 ? 64 : 32);
  if (dlc_read_le(code + 16, 2) != 3)
    return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                           "%s is not a shared object (e_type %u)", what,
                           (unsigned)dlc_read_le(code + 16, 2));
  machine = dlc_read_le(code + 18, 2);
  if (machine != DLC_HOST_ELF_MACHINE)
    return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                           "%s is code for ELF machine %u, this host is %u",
                           what, (unsigned)machine,
                           (unsigned)DLC_HOST_ELF_MACHINE);
  phoff = dlc_read_le(code + (is64 ? 32 : 28), is64 ? 8 : 4);
  shoff = dlc_read_le(code + (is64 ? 40 : 32), is64 ? 8 : 4);
  phentsize = dlc_read_le(code + (is64 ? 54 : 42), 2);
  phnum = dlc_read_le(code + (is64 ? 56 : 44), 2);
  shentsize = dlc_read_le(code + (is64 ? 58 : 46), 2);
  shnum = dlc_read_le(code + (is64 ? 60 : 48), 2);
  if (phentsize < min_phentsize ||
      !dlc_elf_range_ok(phoff, phnum * phentsize, size) ||
      (shnum && !dlc_elf_range_ok(shoff, shnum * shentsize, size)))
    return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                           "%s: ELF program or section headers lie outside "
                           "its %" PRIu64 " bytes",
                           what, size);
  for (i = 0; i < phnum; ++i) {
    const uint8_t *ph = code + phoff + i * phentsize;
    uint64_t offset = dlc_read_le(ph + (is64 ? 8 : 4), is64 ? 8 : 4);
    uint64_t filesz = dlc_read_le(ph + (is64 ? 32 : 16), is64 ? 8 : 4);
    if (!dlc_elf_range_ok(offset, filesz, size))
      return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                             "%s: ELF segment %" PRIu64 " [%" PRIu64
                             ", +%" PRIu64 ") ends past its %" PRIu64
                             " bytes (truncated?)",
                             what, i, offset, filesz, size);
  }
  return DLC_OK;
}

static int dlc_write_all(int fd, const uint8_t *data, uint64_t size) {
  while (size > 0) {
    size_t chunk = size > (1u << 30) ? (1u << 30) : (size_t)size;
    ssize_t n = write(fd, data, chunk);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return 0;
    }
    data += n;
    size -= (uint64_t)n;
  }
  return 1;
}

dlc_status_t dlc_cpu_library_open(const uint8_t *code, uint64_t size,
                                  const char *what, dlc_message_t *message,
                                  dlc_cpu_library_t *out_library) {
  char path[4096];
  const char *dir;
  dlc_status_t status;
  int fd;

  out_library->handle = NULL;
  out_library->fd = -1;
  status = dlc_cpu_check_elf(code, size, what, message);
  if (status != DLC_OK)
    return status;

#if defined(MFD_CLOEXEC) && !defined(DLC_RUNTIME_NO_MEMFD)
  fd = memfd_create("dlc-kernels", MFD_CLOEXEC);
  if (fd >= 0) {
    if (dlc_write_all(fd, code, size)) {
      snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
      out_library->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (out_library->handle) {
        out_library->fd = fd;
        return DLC_OK;
      }
    }
    close(fd);
  }
#endif

  /* No memfd, or no /proc: a private temporary file. */
  dir = getenv("TMPDIR");
  if (!dir || !*dir)
    dir = "/tmp";
  if ((size_t)snprintf(path, sizeof(path), "%s/dlc-kernels-XXXXXX", dir) >=
      sizeof(path))
    return dlc_message_set(message, DLC_ERROR_IO, "TMPDIR '%s' is too long",
                           dir);
  fd = mkstemp(path);
  if (fd < 0)
    return dlc_message_set(message, DLC_ERROR_IO,
                           "cannot create a temporary file for %s in '%s': %s",
                           what, dir, strerror(errno));
  if (!dlc_write_all(fd, code, size)) {
    int error = errno;
    unlink(path);
    close(fd);
    return dlc_message_set(message, DLC_ERROR_IO, "cannot write '%s': %s", path,
                           strerror(error));
  }
  out_library->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  unlink(path);
  close(fd);
  if (!out_library->handle) {
    const char *error = dlerror();
    return dlc_message_set(message, DLC_ERROR_INVALID_ARTIFACT,
                           "cannot load %s: %s", what,
                           error ? error : "dlopen failed");
  }
  return DLC_OK;
}

void dlc_cpu_library_close(dlc_cpu_library_t *library) {
  if (library->handle)
    dlclose(library->handle);
  if (library->fd >= 0)
    close(library->fd);
  library->handle = NULL;
  library->fd = -1;
}

dlcx_cpu_kernel_fn dlc_cpu_library_symbol(const dlc_cpu_library_t *library,
                                          const char *name) {
  dlcx_cpu_kernel_fn fn;
  void *symbol = dlsym(library->handle, name);
  /* ISO C has no object-to-function pointer conversion; POSIX guarantees
   * the representation is the same, so copy the bits. */
  memcpy(&fn, &symbol, sizeof(fn));
  return symbol ? fn : NULL;
}

#else

dlc_status_t dlc_cpu_library_open(const uint8_t *code, uint64_t size,
                                  const char *what, dlc_message_t *message,
                                  dlc_cpu_library_t *out_library) {
  (void)code;
  (void)size;
  out_library->handle = NULL;
  out_library->fd = -1;
  return dlc_message_set(message, DLC_ERROR_UNSUPPORTED,
                         "cannot load %s: this runtime was built without a "
                         "dynamic loader; link the kernels into the "
                         "application and use dlc_cpu_driver_create_static",
                         what);
}

void dlc_cpu_library_close(dlc_cpu_library_t *library) { (void)library; }

dlcx_cpu_kernel_fn dlc_cpu_library_symbol(const dlc_cpu_library_t *library,
                                          const char *name) {
  (void)library;
  (void)name;
  return NULL;
}

#endif
