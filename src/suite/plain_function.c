/*
 * plain_function.c - the shortest way to a suite entry: a C function of one context
 * pointer, `void f(void *ctx)`, timed as it is (Google Benchmark's habit), for code that
 * needs no arrays filled, no static arguments bound and no backward pass. It becomes an
 * ordinary entry (forward mode, impl "c") whose forward hook calls f(ctx), so every
 * method, stopping rule, output and comparison applies unchanged. A batch of timed
 * calls skips the forward hook and calls f(ctx) itself (tkb__plain_target, for
 * src/bench/calls.c): the hook's own cost would otherwise be timed with every call.
 */
#include "bench.h"
#include "runner.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* What one registration keeps alive for as long as the process: the entry's fn and
 * def point into it. Kept on a list so it stays reachable (never a leak). */
typedef struct plain_entry {
  tkb_fn fn;
  tkb_plain_fn call;
  void *ctx;
  tkb_counts per_call;
  char *name;
  struct plain_entry *next;
} plain_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static plain_entry *entries;

/* The harness times functions with at least one output it allocates; a plain function
 * has none of its own, so it gets one float that nothing reads. */
static tkb_status plain_infer(const tkb_args *a, tkb_shapes *shapes) {
  (void)a;
  shapes->n_outputs = 1;
  shapes->outputs[0] = TKB_SPEC(TKB_FLOAT32, 1);
  shapes->output_names[0] = "none";
  return TKB_OK;
}

static tkb_status plain_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)state;
  const plain_entry *e = a->fn->ctx;
  e->call(e->ctx);
  *(float *)outputs[0]->data = 0; /* defined, for the outputs' NaN scan */
  return TKB_OK;
}

bool tkb__plain_target(const tkb_fn *fn, tkb_plain_fn *call, void **ctx) {
  if (!fn || fn->forward != plain_forward) return false;
  const plain_entry *e = fn->ctx;
  *call = e->call;
  *ctx = e->ctx;
  return true;
}

static tkb_status plain_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out) {
  (void)mode;
  *out = ((const plain_entry *)a->fn->ctx)->per_call;
  return TKB_OK;
}

tkb_status tkb_register_function(const char *name, tkb_plain_fn fn, void *ctx, double bytes_per_call,
                                 double flops_per_call) {
  if (!fn)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_register_function(\"%s\"): fn is NULL; give "
                         "the function to time", name ? name : "(null)");
  if (!(bytes_per_call >= 0) || !(flops_per_call >= 0))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_register_function(\"%s\"): bytes_per_call %g "
                         "and flops_per_call %g must be >= 0 (0: unknown)", name ? name : "(null)",
                         bytes_per_call, flops_per_call);
  plain_entry *e = calloc(1, sizeof *e);
  if (e && !(e->name = tkb__strdup(name ? name : ""))) {
    free(e);
    e = NULL;
  }
  if (!e) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory registering \"%s\"", name ? name : "");
  e->call = fn;
  e->ctx = ctx;
  e->per_call = (tkb_counts){.items = 1, .bytes = bytes_per_call, .flops = flops_per_call};
  e->fn = (tkb_fn){.name = e->name, .infer = plain_infer, .forward = plain_forward, .ctx = e};
  const tkb_benchmark_def def = {.op = name, .name = name, .impl_name = "c", .fn = &e->fn,
                                 .mode = TKB_MODE_FORWARD, .counts = plain_counts, .tags = "cpu",
                                 .device_kind = "cpu"};
  tkb_status st = tkb_register_benchmark(&def);
  if (st) {
    free(e->name);
    free(e);
    return st;
  }
  pthread_mutex_lock(&lock);
  e->next = entries;
  entries = e;
  pthread_mutex_unlock(&lock);
  return TKB_OK;
}
