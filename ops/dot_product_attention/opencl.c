/*
 * opencl.c - tkb__op_dot_product_attention_opencl: dot_product_attention on an OpenCL
 * device (impl "opencl"; kernels in opencl.cl, embedded at build time as
 * tkb__opencl_src_dot_product_attention and compiled after ops/common/opencl.cl in the
 * prepare hook for the call's dtypes, head dims, bias, mask and causality). Signature,
 * validation, output, residual and grads as the cpu implementations (attention.h). The
 * hooks launch
 *   forward, forward_res:  attn_fwd (lse written in forward_res)
 *   vjp:                   attn_bwd_dq (delta, and dq when wanted), attn_bwd_dkv (dk and
 *                          dv when wanted), attn_bwd_dbias (when bias is given and dbias
 *                          wanted)
 * The vjp's delta [B, H, T] comes from prepare (tkb_device_alloc); a call allocates
 * nothing. A work-item holds its row's head dims in registers, so D and Dv are at most
 * ATTN_CL_MAX_D (the suite's largest, 256); larger ones are refused in prepare.
 */
#include "../common/ops_common.h"
#include "attention.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char tkb__opencl_src_dot_product_attention[];

#define WHO "dot_product_attention (opencl)"
#define ATTN_CL_MAX_D 256
#define ATTN_CL_TILE 32 /* opencl.cl's ATTN_TILE: rows (keys) per work-group */

typedef struct attn_cl {
  tkb_device *dev;
  tkb_kernel *fwd, *dq, *dkv, *dbias;
  attn_plan p; /* the shapes prepared for (its bias/mask pointers are not used) */
  tkb_spec bias, mask;
  bool has_bias, has_mask;
  ops_workspace ws; /* vjp modes: delta */
  void *delta;      /* [B, H, T] math type */
} attn_cl;

static void cl_release(void *state) {
  attn_cl *s = state;
  if (!s) return;
  tkb__kernel_free(s->dev, s->fwd);
  tkb__kernel_free(s->dev, s->dq);
  tkb__kernel_free(s->dev, s->dkv);
  tkb__kernel_free(s->dev, s->dbias);
  ops_workspace_free(&s->ws);
  free(s);
}

static bool same_plan(const attn_cl *s, const attn_plan *p) {
  return tkb_spec_equal(&s->p.q, &p->q) && tkb_spec_equal(&s->p.k, &p->k) &&
         tkb_spec_equal(&s->p.v, &p->v) && s->p.causal == p->causal && s->p.scale == p->scale &&
         s->has_bias == (p->bias != NULL) && s->has_mask == (p->mask != NULL) &&
         (!p->bias || tkb_spec_equal(&s->bias, p->bias)) && (!p->mask || tkb_spec_equal(&s->mask, p->mask));
}

static tkb_status cl_prepare(const tkb_args *a, void **state) {
  attn_plan p;
  tkb_status st = tkb__attn_plan(a, &p);
  if (!st) st = ops_require_device(a->device, "opencl", WHO);
  if (st) return st;
  if (p.D > ATTN_CL_MAX_D || p.Dv > ATTN_CL_MAX_D)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, WHO ": head dims D = %lld, Dv = %lld; the OpenCL "
                         "kernels take at most %d", (long long)p.D, (long long)p.Dv, ATTN_CL_MAX_D);
  attn_cl *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
  s->dev = a->device;
  s->p = p;
  s->has_bias = p.bias != NULL;
  s->has_mask = p.mask != NULL;
  if (p.bias) s->bias = *p.bias;
  if (p.mask) s->mask = *p.mask;
  char opts[256];
  snprintf(opts, sizeof opts,
           "-DX_DT=%s -DB_DT=%s -DOPS_F64=%d -DATTN_D=%lld -DATTN_DV=%lld -DHAS_BIAS=%d "
           "-DHAS_MASK=%d -DCAUSAL=%d -cl-denorms-are-zero",
           tkb_dtype_name(p.q.dtype), tkb_dtype_name(p.bias ? p.bias->dtype : TKB_FLOAT32), p.f64,
           (long long)p.D, (long long)p.Dv, p.bias != NULL, p.mask != NULL, p.causal);
  const char *src = tkb__opencl_src_dot_product_attention;
  st = ops_cl_kernel_build(s->dev, src, opts, "attn_fwd", &s->fwd);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "attn_bwd_dq", &s->dq);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "attn_bwd_dkv", &s->dkv);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "attn_bwd_dbias", &s->dbias);
  if (!st && ops_mode_has_vjp(a->mode)) {
    const size_t delta = (size_t)(p.B * p.H * p.T) * (p.f64 ? sizeof(double) : sizeof(float));
    st = ops_workspace_alloc(&s->ws, s->dev, 1, &delta, &s->delta);
  }
  if (st) {
    cl_release(s);
    return st;
  }
  *state = s;
  return TKB_OK;
}

/* What every launch passes: the inputs, then (after the kernel's own buffers) the
 * geometry. Absent bias and mask are bound to q (never read: the kernels are compiled
 * without them). */
typedef struct attn_launch {
  void *q, *k, *v, *bias, *mask;
  int64_t B, T, S, H, Hk, G;
  float scale_f;
  double scale_d;
  int64_t bst[4], mst[4];
} attn_launch;

static tkb_status bind(const tkb_args *a, const attn_cl *s, attn_plan *p, attn_launch *l) {
  attn_inputs in;
  tkb_status st = tkb__attn_plan(a, p);
  if (!st) st = tkb__attn_inputs(a, p, &in);
  if (st) return st;
  if (!s || !same_plan(s, p)) return ops_state_error(WHO, s != NULL, "other shapes or statics");
  *l = (attn_launch){.q = in.q->data, .k = in.k->data, .v = in.v->data,
                     .bias = in.bias ? in.bias->data : in.q->data,
                     .mask = in.mask ? in.mask->data : in.q->data,
                     .B = p->B, .T = p->T, .S = p->S, .H = p->H, .Hk = p->Hk, .G = p->G,
                     .scale_f = (float)p->scale, .scale_d = p->scale};
  memcpy(l->bst, p->bias_st, sizeof l->bst);
  memcpy(l->mst, p->mask_st, sizeof l->mst);
  return TKB_OK;
}

/* The arguments q, k, v, bias, mask into args[0..5) and the geometry (B .. mask
 * strides) into args[at .. at + 9); returns at + 9. */
static int geometry_args(attn_launch *l, bool f64, tkb_karg *args, int at) {
  args[0] = TKB_KARG_BUF(l->q);
  args[1] = TKB_KARG_BUF(l->k);
  args[2] = TKB_KARG_BUF(l->v);
  args[3] = TKB_KARG_BUF(l->bias);
  args[4] = TKB_KARG_BUF(l->mask);
  args[at++] = TKB_KARG_VAL(l->B);
  args[at++] = TKB_KARG_VAL(l->T);
  args[at++] = TKB_KARG_VAL(l->S);
  args[at++] = TKB_KARG_VAL(l->H);
  args[at++] = TKB_KARG_VAL(l->Hk);
  args[at++] = TKB_KARG_VAL(l->G);
  args[at++] = f64 ? TKB_KARG_VAL(l->scale_d) : TKB_KARG_VAL(l->scale_f);
  args[at++] = TKB_KARG_VAL(l->bst);
  args[at++] = TKB_KARG_VAL(l->mst);
  return at;
}

/* One work-group of ATTN_CL_TILE work-items per tile of `rows` for each of `heads`. */
static tkb_status launch_rows(const attn_cl *s, tkb_kernel *k, int64_t heads, int64_t rows,
                              int nargs, const tkb_karg *args) {
  const size_t local = ATTN_CL_TILE;
  const size_t global = (size_t)(heads * ((rows + ATTN_CL_TILE - 1) / ATTN_CL_TILE)) * local;
  return tkb__kernel_launch(s->dev, k, 1, &global, &local, nargs, args);
}

static tkb_status run_forward(const tkb_args *a, attn_cl *s, tkb_array *out, tkb_array *lse) {
  attn_plan p;
  attn_launch l;
  tkb_status st = bind(a, s, &p, &l);
  if (!st) st = tkb__attn_check_forward(&p, out, lse);
  if (st) return st;
  void *od = out->data, *ld = lse ? lse->data : out->data;
  int32_t write_lse = lse != NULL;
  tkb_karg args[17];
  args[5] = TKB_KARG_BUF(od);
  args[6] = TKB_KARG_BUF(ld);
  int n = geometry_args(&l, p.f64, args, 7);
  args[n++] = TKB_KARG_VAL(write_lse);
  return launch_rows(s, s->fwd, p.B * p.H, p.T, n, args);
}

static tkb_status cl_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return run_forward(a, state, outputs[0], NULL);
}

static tkb_status cl_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                 tkb_array *const *residuals) {
  if (!residuals[0])
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, WHO ": forward_res needs the residual lse");
  return run_forward(a, state, outputs[0], residuals[0]);
}

static tkb_status cl_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                         const tkb_array *const *cotangents, tkb_array *const *grads) {
  attn_cl *s = state;
  attn_plan p;
  attn_launch l;
  tkb_status st = bind(a, s, &p, &l);
  if (!st) st = tkb__attn_check_vjp(&p, residuals[0], cotangents[0], grads);
  if (st) return st;
  if (!s->delta && p.B * p.H * p.T > 0) return ops_vjp_unprepared(WHO);
  tkb_array *dbias = p.bias ? grads[3] : NULL;
  if (!grads[0] && !grads[1] && !grads[2] && !dbias) return TKB_OK;
  void *lse = residuals[0]->data, *dout = cotangents[0]->data, *delta = s->delta;
  void *dq = grads[0] ? grads[0]->data : lse, *dk = grads[1] ? grads[1]->data : lse;
  void *dv = grads[2] ? grads[2]->data : lse, *db = dbias ? dbias->data : lse;
  if (!delta) delta = lse; /* (no query rows: nothing reads it) */
  int32_t write_dq = grads[0] != NULL, write_dk = grads[1] != NULL, write_dv = grads[2] != NULL;
  tkb_karg args[24];
  /* delta (every other grad needs it) and dq */
  args[5] = TKB_KARG_BUF(lse);
  args[6] = TKB_KARG_BUF(dout);
  args[7] = TKB_KARG_BUF(delta);
  args[8] = TKB_KARG_BUF(dq);
  int n = geometry_args(&l, p.f64, args, 9);
  args[n++] = TKB_KARG_VAL(write_dq);
  if ((st = launch_rows(s, s->dq, p.B * p.H, p.T, n, args))) return st;
  if (write_dk || write_dv) {
    args[8] = TKB_KARG_BUF(dk);
    args[9] = TKB_KARG_BUF(dv);
    n = geometry_args(&l, p.f64, args, 10);
    args[n++] = TKB_KARG_VAL(write_dk);
    args[n++] = TKB_KARG_VAL(write_dv);
    if ((st = launch_rows(s, s->dkv, p.B * p.Hk, p.S, n, args))) return st;
  }
  if (dbias) {
    int64_t dims[4] = {1, 1, 1, 1};
    for (int i = 0; i < p.bias->rank; i++) dims[4 - p.bias->rank + i] = p.bias->shape[i];
    args[8] = TKB_KARG_BUF(db);
    n = geometry_args(&l, p.f64, args, 9);
    args[n++] = TKB_KARG_VAL(dims);
    const size_t global = (size_t)(dims[0] * dims[1] * dims[2] * dims[3]);
    st = tkb__kernel_launch(s->dev, s->dbias, 1, &global, NULL, n, args);
  }
  return st;
}

const tkb_fn tkb__op_dot_product_attention_opencl = {
    .name = "dot_product_attention",
    .params = tkb__attn_params,
    .n_params = TKB_ATTN_N_PARAMS,
    .infer = tkb__attn_infer,
    .prepare = cl_prepare,
    .release = cl_release,
    .forward = cl_forward,
    .forward_res = cl_forward_res,
    .vjp = cl_vjp,
};
