/*
 * op.c - dot_product_attention's signature, call validation, shape inference and
 * counts, shared by the reference and cpu implementations (semantics in attention.h).
 */
#include "attention.h"

#include <string.h>

const tkb_param tkb__attn_params[TKB_ATTN_N_PARAMS] = {
    {.name = "q", .kind = TKB_KIND_ARRAY, .default_value = {.tag = TKB_VALUE_UNSET}},
    {.name = "k", .kind = TKB_KIND_ARRAY, .default_value = {.tag = TKB_VALUE_UNSET}},
    {.name = "v", .kind = TKB_KIND_ARRAY, .default_value = {.tag = TKB_VALUE_UNSET}},
    {.name = "bias", .kind = TKB_KIND_ARRAY, .default_value = {.tag = TKB_VALUE_NONE}},
    {.name = "mask", .kind = TKB_KIND_ARRAY, .default_value = {.tag = TKB_VALUE_NONE}},
    {.name = "is_causal",
     .kind = TKB_KIND_BOOL,
     .default_value = {.tag = TKB_VALUE_BOOL, .b = false},
     .keyword_only = true},
    /* None means 1/sqrt(D), as Tokamax's logits_scale=AUTO */
    {.name = "scale",
     .kind = TKB_KIND_FLOAT,
     .default_value = {.tag = TKB_VALUE_NONE},
     .keyword_only = true},
};

static bool attn_dtype_ok(tkb_dtype dt) {
  return dt == TKB_BFLOAT16 || dt == TKB_FLOAT16 || dt == TKB_FLOAT32 || dt == TKB_FLOAT64;
}

/* q, k, v: rank 4 with an allowed dtype. */
static tkb_status check_qkv(const tkb_spec *s, const char *name, const char *layout) {
  char sb[160];
  if (!s)
    return tkb_set_error(TKB_ERR_MISSING_ARGUMENT, "dot_product_attention: %s is required (got None)",
                         name);
  tkb_status st = tkb_spec_check(s, name);
  if (st) return st;
  if (!attn_dtype_ok(s->dtype))
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "dot_product_attention: %s has dtype %s; allowed dtypes are bfloat16, "
                         "float16, float32, float64",
                         name, tkb_dtype_name(s->dtype));
  if (s->rank != 4)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "dot_product_attention: %s has shape %s (rank %d); %s must have rank 4 %s",
                         name, ops_spec_str(s, sb, sizeof sb), s->rank, name, layout);
  return TKB_OK;
}

/* bias or mask: rank <= 4, every dim 1 or equal to [B, H, T, S] right-aligned; fills
 * the broadcast strides. */
static tkb_status check_bcast(const attn_plan *p, const tkb_spec *s, const char *name,
                              int64_t st_out[4]) {
  char sb[160], qb[160], kb[160];
  tkb_status st = tkb_spec_check(s, name);
  if (st) return st;
  const int64_t want[4] = {p->B, p->H, p->T, p->S};
  int64_t dims[4] = {1, 1, 1, 1};
  bool ok = s->rank <= 4;
  for (int i = 0; ok && i < s->rank; i++) dims[4 - s->rank + i] = s->shape[i];
  for (int i = 0; ok && i < 4; i++) ok = dims[i] == 1 || dims[i] == want[i];
  if (!ok)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "dot_product_attention: %s has shape %s, which does not broadcast to "
                         "[B, H, T, S] = [%lld, %lld, %lld, %lld] given by q %s and k %s; each "
                         "of its (at most 4, right-aligned) dims must be 1 or match",
                         name, ops_spec_str(s, sb, sizeof sb), (long long)p->B, (long long)p->H,
                         (long long)p->T, (long long)p->S, ops_spec_str(&p->q, qb, sizeof qb),
                         ops_spec_str(&p->k, kb, sizeof kb));
  /* row-major strides of the padded shape, 0 where the operand broadcasts */
  int64_t stride = 1;
  for (int i = 3; i >= 0; i--) {
    st_out[i] = dims[i] == 1 ? 0 : stride;
    stride *= dims[i];
  }
  return TKB_OK;
}

tkb_status tkb__attn_plan(const tkb_args *a, attn_plan *p) {
  char qb[160], kb[160], vb[160];
  memset(p, 0, sizeof *p);
  const tkb_spec *q = tkb_args_spec(a, "q"), *k = tkb_args_spec(a, "k"),
                 *v = tkb_args_spec(a, "v");
  tkb_status st;
  if ((st = check_qkv(q, "q", "[B, T, H, D]")) != TKB_OK) return st;
  if ((st = check_qkv(k, "k", "[B, S, Hk, D]")) != TKB_OK) return st;
  if ((st = check_qkv(v, "v", "[B, S, Hk, Dv]")) != TKB_OK) return st;
  p->q = *q;
  p->k = *k;
  p->v = *v;
  ops_spec_str(q, qb, sizeof qb);
  ops_spec_str(k, kb, sizeof kb);
  ops_spec_str(v, vb, sizeof vb);
  if (k->dtype != q->dtype || v->dtype != q->dtype)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "dot_product_attention: q is %s, k is %s and v is %s; q, k and v "
                         "must have the same dtype",
                         qb, kb, vb);
  p->B = q->shape[0];
  p->T = q->shape[1];
  p->H = q->shape[2];
  p->D = q->shape[3];
  p->S = k->shape[1];
  p->Hk = k->shape[2];
  p->Dv = v->shape[3];
  if (k->shape[0] != p->B)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "dot_product_attention: q is %s and k is %s: batch sizes differ "
                         "(q's B = %lld, k's B = %lld)",
                         qb, kb, (long long)p->B, (long long)k->shape[0]);
  if (k->shape[3] != p->D)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "dot_product_attention: q is %s and k is %s: head dims differ (q's "
                         "D = %lld, k's D = %lld); q [B, T, H, D] and k [B, S, Hk, D] must "
                         "share D",
                         qb, kb, (long long)p->D, (long long)k->shape[3]);
  if (v->shape[0] != p->B || v->shape[1] != p->S || v->shape[2] != p->Hk)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "dot_product_attention: v is %s and k is %s: v [B, S, Hk, Dv] must "
                         "match k's batch, sequence length and heads [%lld, %lld, %lld, *]",
                         vb, kb, (long long)p->B, (long long)p->S, (long long)p->Hk);
  if (p->Hk == 0 ? p->H != 0 : p->H % p->Hk != 0)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "dot_product_attention: q is %s with H = %lld heads and k is %s with "
                         "Hk = %lld heads: H must be a multiple of Hk (grouped-query attention)",
                         qb, (long long)p->H, kb, (long long)p->Hk);
  p->G = p->Hk > 0 ? p->H / p->Hk : 1;

  p->bias = tkb_args_spec(a, "bias");
  p->mask = tkb_args_spec(a, "mask");
  if (p->bias) {
    if (!attn_dtype_ok(p->bias->dtype))
      return tkb_set_error(TKB_ERR_UNSUPPORTED,
                           "dot_product_attention: bias has dtype %s; allowed dtypes are "
                           "bfloat16, float16, float32, float64",
                           tkb_dtype_name(p->bias->dtype));
    if ((st = check_bcast(p, p->bias, "bias", p->bias_st)) != TKB_OK) return st;
  }
  if (p->mask) {
    if (p->mask->dtype != TKB_BOOL)
      return tkb_set_error(TKB_ERR_UNSUPPORTED,
                           "dot_product_attention: mask has dtype %s; mask must be bool "
                           "(true = keep)",
                           tkb_dtype_name(p->mask->dtype));
    if ((st = check_bcast(p, p->mask, "mask", p->mask_st)) != TKB_OK) return st;
  }

  p->causal = tkb_args_bool(a, "is_causal");
  int si = tkb_args_index(a, "scale");
  if (si >= 0 && a->values[si].tag == TKB_VALUE_FLOAT) {
    p->scale = a->values[si].f;
    if (!isfinite(p->scale))
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "dot_product_attention: scale=%g; scale must be finite (or None "
                           "for 1/sqrt(D))",
                           p->scale);
  } else {
    p->scale = p->D > 0 ? 1.0 / sqrt((double)p->D) : 1.0;
  }
  p->f64 = q->dtype == TKB_FLOAT64;
  p->out = TKB_SPEC(q->dtype, p->B, p->T, p->H, p->Dv);
  p->lse = TKB_SPEC(p->f64 ? TKB_FLOAT64 : TKB_FLOAT32, p->B, p->H, p->T);
  return TKB_OK;
}

tkb_status tkb__attn_infer(const tkb_args *a, tkb_shapes *shapes) {
  attn_plan p;
  tkb_status st = tkb__attn_plan(a, &p);
  if (st) return st;
  memset(shapes, 0, sizeof *shapes);
  shapes->n_outputs = 1;
  shapes->outputs[0] = p.out;
  shapes->output_names[0] = "out";
  shapes->n_residuals = 1;
  shapes->residuals[0] = p.lse;
  shapes->residual_names[0] = "lse";
  return TKB_OK;
}

tkb_status tkb__attn_inputs(const tkb_args *a, const attn_plan *p, attn_inputs *in) {
  static const char *const names[5] = {"q", "k", "v", "bias", "mask"};
  const tkb_array **slots[5] = {&in->q, &in->k, &in->v, &in->bias, &in->mask};
  const bool present[5] = {true, true, true, p->bias != NULL, p->mask != NULL};
  for (int i = 0; i < 5; i++) {
    *slots[i] = NULL;
    if (!present[i]) continue;
    tkb_status st = ops_concrete(a, "dot_product_attention", names[i], slots[i]);
    if (st) return st;
  }
  return TKB_OK;
}

static tkb_status check_buffer(const tkb_array *arr, const tkb_spec *want, const char *what) {
  return ops_check_buffer("dot_product_attention", arr, want, what);
}

tkb_status tkb__attn_check_forward(const attn_plan *p, const tkb_array *out,
                                   const tkb_array *lse) {
  tkb_status st = check_buffer(out, &p->out, "output out");
  if (!st && lse) st = check_buffer(lse, &p->lse, "residual lse");
  return st;
}

tkb_status tkb__attn_check_vjp(const attn_plan *p, const tkb_array *lse, const tkb_array *dout,
                               tkb_array *const *grads) {
  tkb_status st = check_buffer(lse, &p->lse, "residual lse");
  if (!st) st = check_buffer(dout, &p->out, "cotangent dout");
  if (!st && grads[0]) st = check_buffer(grads[0], &p->q, "gradient dq");
  if (!st && grads[1]) st = check_buffer(grads[1], &p->k, "gradient dk");
  if (!st && grads[2]) st = check_buffer(grads[2], &p->v, "gradient dv");
  if (!st && p->bias && grads[3]) st = check_buffer(grads[3], p->bias, "gradient dbias");
  return st;
}

double tkb__attn_pairs(const attn_plan *p) {
  double T = (double)p->T, S = (double)p->S;
  if (!p->causal) return T * S;
  /* row t keeps s = 0..min(t, S-1): min(t+1, S) pairs */
  if (T <= S) return T * (T + 1) / 2;
  return S * (S + 1) / 2 + (T - S) * S;
}

/*
 * Counts, per call. Convention: flops are the multiply-adds of the matrix products,
 * 2 per multiply-add, over the causally kept (t, s) pairs only (so causal with T == S
 * is T(T+1)/2 of T^2: "halved"); exp, max and the bias/mask passes are not counted.
 *   forward: q.k (2 D) and p.v (2 Dv) per pair and head: 2 B H pairs (D + Dv)
 *            (= 4 B H T S D non-causal with Dv = D)
 *   vjp:     dv = p^T dout, dp = dout v^T, dq = ds k, dk = ds^T q and the recomputed
 *            q.k: 2 B H pairs (3 D + 2 Dv) (2.5x the forward, flash-attention's count)
 * Bytes: every input read once and every output written once (the mask as 1 byte per
 * element); the vjp also reads lse and dout and writes dq, dk, dv (and dbias).
 * Items: B*T query tokens.
 */
tkb_status tkb__attn_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out) {
  attn_plan p;
  tkb_status st = tkb__attn_plan(a, &p);
  if (st) return st;
  size_t qb, kb, vb, bb = 0, mb = 0, ob, lb;
  tkb_spec_nbytes(&p.q, &qb);
  tkb_spec_nbytes(&p.k, &kb);
  tkb_spec_nbytes(&p.v, &vb);
  if (p.bias) tkb_spec_nbytes(p.bias, &bb);
  if (p.mask) tkb_spec_nbytes(p.mask, &mb);
  tkb_spec_nbytes(&p.out, &ob);
  tkb_spec_nbytes(&p.lse, &lb);
  double BH = (double)p.B * (double)p.H, pairs = tkb__attn_pairs(&p);
  double fwd_flops = 2 * BH * pairs * (double)(p.D + p.Dv);
  double vjp_flops = 2 * BH * pairs * (double)(3 * p.D + 2 * p.Dv);
  double in_bytes = (double)qb + (double)kb + (double)vb + (double)bb + (double)mb;
  double fwd_bytes = in_bytes + (double)ob;
  double vjp_bytes = in_bytes + (double)lb + (double)ob /* dout */ +
                     (double)qb + (double)kb + (double)vb + (double)bb /* grads */;
  *out = (tkb_counts){.items = (double)p.B * (double)p.T};
  switch (mode) {
    case TKB_MODE_FORWARD: out->flops = fwd_flops; out->bytes = fwd_bytes; break;
    case TKB_MODE_FORWARD_RES:
      out->flops = fwd_flops;
      out->bytes = fwd_bytes + (double)lb;
      break;
    case TKB_MODE_VJP: out->flops = vjp_flops; out->bytes = vjp_bytes; break;
    case TKB_MODE_FORWARD_AND_VJP:
      out->flops = fwd_flops + vjp_flops;
      out->bytes = fwd_bytes + (double)lb + vjp_bytes;
      break;
  }
  return TKB_OK;
}
