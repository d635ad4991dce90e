/*===- cpu_loader.h - load the CODE section's shared object -----*- C -*-===*/

#ifndef DLC_CPU_LOADER_H
#define DLC_CPU_LOADER_H

#include <stdint.h>

#include "dlc/driver.h"

/* The DLCX_FEATURE_CPU_* bit of the machine this runtime was built for, or
 * 0, and its name. */
uint64_t dlc_cpu_host_isa(void);
const char *dlc_cpu_isa_name(uint64_t isa);

/* The DLCX_CPU_EXTENSIONS bits this CPU has (all of them where the system
 * cannot be asked), and the name of extension `bit`. */
uint64_t dlc_cpu_host_extensions(void);
const char *dlc_cpu_extension_name(unsigned bit);

/* Whether this build can load code at run time. */
int dlc_cpu_can_load_code(void);

typedef struct dlc_cpu_library_t {
  void *handle;
  /* Kept open while loaded: dlopen matches an already-loaded object by
   * path, so no two live libraries may share a /proc/self/fd/N name. */
  int fd;
} dlc_cpu_library_t;

/* Checks that `code` is a complete shared object for this machine and loads
 * it. `what` names it in messages. */
dlc_status_t dlc_cpu_library_open(const uint8_t *code, uint64_t size,
                                  const char *what, dlc_message_t *message,
                                  dlc_cpu_library_t *out_library);
void dlc_cpu_library_close(dlc_cpu_library_t *library);

/* The kernel called `name`, or NULL. */
dlcx_cpu_kernel_fn dlc_cpu_library_symbol(const dlc_cpu_library_t *library,
                                          const char *name);

#endif /* DLC_CPU_LOADER_H */
