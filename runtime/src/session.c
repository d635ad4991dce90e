/*===- session.c - arena, inputs, run, outputs ----------------------------===*/

#include <string.h>

#include "internal.h"

dlc_status_t dlc_session_create(dlc_model_t *model,
                                const dlc_session_options_t *options,
                                dlc_session_t **out_session) {
  dlc_session_options_t resolved;
  dlc_allocator_t *allocator;
  dlc_session_t *session;
  dlc_status_t status;
  uint32_t inputs;

  if (!model)
    return DLC_ERROR_INVALID_ARGUMENT;
  if (!out_session)
    return dlc_message_set(&model->context->message, DLC_ERROR_INVALID_ARGUMENT,
                           "dlc_session_create: out_session is NULL");
  *out_session = NULL;
  memset(&resolved, 0, sizeof(resolved));
  resolved.struct_size = sizeof(resolved);
  status = dlc_options_copy(options, sizeof(resolved), &resolved,
                            &model->context->message, "dlc_session_options_t");
  if (status != DLC_OK)
    return status;

  {
    uint32_t cap = resolved.max_cpu_scratch_size ? resolved.max_cpu_scratch_size
                                                 : DLC_DEFAULT_MAX_CPU_SCRATCH;
    uint32_t scratch = model->artifact.model->cpu_scratch_size;
    if (scratch > cap)
      return dlc_message_set(
          &model->context->message, DLC_ERROR_UNSUPPORTED,
          "the model's kernels need %lu bytes of scratch per thread, more "
          "than the session allows (%lu; raise "
          "dlc_session_options_t.max_cpu_scratch_size)",
          (unsigned long)scratch, (unsigned long)cap);
  }

  allocator = &model->context->allocator;
  /* The per-input flags follow the session in one allocation. */
  inputs = model->artifact.model->input_count;
  session = (dlc_session_t *)allocator->alloc(allocator->self,
                                              sizeof(*session) + inputs, 16);
  if (!session)
    return dlc_message_set(&model->context->message, DLC_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the session");
  memset(session, 0, sizeof(*session));
  session->model = model;
  session->input_valid = (unsigned char *)(session + 1);
  memset(session->input_valid, 1, inputs);
  session->profiling = resolved.enable_profiling != 0;
  dlc_message_init(&session->message, session->message_text,
                   sizeof(session->message_text));
  /* The session does not exist for the caller yet, so a failure is reported
   * where the caller can read it: on the context. */
  status = model->driver->session_create(model->driver_model, &resolved,
                                         &model->context->message,
                                         &session->driver_session);
  if (status != DLC_OK) {
    allocator->free(allocator->self, session);
    return status;
  }
  *out_session = session;
  return DLC_OK;
}

void dlc_session_destroy(dlc_session_t *session) {
  dlc_allocator_t *allocator;
  if (!session)
    return;
  allocator = &session->model->context->allocator;
  session->model->driver->session_destroy(session->driver_session);
  allocator->free(allocator->self, session);
}

const char *dlc_session_message(const dlc_session_t *session) {
  return session ? session->message_text : "session is NULL";
}

/* The tensor of input/output `index`, or NULL after reporting why not. */
static const dlcx_tensor_t *dlc_session_io(dlc_session_t *session,
                                           uint32_t index, int output,
                                           const void *data, size_t size) {
  const dlc_artifact_t *a = &session->model->artifact;
  uint32_t count = output ? a->model->output_count : a->model->input_count;
  const char *what = output ? "output" : "input";
  const dlcx_tensor_t *t;
  if (index >= count) {
    dlc_message_set(&session->message, DLC_ERROR_INVALID_ARGUMENT,
                    "%s index %u is out of range (%u %ss)", what,
                    (unsigned)index, (unsigned)count, what);
    return NULL;
  }
  t = &a->tensors[output ? a->outputs[index] : a->inputs[index]];
  if (size != t->size || (!data && size)) {
    dlc_message_set(&session->message, DLC_ERROR_INVALID_ARGUMENT,
                    "%s %u ('%s') is %lu bytes, got %lu bytes%s", what,
                    (unsigned)index, a->strings + t->name,
                    (unsigned long)t->size, (unsigned long)size,
                    data ? "" : " at NULL");
    return NULL;
  }
  return t;
}

dlc_status_t dlc_session_set_input(dlc_session_t *session, uint32_t index,
                                   const void *data, size_t size) {
  const dlcx_tensor_t *t;
  if (!session)
    return DLC_ERROR_INVALID_ARGUMENT;
  dlc_status_t status;
  t = dlc_session_io(session, index, 0, data, size);
  if (!t)
    return DLC_ERROR_INVALID_ARGUMENT;
  status = session->model->driver->set_input(session->driver_session, t, data,
                                             &session->message);
  if (status == DLC_OK)
    session->input_valid[index] = 1;
  return status;
}

dlc_status_t dlc_session_run(dlc_session_t *session) {
  const dlc_artifact_t *a;
  uint32_t i;
  if (!session)
    return DLC_ERROR_INVALID_ARGUMENT;
  /* An input whose bytes the last run reused must be set again: running on
   * what is there would be a wrong answer, not an error. */
  a = &session->model->artifact;
  for (i = 0; i < a->model->input_count; ++i) {
    const dlcx_tensor_t *t = &a->tensors[a->inputs[i]];
    if (!(t->flags & DLCX_TENSOR_INPUT_REUSED))
      continue;
    if (!session->input_valid[i])
      return dlc_message_set(
          &session->message, DLC_ERROR_INVALID_ARGUMENT,
          "input %u ('%s') was not set since the last run, which reused its "
          "memory; set it again before each run",
          (unsigned)i, a->strings + t->name);
    session->input_valid[i] = 0;
  }
  return session->model->driver->run(session->driver_session,
                                     &session->message);
}

dlc_status_t dlc_session_get_output(dlc_session_t *session, uint32_t index,
                                    void *data, size_t size) {
  const dlcx_tensor_t *t;
  if (!session)
    return DLC_ERROR_INVALID_ARGUMENT;
  t = dlc_session_io(session, index, 1, data, size);
  if (!t)
    return DLC_ERROR_INVALID_ARGUMENT;
  return session->model->driver->get_output(session->driver_session, t, data,
                                            &session->message);
}

dlc_status_t dlc_session_timings(const dlc_session_t *session,
                                 const dlc_kernel_timing_t **out_timings,
                                 uint32_t *out_count) {
  if (!session || !out_timings || !out_count)
    return DLC_ERROR_INVALID_ARGUMENT;
  if (!session->profiling) {
    /* The message buffer is the session's own scratch space, not state the
     * caller observes through the const pointer. */
    dlc_message_t *message = (dlc_message_t *)&session->message;
    return dlc_message_set(message, DLC_ERROR_INVALID_ARGUMENT,
                           "profiling is off: create the session with "
                           "enable_profiling = 1");
  }
  return session->model->driver->timings(session->driver_session, out_timings,
                                         out_count);
}
