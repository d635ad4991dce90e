/*===- stub_driver.c - a driver that prepares nothing ---------------------===*/

#include "stub_driver.h"

#include <string.h>

/* Distinct non-NULL states, so the core's bookkeeping is exercised. */
static const char dlc_stub_model_tag = 'm';
static const char dlc_stub_session_tag = 's';

static dlc_status_t dlc_stub_prepare(const dlc_driver_t *driver,
                                     const dlc_allocator_t *allocator,
                                     const dlc_artifact_t *artifact,
                                     const dlc_model_options_t *options,
                                     dlc_message_t *message, void **out_model) {
  (void)driver, (void)allocator, (void)artifact, (void)options, (void)message;
  *out_model = (void *)(uintptr_t)&dlc_stub_model_tag;
  return DLC_OK;
}

static void dlc_stub_release(void *model) { (void)model; }

static dlc_status_t
dlc_stub_session_create(void *model, const dlc_session_options_t *options,
                        dlc_message_t *message, void **out_session) {
  (void)model, (void)options, (void)message;
  *out_session = (void *)(uintptr_t)&dlc_stub_session_tag;
  return DLC_OK;
}

static void dlc_stub_session_destroy(void *session) { (void)session; }

static dlc_status_t dlc_stub_copy(void *session, const dlcx_tensor_t *tensor,
                                  const void *data, dlc_message_t *message) {
  (void)session, (void)tensor, (void)data, (void)message;
  return DLC_OK;
}

static dlc_status_t dlc_stub_run(void *session, dlc_message_t *message) {
  (void)session, (void)message;
  return DLC_OK;
}

static dlc_status_t dlc_stub_get(void *session, const dlcx_tensor_t *tensor,
                                 void *data, dlc_message_t *message) {
  (void)session, (void)tensor, (void)message;
  memset(data, 0, (size_t)tensor->size);
  return DLC_OK;
}

static dlc_status_t dlc_stub_timings(const void *session,
                                     const dlc_kernel_timing_t **out_timings,
                                     uint32_t *out_count) {
  (void)session;
  *out_timings = NULL;
  *out_count = 0;
  return DLC_OK;
}

void dlc_test_stub_driver(dlcx_target_t target, dlc_driver_t *out_driver) {
  memset(out_driver, 0, sizeof(*out_driver));
  out_driver->abi_version = DLC_DRIVER_ABI_VERSION;
  out_driver->target = target;
  out_driver->name = "stub";
  out_driver->model_prepare = dlc_stub_prepare;
  out_driver->model_release = dlc_stub_release;
  out_driver->session_create = dlc_stub_session_create;
  out_driver->session_destroy = dlc_stub_session_destroy;
  out_driver->set_input = dlc_stub_copy;
  out_driver->run = dlc_stub_run;
  out_driver->get_output = dlc_stub_get;
  out_driver->timings = dlc_stub_timings;
}
