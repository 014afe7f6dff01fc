/*
 * op.c - linear_softmax_cross_entropy_loss's signature and call validation, shared by
 * the reference (reference.c) and the fast CPU implementation (cpu.c). The math is in
 * lsce.h.
 */
#include "lsce.h"

#include <stdio.h>

const tkb_param tkb__lsce_params[LSCE_N_PARAMS] = {
    {.name = "x", .kind = TKB_KIND_ARRAY},
    {.name = "labels", .kind = TKB_KIND_ARRAY},
    {.name = "w", .kind = TKB_KIND_ARRAY},
    {.name = "reduction",
     .kind = TKB_KIND_STRING,
     .default_value = {.tag = TKB_VALUE_STRING, .s = "mean"},
     .keyword_only = true},
};

#define OP "linear_softmax_cross_entropy_loss"

static bool lsce_float_ok(tkb_dtype dt) {
  return dt == TKB_BFLOAT16 || dt == TKB_FLOAT16 || dt == TKB_FLOAT32 || dt == TKB_FLOAT64;
}

/* x or w: present, valid, rank 2, a float dtype the kernels read. */
static tkb_status check_matrix(const tkb_spec *s, const char *name, const char *dims) {
  char sb[160];
  if (!s)
    return tkb_set_error(TKB_ERR_MISSING_ARGUMENT, OP ": %s is required (got None)", name);
  tkb_status st = tkb_spec_check(s, name);
  if (st) return st;
  if (!lsce_float_ok(s->dtype))
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         OP ": %s has dtype %s; allowed dtypes are bfloat16, float16, "
                         "float32, float64",
                         name, tkb_dtype_name(s->dtype));
  if (s->rank != 2)
    return tkb_set_error(TKB_ERR_BAD_SHAPE, OP ": %s has shape %s (rank %d); %s must have "
                         "rank 2, shape %s",
                         name, ops_spec_str(s, sb, sizeof sb), s->rank, name, dims);
  return TKB_OK;
}

/* Every label of a concrete labels array must index a vocabulary entry. O(B). */
static tkb_status check_label_values(const tkb_array *labels, const tkb_spec *w) {
  char wb[160];
  if (!labels || !labels->data) return TKB_OK; /* abstract: filled later, in range */
  const int32_t *lab = labels->data;
  const int64_t B = labels->spec.shape[0], V = w->shape[1];
  for (int64_t i = 0; i < B; i++)
    if (lab[i] < 0 || lab[i] >= V)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           OP ": labels[%lld] = %d is outside [0, V) = [0, %lld) "
                           "(w has shape %s); every label must index a column of w",
                           (long long)i, (int)lab[i], (long long)V,
                           ops_spec_str(w, wb, sizeof wb));
  return TKB_OK;
}

tkb_status tkb__lsce_plan_make(const tkb_args *a, lsce_plan *p) {
  char xb[160], lb[160], wb[160];
  memset(p, 0, sizeof *p);
  const tkb_spec *x = tkb_args_spec(a, "x"), *labels = tkb_args_spec(a, "labels"),
                 *w = tkb_args_spec(a, "w");
  tkb_status st = check_matrix(x, "x", "[B, Hd]");
  if (!st) st = check_matrix(w, "w", "[Hd, V]");
  if (st) return st;
  if (!labels)
    return tkb_set_error(TKB_ERR_MISSING_ARGUMENT, OP ": labels is required (got None)");
  if ((st = tkb_spec_check(labels, "labels"))) return st;
  if (labels->dtype != TKB_INT32)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         OP ": labels has dtype %s (shape %s); labels must be int32",
                         tkb_dtype_name(labels->dtype), ops_spec_str(labels, lb, sizeof lb));
  if (x->shape[1] != w->shape[0])
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         OP ": x has shape %s and w has shape %s: x.shape[1] (Hd = %lld) "
                         "must equal w.shape[0] (%lld)",
                         ops_spec_str(x, xb, sizeof xb), ops_spec_str(w, wb, sizeof wb),
                         (long long)x->shape[1], (long long)w->shape[0]);
  if (labels->rank != 1 || labels->shape[0] != x->shape[0])
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         OP ": labels has shape %s but x has shape %s: labels must have "
                         "shape [%lld] (one label per row of x)",
                         ops_spec_str(labels, lb, sizeof lb), ops_spec_str(x, xb, sizeof xb),
                         (long long)x->shape[0]);
  if (w->shape[1] < 1)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         OP ": w has shape %s: the vocabulary size V = w.shape[1] must be "
                         ">= 1",
                         ops_spec_str(w, wb, sizeof wb));
  const char *red = tkb_args_string(a, "reduction");
  if (red && strcmp(red, "mean") == 0) p->reduction = LSCE_MEAN;
  else if (red && strcmp(red, "sum") == 0) p->reduction = LSCE_SUM;
  else
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         OP ": reduction='%s' is not supported; allowed 'mean', 'sum'",
                         red ? red : "(null)");
  if ((st = check_label_values(ops_host_array(a, "labels"), w))) return st;

  p->x = *x;
  p->labels = *labels;
  p->w = *w;
  p->B = x->shape[0];
  p->Hd = x->shape[1];
  p->V = w->shape[1];
  p->math = (x->dtype == TKB_FLOAT64 || w->dtype == TKB_FLOAT64) ? TKB_FLOAT64 : TKB_FLOAT32;
  p->loss = (tkb_spec){.dtype = p->math, .rank = 0};
  p->lse = (tkb_spec){.dtype = p->math, .rank = 1, .shape = {p->B}};
  return TKB_OK;
}

tkb_status tkb__lsce_infer(const tkb_args *a, tkb_shapes *shapes) {
  lsce_plan p;
  tkb_status st = tkb__lsce_plan_make(a, &p);
  if (st) return st;
  memset(shapes, 0, sizeof *shapes);
  shapes->n_outputs = 1;
  shapes->outputs[0] = p.loss;
  shapes->output_names[0] = "loss";
  shapes->n_residuals = 1;
  shapes->residuals[0] = p.lse;
  shapes->residual_names[0] = "lse";
  return TKB_OK;
}

tkb_status tkb__lsce_bind(const tkb_args *a, lsce_call *c) {
  tkb_status st = tkb__lsce_plan_make(a, &c->p);
  if (!st) st = ops_concrete(a, OP, "x", &c->x);
  if (!st) st = ops_concrete(a, OP, "labels", &c->labels);
  if (!st) st = ops_concrete(a, OP, "w", &c->w);
  return st;
}

tkb_status tkb__lsce_check_buffer(const tkb_array *arr, const tkb_spec *want,
                                  const char *what) {
  return ops_check_buffer(OP, arr, want, what);
}

bool tkb__lsce_plan_same(const lsce_plan *a, const lsce_plan *b) {
  return tkb_spec_equal(&a->x, &b->x) && tkb_spec_equal(&a->w, &b->w) &&
         tkb_spec_equal(&a->labels, &b->labels) && a->reduction == b->reduction;
}
