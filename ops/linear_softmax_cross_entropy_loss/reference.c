/*
 * reference.c - tkb_op_linear_softmax_cross_entropy_loss_reference: the loss and its vjp
 * in plain float64 loops. It is the truth `tkbench check` compares the fast
 * implementations against, so it favours the obvious over the fast: every sum runs in
 * float64 in a fixed order (results do not depend on the thread count), and the vjp
 * recomputes lse in float64 instead of trusting the float32 residual.
 *
 * The math (lsce.h):
 *   logits[i, v] = sum_k x[i, k] w[k, v]
 *   lse[i] = log sum_v exp(logits[i, v]),  loss_i = lse[i] - logits[i, labels[i]]
 *   loss = sum_i loss_i  (sum)  or  (1/B) sum_i loss_i  (mean)
 *   dlogits[i, v] = g (softmax(logits_i)[v] - [v == labels[i]]),  g = dloss (/ B)
 *   dx = dlogits w^T,  dw = x^T dlogits
 *
 * Rows are taken REF_ROWS at a time so that each row of w is widened to float64 once per
 * block rather than once per row. The [B, V] logits are never stored whole: a block
 * holds REF_ROWS rows of them.
 */
#include "lsce.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

#define REF_ROWS 16

/* Workspaces, allocated by prepare (nothing is allocated inside a call). */
typedef struct ref_state {
  lsce_plan p;
  tkb_device *dev;
  void *block;
  size_t bytes;
  int nthreads;
  int64_t rows;     /* rows per block: min(REF_ROWS, B) */
  double *xb;       /* [rows, Hd]  the block's rows of x */
  double *logits;   /* [rows, V]   its logits, then dlogits */
  double *dxb;      /* [rows, Hd]  its rows of dx */
  double *wrow;     /* [nthreads, V]  one row of w per thread */
  double *dw_acc;   /* [Hd, V]  dw, summed over blocks */
} ref_state;

/* Adds n doubles to a running byte count; false on overflow. */
static bool add_doubles(size_t *bytes, int64_t n) {
  if (n < 0 || (uint64_t)n > (SIZE_MAX - *bytes) / sizeof(double)) return false;
  *bytes += (size_t)n * sizeof(double);
  return true;
}

static void ref_release(void *state) {
  ref_state *s = state;
  if (!s) return;
  tkb_device_free(s->dev, s->block, s->bytes);
  free(s);
}

static tkb_status ref_prepare(const tkb_args *a, void **state) {
  lsce_plan p;
  tkb_status st = tkb__lsce_plan_make(a, &p);
  if (st) return st;
  ref_state *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "linear_softmax_cross_entropy_loss "
                               "reference: out of memory for its state");
  s->p = p;
  s->dev = a->device;
  s->nthreads = omp_get_max_threads();
  s->rows = p.B < REF_ROWS ? p.B : REF_ROWS;
  int64_t sizes[5] = {s->rows * p.Hd, s->rows * p.V, s->rows * p.Hd,
                      (int64_t)s->nthreads * p.V, 0};
  bool ok = !__builtin_mul_overflow(p.Hd, p.V, &sizes[4]);
  for (int i = 0; i < 5 && ok; i++) ok = add_doubles(&s->bytes, sizes[i]);
  if (ok) st = tkb_device_alloc(s->dev, s->bytes, &s->block);
  if (!ok || st) {
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                       "linear_softmax_cross_entropy_loss reference: cannot allocate its "
                       "float64 workspaces (%.2f GiB, most of it dw's accumulator of Hd*V = "
                       "%lld x %lld doubles)",
                       ok ? (double)s->bytes / 1073741824.0 : INFINITY, (long long)p.Hd,
                       (long long)p.V);
    free(s);
    return st;
  }
  double *q = s->block;
  s->xb = q, q += sizes[0];
  s->logits = q, q += sizes[1];
  s->dxb = q, q += sizes[2];
  s->wrow = q, q += sizes[3];
  s->dw_acc = q;
  *state = s;
  return TKB_OK;
}

/* Binds the call and checks it matches what prepare sized the workspaces for. */
static tkb_status ref_bind(const tkb_args *a, void *state, lsce_call *c) {
  tkb_status st = tkb__lsce_bind(a, c);
  if (st) return st;
  if (!state || !tkb__lsce_plan_same(&((ref_state *)state)->p, &c->p))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "linear_softmax_cross_entropy_loss reference: %s",
                         state ? "called with shapes other than those it was prepared for"
                               : "called without its prepare hook");
  return TKB_OK;
}

static int ref_threads(const ref_state *s) {
  int n = omp_get_max_threads();
  return n < s->nthreads ? n : s->nthreads;
}

/* The byte address of element i of an array. */
static const void *at(const tkb_array *a, int64_t i) {
  return (const char *)a->data + (size_t)i * tkb_dtype_size(a->spec.dtype);
}

/*
 * logits[r][v] = sum_k xb[r][k] w[k][v] for the block's nb rows (xb already loaded).
 * Each thread owns a slice of the vocabulary and widens its part of each row of w once
 * for the whole block. Every element sums over k in increasing order.
 */
static void ref_logits_block(ref_state *s, const tkb_array *w, int64_t nb) {
  const int64_t Hd = s->p.Hd, V = s->p.V;
#pragma omp parallel num_threads(ref_threads(s))
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t v0 = V * t / nt, v1 = V * (t + 1) / nt, nv = v1 - v0;
    double *wr = s->wrow + (int64_t)t * V;
    for (int64_t r = 0; r < nb; r++)
      for (int64_t v = v0; v < v1; v++) s->logits[r * V + v] = 0.0;
    for (int64_t k = 0; k < Hd && nv > 0; k++) {
      tkb_convert(at(w, k * V + v0), w->spec.dtype, wr, TKB_FLOAT64, (size_t)nv);
      for (int64_t r = 0; r < nb; r++) {
        const double xk = s->xb[r * Hd + k];
        double *lr = s->logits + r * V + v0;
        for (int64_t v = 0; v < nv; v++) lr[v] += xk * wr[v];
      }
    }
  }
}

/* Loads rows [i0, i0 + nb) of x into xb and computes their logits. */
static void ref_block(ref_state *s, const lsce_call *c, int64_t i0, int64_t nb) {
  const int64_t Hd = s->p.Hd;
  for (int64_t r = 0; r < nb; r++)
    tkb_convert(at(c->x, (i0 + r) * Hd), c->x->spec.dtype, s->xb + r * Hd, TKB_FLOAT64,
                (size_t)Hd);
  ref_logits_block(s, c->w, nb);
}

/* lse of one row of logits: m + log sum_v exp(l[v] - m), m = max_v l[v]. */
static double ref_lse(const double *l, int64_t V) {
  double m = -INFINITY, sum = 0.0;
  for (int64_t v = 0; v < V; v++) m = l[v] > m ? l[v] : m;
  for (int64_t v = 0; v < V; v++) sum += exp(l[v] - m);
  return m + log(sum);
}

/* Writes one value into a rank-0 or [B] array of the math dtype. */
static void store(tkb_array *a, int64_t i, double v) {
  if (a->spec.dtype == TKB_FLOAT64) ((double *)a->data)[i] = v;
  else ((float *)a->data)[i] = (float)v;
}

/* loss = reduce_i (lse[i] - logits[i, labels[i]]); lse written when asked. */
static tkb_status ref_forward_impl(const tkb_args *a, void *state, tkb_array *loss,
                                   tkb_array *lse) {
  lsce_call c;
  tkb_status st = ref_bind(a, state, &c);
  if (!st) st = tkb__lsce_check_buffer(loss, &c.p.loss, "output loss");
  if (!st && lse) st = tkb__lsce_check_buffer(lse, &c.p.lse, "residual lse");
  if (st) return st;
  ref_state *s = state;
  const int64_t B = c.p.B, V = c.p.V;
  const int32_t *labels = c.labels->data;
  double total = 0.0;
  for (int64_t i0 = 0; i0 < B; i0 += s->rows) {
    const int64_t nb = B - i0 < s->rows ? B - i0 : s->rows;
    ref_block(s, &c, i0, nb);
    for (int64_t r = 0; r < nb; r++) {
      const double *l = s->logits + r * V;
      const double lse_i = ref_lse(l, V);
      total += lse_i - l[labels[i0 + r]];
      if (lse) store(lse, i0 + r, lse_i);
    }
  }
  /* mean over B = 0 rows is 0/0 = NaN, as jnp.mean of an empty array */
  store(loss, 0, c.p.reduction == LSCE_MEAN ? total / (double)B : total);
  return TKB_OK;
}

static tkb_status ref_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return ref_forward_impl(a, state, outputs[0], NULL);
}

static tkb_status ref_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  return ref_forward_impl(a, state, outputs[0], residuals[0]);
}

static tkb_status ref_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  lsce_call c;
  tkb_status st = ref_bind(a, state, &c);
  if (!st) st = tkb__lsce_check_buffer(residuals[0], &c.p.lse, "residual lse");
  if (!st) st = tkb__lsce_check_buffer(cotangents[0], &c.p.loss, "cotangent dloss");
  if (!st && grads[0]) st = tkb__lsce_check_buffer(grads[0], &c.p.x, "gradient dx");
  if (!st && grads[1]) st = tkb__lsce_check_buffer(grads[1], &c.p.w, "gradient dw");
  if (st) return st;
  ref_state *s = state;
  tkb_array *dx = grads[0], *dw = grads[1];
  const int64_t B = c.p.B, Hd = c.p.Hd, V = c.p.V;
  const int32_t *labels = c.labels->data;
  const double dloss = tkb_array_get_f64(cotangents[0], 0);
  const double g = c.p.reduction == LSCE_MEAN ? dloss / (double)B : dloss;
  const int nt = ref_threads(s);

  memset(s->dw_acc, 0, (size_t)(Hd * V) * sizeof(double));
  for (int64_t i0 = 0; i0 < B; i0 += s->rows) {
    const int64_t nb = B - i0 < s->rows ? B - i0 : s->rows;
    ref_block(s, &c, i0, nb);
    /* dlogits[r][v] = g (exp(logits[r][v] - lse) - [v == label]), lse in float64 */
    for (int64_t r = 0; r < nb; r++) {
      double *l = s->logits + r * V;
      const double lse_r = ref_lse(l, V);
      for (int64_t v = 0; v < V; v++) l[v] = g * exp(l[v] - lse_r);
      l[labels[i0 + r]] -= g;
    }
    /* dx[i][k] = sum_v dlogits[r][v] w[k][v];  dw[k][v] += sum_r x[i][k] dlogits[r][v],
     * one row k of w per iteration (threads split k; each element's sums keep their
     * order: v ascending for dx, r ascending for dw). */
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t k = 0; k < Hd; k++) {
      double *wr = s->wrow + (int64_t)omp_get_thread_num() * V;
      tkb_convert(at(c.w, k * V), c.w->spec.dtype, wr, TKB_FLOAT64, (size_t)V);
      for (int64_t r = 0; r < nb; r++) {
        const double *d = s->logits + r * V;
        double sum = 0.0;
        for (int64_t v = 0; v < V; v++) sum += d[v] * wr[v];
        s->dxb[r * Hd + k] = sum;
      }
      double *acc = s->dw_acc + k * V;
      for (int64_t r = 0; r < nb; r++) {
        const double xk = s->xb[r * Hd + k];
        const double *d = s->logits + r * V;
        for (int64_t v = 0; v < V; v++) acc[v] += xk * d[v];
      }
    }
    if (dx)
      for (int64_t r = 0; r < nb; r++)
        tkb_convert(s->dxb + r * Hd, TKB_FLOAT64,
                    (char *)dx->data + (size_t)((i0 + r) * Hd) * tkb_dtype_size(dx->spec.dtype),
                    dx->spec.dtype, (size_t)Hd);
  }
  if (dw)
    for (int64_t k = 0; k < Hd; k++)
      tkb_convert(s->dw_acc + k * V, TKB_FLOAT64,
                  (char *)dw->data + (size_t)(k * V) * tkb_dtype_size(dw->spec.dtype),
                  dw->spec.dtype, (size_t)V);
  return TKB_OK;
}

const tkb_fn tkb_op_linear_softmax_cross_entropy_loss_reference = {
    .name = "linear_softmax_cross_entropy_loss",
    .params = tkb__lsce_params,
    .n_params = LSCE_N_PARAMS,
    .infer = tkb__lsce_infer,
    .prepare = ref_prepare,
    .release = ref_release,
    .forward = ref_forward,
    .forward_res = ref_forward_res,
    .vjp = ref_vjp,
};
