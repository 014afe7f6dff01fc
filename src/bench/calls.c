/*
 * calls.c - the loop inside a timed sample: n calls of the function and nothing else,
 * so that a batch of calls costs the calls and a per-call floor no larger than a loop
 * of indirect calls (measured by tkb__sampler_call_floor and subtracted).
 *
 * tkb__std_invoke's path costs about 23 instructions per call (the mode's switch and
 * the hook's arguments gathered each time) and tkb_device_synchronize 6 more, around a
 * forward hook that may cost 2: at 8 ns a call that was half the reported time. Here the
 * mode is looked at once per batch and the hook and its arguments are held in registers
 * across the loop (8 instructions a call for an empty forward hook). A plain-function
 * entry's forward hook only forwards to the user's function, so its loop calls that
 * function directly (5 instructions a call): the shape a user's own loop of calls has.
 * On the cpu device a call returns when its work is done (its synchronize does
 * nothing), so the loop synchronizes only on other devices, after every call.
 *
 * The floor is this same loop over hooks that do nothing (tkb__calls_hollow), so the
 * two differ only in what the function itself does.
 */
#include "bench.h"
#include "std_fn.h"

#include <string.h>

static tkb_status no_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)a, (void)state, (void)outputs;
  return TKB_OK;
}

static tkb_status no_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                 tkb_array *const *residuals) {
  (void)a, (void)state, (void)outputs, (void)residuals;
  return TKB_OK;
}

static tkb_status no_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                         const tkb_array *const *cotangents, tkb_array *const *grads) {
  (void)a, (void)state, (void)residuals, (void)cotangents, (void)grads;
  return TKB_OK;
}

static void no_plain(void *ctx) { (void)ctx; }

static const tkb_fn hollow_hooks = {.name = "hollow", .forward = no_forward,
                                    .forward_res = no_forward_res, .vjp = no_vjp};

void tkb__calls_init(tkb__calls *c, tkb_std_fn *f) {
  *c = (tkb__calls){.f = f, .hooks = f->fn,
                    .sync_each = strcmp(f->device->backend->kind, "cpu") != 0};
  /* (a plain function on a device that needs synchronizing keeps the hook's path) */
  if (f->mode == TKB_MODE_FORWARD && !c->sync_each) tkb__plain_target(f->fn, &c->plain, &c->plain_ctx);
}

void tkb__calls_hollow(tkb__calls *c) {
  c->hooks = &hollow_hooks;
  if (c->plain) c->plain = no_plain;
}

/* One loop per mode, each with its hook and arguments in locals the compiler keeps in
 * registers. A failing call ends the batch with its status. */
static tkb_status forward_calls(const tkb__calls *c, int n) {
  tkb_std_fn *f = c->f;
  tkb_status (*forward)(const tkb_args *, void *, tkb_array *const *) = c->hooks->forward;
  const tkb_args *args = &f->args;
  void *state = f->state;
  tkb_array *const *outputs = f->outputs;
  tkb_device *dev = f->device;
  tkb_status st = TKB_OK;
  if (!c->sync_each) {
    for (int k = 0; k < n && !st; k++) st = forward(args, state, outputs);
    return st;
  }
  for (int k = 0; k < n && !st; k++) {
    st = forward(args, state, outputs);
    if (!st) st = tkb_device_synchronize(dev);
  }
  return st;
}

static tkb_status plain_calls(const tkb__calls *c, int n) {
  tkb_plain_fn call = c->plain;
  void *ctx = c->plain_ctx;
  for (int k = 0; k < n; k++) call(ctx);
  return TKB_OK;
}

/* The other modes: their hooks as tkb__std_invoke calls them, reading c->hooks. */
static tkb_status invoke_once(const tkb__calls *c) {
  tkb_std_fn *f = c->f;
  const tkb_fn *fn = c->hooks;
  switch (f->mode) {
    case TKB_MODE_FORWARD:
      return fn->forward(&f->args, f->state, f->outputs);
    case TKB_MODE_FORWARD_RES:
      return fn->forward_res(&f->args, f->state, f->outputs, f->residuals);
    case TKB_MODE_VJP:
      return fn->vjp(&f->args, f->state, (const tkb_array *const *)f->residuals, f->cotangents, f->grads);
    case TKB_MODE_FORWARD_AND_VJP: {
      tkb_status st = fn->forward_res(&f->args, f->state, f->outputs, f->residuals);
      return st ? st
                : fn->vjp(&f->args, f->state, (const tkb_array *const *)f->residuals,
                          (const tkb_array *const *)f->outputs, f->grads);
    }
  }
  return tkb_set_error(TKB_ERR_INTERNAL, "invalid mode %d", (int)f->mode);
}

tkb_status tkb__calls_run(const tkb__calls *c, int n) {
  if (c->plain) return plain_calls(c, n);
  if (c->f->mode == TKB_MODE_FORWARD) return forward_calls(c, n);
  tkb_status st = TKB_OK;
  for (int k = 0; k < n && !st; k++) {
    st = invoke_once(c);
    if (!st && c->sync_each) st = tkb_device_synchronize(c->f->device);
  }
  return st;
}
