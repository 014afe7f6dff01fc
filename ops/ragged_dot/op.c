/*
 * op.c - ragged_dot's signature, shape inference and counts, shared by the reference
 * and cpu implementations (math in ragged_dot.h; group sizes in group_sizes.c).
 */
#include "ragged_dot.h"

#include <math.h>
#include <string.h>

const tkb_param tkb__rd_params[RD_N_PARAMS] = {
    {.name = "lhs", .kind = TKB_KIND_ARRAY},
    {.name = "rhs", .kind = TKB_KIND_ARRAY},
    {.name = "group_sizes", .kind = TKB_KIND_ARRAY},
};

static bool dtype_ok(tkb_dtype d) {
  return d == TKB_BFLOAT16 || d == TKB_FLOAT16 || d == TKB_FLOAT32 || d == TKB_FLOAT64;
}

/* The concrete group sizes of the call, or NULL while group_sizes is abstract. */
static const int32_t *concrete_sizes(const tkb_args *a) {
  const tkb_array *gs = ops_host_array(a, "group_sizes");
  return gs ? gs->data : NULL;
}

tkb_status tkb__rd_plan_make(const tkb_args *a, rd_plan *p) {
  char lb[160], rb[160], gb[160];
  memset(p, 0, sizeof *p);
  const tkb_spec *lhs = tkb_args_spec(a, "lhs"), *rhs = tkb_args_spec(a, "rhs");
  const tkb_spec *gs = tkb_args_spec(a, "group_sizes");
  if (!lhs || !rhs || !gs)
    return tkb_set_error(TKB_ERR_MISSING_ARGUMENT, "ragged_dot: %s is required (got None)",
                         !lhs ? "lhs" : !rhs ? "rhs" : "group_sizes");
  tkb_status st = tkb_spec_check(lhs, "lhs");
  if (st == TKB_OK) st = tkb_spec_check(rhs, "rhs");
  if (st == TKB_OK) st = tkb_spec_check(gs, "group_sizes");
  if (st != TKB_OK) return st;
  ops_spec_str(lhs, lb, sizeof lb);
  ops_spec_str(rhs, rb, sizeof rb);
  ops_spec_str(gs, gb, sizeof gb);
  if (!dtype_ok(lhs->dtype))
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "ragged_dot: lhs is %s; lhs's dtype must be bfloat16, float16, "
                         "float32 or float64", lb);
  if (rhs->dtype != lhs->dtype)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "ragged_dot: lhs is %s but rhs is %s; rhs must have lhs's dtype (%s)",
                         lb, rb, tkb_dtype_name(lhs->dtype));
  if (gs->dtype != TKB_INT32)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "ragged_dot: group_sizes is %s; group_sizes must be int32", gb);
  if (lhs->rank != 2)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "ragged_dot: lhs has shape %s (rank %d) and rhs %s; lhs must be "
                         "[M, K]", lb, lhs->rank, rb);
  if (rhs->rank != 3)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "ragged_dot: rhs has shape %s (rank %d) and lhs %s; rhs must be "
                         "[G, K, N]", rb, rhs->rank, lb);
  if (rhs->shape[1] != lhs->shape[1])
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "ragged_dot: lhs has shape %s and rhs has shape %s; lhs.shape[1] "
                         "(K = %lld) must equal rhs.shape[1] (%lld)",
                         lb, rb, (long long)lhs->shape[1], (long long)rhs->shape[1]);
  if (gs->rank != 1 || gs->shape[0] != rhs->shape[0])
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "ragged_dot: group_sizes has shape %s and rhs has shape %s; "
                         "group_sizes must be [G] with G = rhs.shape[0] = %lld",
                         gb, rb, (long long)rhs->shape[0]);
  p->lhs = *lhs;
  p->rhs = *rhs;
  p->gs = *gs;
  p->m = lhs->shape[0];
  p->k = lhs->shape[1];
  p->g = rhs->shape[0];
  p->n = rhs->shape[2];
  p->f64 = lhs->dtype == TKB_FLOAT64;
  p->out = TKB_SPEC(lhs->dtype, p->m, p->n);
  st = tkb_spec_check(&p->out, "the output");
  if (st != TKB_OK) return st;
  const int32_t *sizes = concrete_sizes(a);
  return sizes ? tkb__rd_check_group_sizes(p, sizes) : TKB_OK;
}

tkb_status tkb__rd_infer(const tkb_args *a, tkb_shapes *shapes) {
  rd_plan p;
  tkb_status st = tkb__rd_plan_make(a, &p);
  if (st != TKB_OK) return st;
  memset(shapes, 0, sizeof *shapes);
  shapes->n_outputs = 1;
  shapes->outputs[0] = p.out;
  shapes->output_names[0] = "out";
  shapes->n_residuals = 0;
  return TKB_OK;
}

tkb_status tkb__rd_bind(const tkb_args *a, rd_plan *p, const tkb_array **lhs,
                        const tkb_array **rhs, const int32_t **sizes) {
  tkb_status st = tkb__rd_plan_make(a, p);
  if (st != TKB_OK) return st;
  *lhs = tkb_args_array(a, "lhs");
  *rhs = tkb_args_array(a, "rhs");
  *sizes = concrete_sizes(a);
  const char *missing = !*lhs || (!(*lhs)->data && (*lhs)->nbytes)   ? "lhs"
                        : !*rhs || (!(*rhs)->data && (*rhs)->nbytes) ? "rhs"
                        : !*sizes && p->g > 0                         ? "group_sizes"
                                                                      : NULL;
  if (missing)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "ragged_dot: %s is abstract (no data); the hooks that compute need "
                         "concrete arrays", missing);
  return TKB_OK;
}

tkb_status tkb__rd_check_buffer(const tkb_array *arr, const tkb_spec *want, const char *what) {
  return ops_check_buffer("ragged_dot", arr, want, what);
}

/*
 * How many groups have rows: exact when the sizes are known (a concrete array or the
 * fixed-sizes initializer), else the expectation for a random composition of M rows
 * into G groups, G (1 - (1 - 1/G)^M).
 */
static double nonempty_groups(const tkb_args *a, const rd_plan *p) {
  const int32_t *sizes = concrete_sizes(a);
  int i = tkb_args_index(a, "group_sizes");
  const tkb_value *v = i >= 0 ? &a->values[i] : NULL;
  if (!sizes && v && v->tag == TKB_VALUE_ABSTRACT && v->init &&
      v->init->kind == TKB_INIT_CALLBACK && v->init->callback == tkb__rd_init_fixed_groups)
    sizes = v->init->user;
  if (sizes) {
    double n = 0;
    for (int64_t g = 0; g < p->g; g++) n += sizes[g] > 0;
    return n;
  }
  if (p->g == 0) return 0;
  return (double)p->g * (1.0 - pow(1.0 - 1.0 / (double)p->g, (double)p->m));
}

/*
 * Counts. Forward: out = lhs_g @ rhs[g] over the groups, 2 M K N flops; bytes are lhs,
 * the rhs groups that have rows and group_sizes read, out written. The vjp does two
 * products of the same size and reads lhs, rhs, dout, writes dlhs and all of drhs.
 * There are no residuals, so forward_res counts as forward. Items are rows (tokens).
 */
tkb_status tkb__rd_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out) {
  rd_plan p;
  tkb_status st = tkb__rd_plan_make(a, &p);
  if (st != TKB_OK) return st;
  double es = (double)tkb_dtype_size(p.lhs.dtype);
  double m = (double)p.m, k = (double)p.k, n = (double)p.n, g = (double)p.g;
  double lhs_b = m * k * es, rhs_used_b = nonempty_groups(a, &p) * k * n * es;
  double rhs_b = g * k * n * es, out_b = m * n * es, gs_b = g * 4;
  double fwd_flops = 2 * m * k * n, fwd_bytes = lhs_b + rhs_used_b + gs_b + out_b;
  double vjp_flops = 2 * fwd_flops;
  double vjp_bytes = lhs_b + rhs_used_b + gs_b + out_b + lhs_b + rhs_b;
  *out = (tkb_counts){.items = m};
  switch (mode) {
    case TKB_MODE_FORWARD:
    case TKB_MODE_FORWARD_RES: out->flops = fwd_flops; out->bytes = fwd_bytes; break;
    case TKB_MODE_VJP: out->flops = vjp_flops; out->bytes = vjp_bytes; break;
    case TKB_MODE_FORWARD_AND_VJP:
      out->flops = fwd_flops + vjp_flops;
      out->bytes = fwd_bytes + vjp_bytes;
      break;
  }
  return TKB_OK;
}
