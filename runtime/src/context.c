/*===- context.c - allocator, drivers and the message buffer --------------===*/

#include <string.h>

#include "internal.h"

#if !defined(DLC_RUNTIME_NO_CPU_DRIVER)
#include "dlc/cpu_driver.h"
#endif
#if defined(DLC_RUNTIME_ENABLE_VULKAN)
#include "dlc/vulkan_driver.h"
#endif
#if defined(DLC_RUNTIME_ENABLE_CUDA)
#include "dlc/cuda_driver.h"
#endif

#if !defined(DLC_RUNTIME_NO_CPU_DRIVER)
static dlc_status_t dlc_builtin_cpu(const dlc_allocator_t *allocator,
                                    const dlc_context_options_t *options,
                                    dlc_driver_t **out_driver) {
  (void)options;
  return dlc_cpu_driver_create(allocator, out_driver);
}
#endif
#if defined(DLC_RUNTIME_ENABLE_VULKAN)
static dlc_status_t dlc_builtin_vulkan(const dlc_allocator_t *allocator,
                                       const dlc_context_options_t *options,
                                       dlc_driver_t **out_driver) {
  return dlc_vulkan_driver_create_with_options(allocator, options->vulkan,
                                               out_driver);
}
#endif
#if defined(DLC_RUNTIME_ENABLE_CUDA)
static dlc_status_t dlc_builtin_cuda(const dlc_allocator_t *allocator,
                                     const dlc_context_options_t *options,
                                     dlc_driver_t **out_driver) {
  return dlc_cuda_driver_create_with_options(allocator, options->cuda,
                                             out_driver);
}
#endif

typedef dlc_status_t (*dlc_driver_factory_fn)(
    const dlc_allocator_t *allocator, const dlc_context_options_t *options,
    dlc_driver_t **out_driver);

/* The drivers this build contains, registered by every new context. The
 * trailing NULL keeps the array non-empty in a build without any. Creating
 * the GPU drivers loads nothing: they open their libraries on first use. */
static const dlc_driver_factory_fn dlc_builtin_drivers[] = {
#if !defined(DLC_RUNTIME_NO_CPU_DRIVER)
    dlc_builtin_cpu,
#endif
#if defined(DLC_RUNTIME_ENABLE_VULKAN)
    dlc_builtin_vulkan,
#endif
#if defined(DLC_RUNTIME_ENABLE_CUDA)
    dlc_builtin_cuda,
#endif
    NULL};

void dlc_driver_destroy(dlc_driver_t *driver) {
  if (driver && driver->destroy)
    driver->destroy(driver);
}

dlc_status_t dlc_context_create(const dlc_context_options_t *options,
                                dlc_context_t **out_context) {
  dlc_context_options_t resolved;
  dlc_allocator_t allocator;
  dlc_context_t *context;
  dlc_status_t status;
  char text[DLC_MESSAGE_CAPACITY];
  dlc_message_t message;
  size_t i;

  if (!out_context)
    return DLC_ERROR_INVALID_ARGUMENT;
  *out_context = NULL;
  dlc_message_init(&message, text, sizeof(text));
  memset(&resolved, 0, sizeof(resolved));
  status = dlc_options_copy(options, sizeof(resolved), &resolved, &message,
                            "dlc_context_options_t");
  if (status != DLC_OK)
    return status;
  allocator = resolved.allocator;
  if (!allocator.alloc || !allocator.free)
    allocator = dlc_allocator_system();

  context =
      (dlc_context_t *)allocator.alloc(allocator.self, sizeof(*context), 16);
  if (!context)
    return DLC_ERROR_OUT_OF_MEMORY;
  memset(context, 0, sizeof(*context));
  context->allocator = allocator;
  dlc_message_init(&context->message, context->message_text,
                   sizeof(context->message_text));

  for (i = 0; dlc_builtin_drivers[i]; ++i) {
    dlc_driver_t *driver = NULL;
    status = dlc_builtin_drivers[i](&context->allocator, &resolved, &driver);
    if (status != DLC_OK) {
      dlc_context_destroy(context);
      return status;
    }
    context->drivers[context->driver_count].driver = driver;
    context->drivers[context->driver_count].owned = 1;
    ++context->driver_count;
  }
  *out_context = context;
  return DLC_OK;
}

void dlc_context_destroy(dlc_context_t *context) {
  uint32_t i;
  if (!context)
    return;
  for (i = 0; i < context->driver_count; ++i)
    if (context->drivers[i].owned)
      dlc_driver_destroy(context->drivers[i].driver);
  context->allocator.free(context->allocator.self, context);
}

const char *dlc_context_message(const dlc_context_t *context) {
  return context ? context->message_text : "context is NULL";
}

dlc_status_t dlc_context_register_driver(dlc_context_t *context,
                                         const dlc_driver_t *driver) {
  if (!context)
    return DLC_ERROR_INVALID_ARGUMENT;
  if (!driver || !driver->name || !driver->model_prepare ||
      !driver->model_release || !driver->session_create ||
      !driver->session_destroy || !driver->set_input || !driver->run ||
      !driver->get_output || !driver->timings)
    return dlc_message_set(&context->message, DLC_ERROR_INVALID_ARGUMENT,
                           "driver is NULL or lacks a name or a required "
                           "function");
  if (driver->abi_version != DLC_DRIVER_ABI_VERSION)
    return dlc_message_set(&context->message, DLC_ERROR_UNSUPPORTED,
                           "driver '%s' has ABI version %u, this runtime "
                           "needs %u",
                           driver->name, (unsigned)driver->abi_version,
                           (unsigned)DLC_DRIVER_ABI_VERSION);
  if (context->driver_count == DLC_MAX_DRIVERS)
    return dlc_message_set(&context->message, DLC_ERROR_INVALID_ARGUMENT,
                           "a context holds at most %u drivers",
                           (unsigned)DLC_MAX_DRIVERS);
  /* Registering does not transfer ownership: the caller's storage, hence
   * the cast that only the `owned` entries are ever destroyed through. */
  context->drivers[context->driver_count].driver = (dlc_driver_t *)driver;
  context->drivers[context->driver_count].owned = 0;
  ++context->driver_count;
  return DLC_OK;
}

const dlc_driver_t *dlc_context_find_driver(const dlc_context_t *context,
                                            uint32_t target) {
  uint32_t i = context->driver_count;
  while (i-- > 0)
    if ((uint32_t)context->drivers[i].driver->target == target)
      return context->drivers[i].driver;
  return NULL;
}

dlc_status_t dlc_context_probe(dlc_context_t *context, dlcx_target_t target) {
  const dlc_driver_t *driver;
  if (!context)
    return DLC_ERROR_INVALID_ARGUMENT;
  driver = dlc_context_find_driver(context, target);
  if (!driver)
    return dlc_message_set(&context->message, DLC_ERROR_UNAVAILABLE,
                           "no driver for target %s (%u) in this build and "
                           "none registered",
                           dlc_target_name(target), (unsigned)target);
  if (!driver->probe)
    return DLC_OK;
  return driver->probe(driver, &context->message);
}
