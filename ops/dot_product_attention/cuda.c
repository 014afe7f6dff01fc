/*
 * cuda.c - tkb__op_dot_product_attention_cuda: dot_product_attention on a CUDA device
 * (impl "cuda"). This half lives in libtkbench and links no CUDA: it validates
 * (attention.h: the same signature, output, residual and grads as the cpu
 * implementations), owns the state and the vjp's workspace, and hands each call to the
 * kernels of cuda.cu (in libtkbench-cuda.so) through the device's backend kernel
 * interface (src/backend/cuda/ops.c), one attn_cu_args (attn_cuda.h) per launch:
 *   prepare:      tkb__kernel_build(dev, "dot_product_attention", "", "attn_forward" |
 *                 "attn_vjp"); the delta workspace [B, H, T] (vjp modes)
 *   forward, forward_res:  attn_forward (lse written when asked)
 *   vjp:          attn_vjp (delta and dq, then dk and dv, then dbias)
 * The kernels hold a head's columns in registers: D and Dv at most ATTN_CU_MAX_D (256,
 * the largest head dim of the suite); larger ones are refused in prepare. On a machine
 * without a GPU the device does not open, so these never run there.
 */
#include "../common/ops_common.h"
#include "attention.h"
#include "attn_cuda.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define WHO "dot_product_attention (cuda)"

typedef struct attn_cu {
  tkb_device *dev;
  tkb_kernel *fwd, *vjp;
  attn_plan p;     /* the shapes prepared for (its bias/mask pointers are not used) */
  tkb_spec bias, mask;
  bool has_bias, has_mask;
  ops_workspace ws; /* vjp modes: delta */
  void *delta;     /* [B, H, T] math type, vjp modes */
} attn_cu;

static void cu_release(void *state) {
  attn_cu *s = state;
  if (!s) return;
  tkb__kernel_free(s->dev, s->fwd);
  tkb__kernel_free(s->dev, s->vjp);
  ops_workspace_free(&s->ws);
  free(s);
}

static bool same_plan(const attn_cu *s, const attn_plan *p) {
  return tkb_spec_equal(&s->p.q, &p->q) && tkb_spec_equal(&s->p.k, &p->k) &&
         tkb_spec_equal(&s->p.v, &p->v) && s->p.causal == p->causal && s->p.scale == p->scale &&
         s->has_bias == (p->bias != NULL) && s->has_mask == (p->mask != NULL) &&
         (!p->bias || tkb_spec_equal(&s->bias, p->bias)) && (!p->mask || tkb_spec_equal(&s->mask, p->mask));
}

static tkb_status cu_prepare(const tkb_args *a, void **state) {
  attn_plan p;
  tkb_status st = tkb__attn_plan(a, &p);
  if (!st) st = ops_require_device(a->device, "cuda", WHO);
  if (st) return st;
  tkb_device *dev = a->device;
  if (p.D > ATTN_CU_MAX_D || p.Dv > ATTN_CU_MAX_D)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, WHO ": head dims D = %lld, Dv = %lld; the CUDA "
                         "kernels take at most %d", (long long)p.D, (long long)p.Dv, ATTN_CU_MAX_D);
  attn_cu *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
  s->dev = dev;
  s->p = p;
  s->has_bias = p.bias != NULL;
  s->has_mask = p.mask != NULL;
  if (p.bias) s->bias = *p.bias;
  if (p.mask) s->mask = *p.mask;
  st = tkb__kernel_build(dev, "dot_product_attention", "", "attn_forward", &s->fwd);
  if (!st) st = tkb__kernel_build(dev, "dot_product_attention", "", "attn_vjp", &s->vjp);
  if (!st && ops_mode_has_vjp(a->mode)) {
    const size_t delta = (size_t)(p.B * p.H * p.T) * (p.f64 ? sizeof(double) : sizeof(float));
    st = ops_workspace_alloc(&s->ws, dev, 1, &delta, &s->delta);
  }
  if (st) {
    cu_release(s);
    return st;
  }
  *state = s;
  return TKB_OK;
}

/* Plans and binds the call against the prepared state; the common launch arguments. */
static tkb_status bind(const tkb_args *a, const attn_cu *s, attn_plan *p, attn_cu_args *g) {
  attn_inputs in;
  tkb_status st = tkb__attn_plan(a, p);
  if (!st) st = tkb__attn_inputs(a, p, &in);
  if (st) return st;
  if (!s || !same_plan(s, p)) return ops_state_error(WHO, s != NULL, "other shapes or statics");
  *g = (attn_cu_args){
      .q = in.q->data,
      .k = in.k->data,
      .v = in.v->data,
      .bias = in.bias ? in.bias->data : NULL,
      .mask = in.mask ? in.mask->data : NULL,
      .B = p->B, .T = p->T, .S = p->S, .H = p->H, .Hk = p->Hk, .D = p->D, .Dv = p->Dv, .G = p->G,
      .scale = p->scale,
      .dtype = (int32_t)p->q.dtype,
      .bias_dtype = (int32_t)(p->bias ? p->bias->dtype : TKB_FLOAT32),
      .causal = p->causal,
  };
  memcpy(g->bias_st, p->bias_st, sizeof g->bias_st);
  memcpy(g->mask_st, p->mask_st, sizeof g->mask_st);
  for (int i = 0; i < 4; i++) g->bias_dims[i] = 1;
  if (p->bias)
    for (int i = 0; i < p->bias->rank; i++) g->bias_dims[4 - p->bias->rank + i] = p->bias->shape[i];
  return TKB_OK;
}

static tkb_status run_forward(const tkb_args *a, attn_cu *s, tkb_array *out, tkb_array *lse) {
  attn_plan p;
  attn_cu_args g;
  tkb_status st = bind(a, s, &p, &g);
  if (!st) st = tkb__attn_check_forward(&p, out, lse);
  if (st) return st;
  g.out = out->data;
  g.lse_out = lse ? lse->data : NULL;
  return ops_launch_args(s->dev, s->fwd, &g, sizeof g);
}

static tkb_status cu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return run_forward(a, state, outputs[0], NULL);
}

static tkb_status cu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                 tkb_array *const *residuals) {
  if (!residuals[0])
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, WHO ": forward_res needs the residual lse");
  return run_forward(a, state, outputs[0], residuals[0]);
}

static tkb_status cu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                         const tkb_array *const *cotangents, tkb_array *const *grads) {
  attn_cu *s = state;
  attn_plan p;
  attn_cu_args g;
  tkb_status st = bind(a, s, &p, &g);
  if (!st) st = tkb__attn_check_vjp(&p, residuals[0], cotangents[0], grads);
  if (st) return st;
  if (!s->delta && p.B * p.H * p.T > 0) return ops_vjp_unprepared(WHO);
  tkb_array *dbias = p.bias ? grads[3] : NULL;
  if (!grads[0] && !grads[1] && !grads[2] && !dbias) return TKB_OK;
  g.lse_in = residuals[0]->data;
  g.dout = cotangents[0]->data;
  g.dq = grads[0] ? grads[0]->data : NULL;
  g.dk = grads[1] ? grads[1]->data : NULL;
  g.dv = grads[2] ? grads[2]->data : NULL;
  g.dbias = dbias ? dbias->data : NULL;
  g.delta = s->delta;
  return ops_launch_args(s->dev, s->vjp, &g, sizeof g);
}

const tkb_fn tkb__op_dot_product_attention_cuda = {
    .name = "dot_product_attention",
    .params = tkb__attn_params,
    .n_params = TKB_ATTN_N_PARAMS,
    .infer = tkb__attn_infer,
    .prepare = cu_prepare,
    .release = cu_release,
    .forward = cu_forward,
    .forward_res = cu_forward_res,
    .vjp = cu_vjp,
};
