/* builtin.c - registers the ops shipped with tkbench: the op list, and each op's entries
 * for each of its implementations (builtin.h). */
#include "builtin.h"

#include <pthread.h>
#include <string.h>

/* The op list: one line per op, in the order `tkbench list` shows them. X(op) names
 * the declaration tkb__op_<op> in ops/<op>/specs.c. */
#define TKB_BUILTIN_OPS(X)              \
  X(normalization)                      \
  X(gated_linear_unit)                  \
  X(ragged_dot)                         \
  X(linear_softmax_cross_entropy_loss)  \
  X(dot_product_attention)

#define TKB_DECLARE_OP(op) extern const tkb__op_decl tkb__op_##op;
TKB_BUILTIN_OPS(TKB_DECLARE_OP)
#define TKB_LIST_OP(op) &tkb__op_##op,
static const tkb__op_decl *const ops[] = {TKB_BUILTIN_OPS(TKB_LIST_OP)};
#define N_OPS (sizeof ops / sizeof ops[0])

/* Every impl row of every op gives a kind; they fit here many times over. */
#define MAX_KINDS 16

struct tkb__op_specs {
  const tkb__op_decl *op;
  const char *kind; /* the device kind whose implementations are registered */
};

tkb_status tkb__op_add(tkb__op_specs *out, const tkb_benchmark_def *entry) {
  for (size_t i = 0; i < out->op->n_impls; i++) {
    const tkb__op_impl *impl = &out->op->impls[i];
    if (strcmp(impl->device_kind, out->kind) != 0) continue;
    tkb_benchmark_def d = *entry;
    d.op = out->op->name;
    d.impl_name = impl->name;
    d.fn = impl->fn;
    d.device_kind = impl->device_kind;
    tkb_status st = tkb_register_benchmark(&d);
    if (st) return st;
  }
  return TKB_OK;
}

static bool has_kind(const tkb__op_decl *op, const char *kind) {
  for (size_t i = 0; i < op->n_impls; i++)
    if (strcmp(op->impls[i].device_kind, kind) == 0) return true;
  return false;
}

/*
 * Entries are registered a device kind at a time, the kinds in the order they first
 * appear in the op list's impl rows (cpu, then the devices), and within a kind op by op
 * in the list's order: so a listing shows the host's entries first and each device's
 * together, and a spec's entries of one kind stay next to each other.
 */
static tkb_status register_ops(void) {
  const char *kinds[MAX_KINDS];
  size_t n_kinds = 0;
  for (size_t o = 0; o < N_OPS; o++)
    for (size_t i = 0; i < ops[o]->n_impls; i++) {
      size_t k = 0;
      while (k < n_kinds && strcmp(kinds[k], ops[o]->impls[i].device_kind) != 0) k++;
      if (k == n_kinds) {
        if (n_kinds == MAX_KINDS)
          return tkb_set_error(TKB_ERR_INTERNAL, "the shipped ops name more than %d device "
                               "kinds; raise MAX_KINDS in ops/builtin.c", MAX_KINDS);
        kinds[n_kinds++] = ops[o]->impls[i].device_kind;
      }
    }
  for (size_t k = 0; k < n_kinds; k++)
    for (size_t o = 0; o < N_OPS; o++) {
      if (!has_kind(ops[o], kinds[k])) continue;
      tkb__op_specs out = {.op = ops[o], .kind = kinds[k]};
      tkb_status st = ops[o]->specs(&out);
      if (st) return st;
    }
  return TKB_OK;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static tkb_status once_status;

static void register_all(void) { once_status = register_ops(); }

tkb_status tkb_register_builtin_ops(void) {
  pthread_once(&once, register_all);
  return once_status;
}
