/*
 * reference.c - dot_product_attention in plain float64 loops, one score row at a time
 * (tkb_op_dot_product_attention_reference): the truth that tests and `check` compare
 * the fast implementation against. Semantics in attention.h.
 *
 * Every row (b, h, t) is computed by one thread in a fixed order, so results do not
 * depend on the thread count. The K and V rows of one kv head (and, in the vjp, the Q
 * and dout rows of its query heads) are widened to float64 once per thread per head
 * into the workspace, so the inner loops are plain double arithmetic.
 * The vjp does not trust the float32 lse residual: it recomputes lse in float64.
 */
#include "attention.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Row groups per work item of the vjp's pass 1 (see there). */
#define REF_CHUNK 32

/* Workspace from prepare: per thread one kv head and the query heads of its group, in
 * rows and transposed, and row buffers; shared lse and delta (one per score row). */
typedef struct ref_ws {
  tkb_device *dev;
  size_t bytes;
  void *mem;
  int nthreads;
  int64_t per_thread;  /* doubles per thread */
  double *threads;     /* nthreads * per_thread */
  double *lse, *delta; /* [B, H, T] */
} ref_ws;

/* One thread's slices of the workspace and which heads they hold. The transposed copies
 * let every dot product below run as "for d: for s: x[s] += a[d] * bt[d][s]", which sums
 * in the same order as the plain dot product but vectorizes over s. */
typedef struct ref_thread {
  double *k, *kt, *v, *vt; /* [S][D], [D][S], [S][Dv], [Dv][S]: kv head (kb, khk) */
  double *q, *qt;          /* [G][T][D], [G][D][T]: query heads of kv head (qb, qhk) */
  double *o, *ot;          /* [G][T][Dv], [G][Dv][T]: their dout */
  double *x, *y;           /* [max(S, T)] score-row (or column) buffers */
  double *qrow, *drow;     /* [D], [Dv]: one row of q and dout */
  double *acc;             /* [D + Dv] accumulators */
  double *dbias;           /* [REF_CHUNK][S]: dbias sums of a chunk of row groups */
  int64_t kb, khk, qb, qhk;
} ref_thread;

static void ref_release(void *state) {
  ref_ws *ws = state;
  if (!ws) return;
  tkb_device_free(ws->dev, ws->mem, ws->bytes);
  free(ws);
}

static tkb_status ref_prepare(const tkb_args *a, void **state) {
  attn_plan p;
  tkb_status st = tkb__attn_plan(a, &p);
  if (st) return st;
  ref_ws *ws = calloc(1, sizeof *ws);
  if (!ws) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "dot_product_attention: out of memory");
  ws->dev = a->device;
  ws->nthreads = tkb_get_num_threads();
  const int64_t ST = p.S > p.T ? p.S : p.T;
  ws->per_thread = 2 * (p.S + p.G * p.T + 1) * (p.D + p.Dv) + 2 * ST + REF_CHUNK * p.S +
                   (p.D + p.Dv);
  const int64_t rows = p.B * p.H * p.T;
  ws->bytes = (size_t)(ws->nthreads * ws->per_thread + 2 * rows) * sizeof(double);
  st = tkb_device_alloc(ws->dev, ws->bytes, &ws->mem);
  if (st) {
    free(ws);
    return st;
  }
  ws->threads = ws->mem;
  ws->lse = ws->threads + ws->nthreads * ws->per_thread;
  ws->delta = ws->lse + rows;
  *state = ws;
  return TKB_OK;
}

static ref_thread ref_thread_slices(const ref_ws *ws, const attn_plan *p) {
  ref_thread t;
  const int64_t ST = p->S > p->T ? p->S : p->T, GT = p->G * p->T;
  double *m = ws->threads + omp_get_thread_num() * ws->per_thread;
  t.k = m, m += p->S * p->D;
  t.kt = m, m += p->S * p->D;
  t.v = m, m += p->S * p->Dv;
  t.vt = m, m += p->S * p->Dv;
  t.q = m, m += GT * p->D;
  t.qt = m, m += GT * p->D;
  t.o = m, m += GT * p->Dv;
  t.ot = m, m += GT * p->Dv;
  t.x = m, m += ST;
  t.y = m, m += ST;
  t.dbias = m, m += REF_CHUNK * p->S;
  t.qrow = m, m += p->D;
  t.drow = m, m += p->Dv;
  t.acc = m;
  t.kb = t.khk = t.qb = t.qhk = -1;
  return t;
}

/* Threads for a parallel region: what prepare sized the workspace for, or fewer. */
static int ref_threads(const ref_ws *ws) {
  int n = omp_get_max_threads();
  return n < ws->nthreads ? n : ws->nthreads;
}

/* x[b, r, hd, w] (x is [B, L, NH, W]) as rows[r][w] and, when cols is not NULL, as
 * cols[w][r]. */
static void load_head(double *rows, double *cols, const tkb_array *x, int64_t b, int64_t hd) {
  const int64_t L = x->spec.shape[1], NH = x->spec.shape[2], W = x->spec.shape[3];
  for (int64_t r = 0; r < L; r++)
    for (int64_t w = 0; w < W; w++) {
      double e = ops_get(x, ((b * L + r) * NH + hd) * W + w);
      rows[r * W + w] = e;
      if (cols) cols[w * L + r] = e;
    }
}

/* Makes sure th holds k and v of kv head (b, hk). */
static void ensure_kv(ref_thread *th, const attn_inputs *in, int64_t b, int64_t hk) {
  if (th->kb == b && th->khk == hk) return;
  load_head(th->k, th->kt, in->k, b, hk);
  load_head(th->v, th->vt, in->v, b, hk);
  th->kb = b, th->khk = hk;
}

/* Makes sure th holds q and dout of the G query heads of kv head (b, hk). */
static void ensure_q(ref_thread *th, const attn_plan *p, const attn_inputs *in,
                     const tkb_array *dout, int64_t b, int64_t hk) {
  if (th->qb == b && th->qhk == hk) return;
  for (int64_t g = 0; g < p->G; g++) {
    load_head(th->q + g * p->T * p->D, th->qt + g * p->T * p->D, in->q, b, hk * p->G + g);
    load_head(th->o + g * p->T * p->Dv, th->ot + g * p->T * p->Dv, dout, b, hk * p->G + g);
  }
  th->qb = b, th->qhk = hk;
}

/* Whether score (b, h, t, s) is kept: the mask says so and, when causal, s <= t. */
static bool kept(const attn_plan *p, const attn_inputs *in, int64_t b, int64_t h, int64_t t,
                 int64_t s) {
  if (p->causal && s > t) return false;
  if (in->mask)
    return ((const uint8_t *)in->mask->data)[attn_bcast_index(p->mask_st, b, h, t, s)] != 0;
  return true;
}

/* logit = scale * dot + bias[b, h, t, s] where kept, -inf elsewhere */
static double logit(const attn_plan *p, const attn_inputs *in, int64_t b, int64_t h, int64_t t,
                    int64_t s, double dot) {
  if (!kept(p, in, b, h, t, s)) return -INFINITY;
  double x = p->scale * dot;
  if (in->bias) x += ops_get(in->bias, attn_bcast_index(p->bias_st, b, h, t, s));
  return x;
}

/* y[i] = sum_d a[d] bt[d][i] for i < n (bt row stride n) */
static void dots(double *y, const double *a, const double *bt, int64_t depth, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = 0;
  for (int64_t d = 0; d < depth; d++)
    for (int64_t i = 0; i < n; i++) y[i] += a[d] * bt[d * n + i];
}

/* x[s] = logit of (b, h, t, s) for every s (th holds kv head (b, h / G)); returns the
 * row's max (-inf when nothing is kept). */
static double row_logits(const attn_plan *p, const attn_inputs *in, const ref_thread *th,
                         int64_t b, int64_t h, int64_t t, const double *q, double *x) {
  dots(x, q, th->kt, p->D, p->S);
  double m = -INFINITY;
  for (int64_t s = 0; s < p->S; s++) {
    x[s] = logit(p, in, b, h, t, s, x[s]);
    if (x[s] > m) m = x[s];
  }
  return m;
}

/* lse = m + log sum_s exp(row[s] - m), then row[s] = exp(row[s] - lse): the softmax
 * probabilities in place. An empty row (m = -inf) stays all zeros with lse = -inf. */
static double row_softmax(const attn_plan *p, double *row, double m) {
  if (m == -INFINITY) {
    for (int64_t s = 0; s < p->S; s++) row[s] = 0;
    return -INFINITY;
  }
  double l = 0;
  for (int64_t s = 0; s < p->S; s++) l += exp(row[s] - m);
  double lse = m + log(l);
  for (int64_t s = 0; s < p->S; s++) row[s] = exp(row[s] - lse);
  return lse;
}

/* Row index of (b, h, t) in [B, H, T]. */
static int64_t row_index(const attn_plan *p, int64_t b, int64_t h, int64_t t) {
  return (b * p->H + h) * p->T + t;
}

/* ---- forward ---- */

/*
 * For each row (b, h, t), hk = h / G:
 *   x[s]   = scale * q[b,t,h,:] . k[b,s,hk,:] + bias[b,h,t,s]   (kept s; -inf elsewhere)
 *   lse    = log sum_s exp(x[s])
 *   out[b,t,h,j] = sum_s exp(x[s] - lse) v[b,s,hk,j]
 */
static tkb_status ref_run_forward(const tkb_args *a, void *state, tkb_array *out,
                                  tkb_array *lse_out) {
  attn_plan p;
  attn_inputs in;
  tkb_status st = tkb__attn_plan(a, &p);
  if (!st) st = tkb__attn_inputs(a, &p, &in);
  if (!st) st = tkb__attn_check_forward(&p, out, lse_out);
  if (st) return st;
  ref_ws *ws = state;
  bool own = !ws;
  if (own && (st = ref_prepare(a, (void **)&ws)) != TKB_OK) return st;
  const int64_t rows = p.B * p.H * p.T;
#pragma omp parallel num_threads(ref_threads(ws))
  {
    ref_thread th = ref_thread_slices(ws, &p);
    double *qrow = th.qrow, *acc = th.acc, *pr = th.x;
    /* rows in (b, h, t) order: a thread's consecutive rows share the kv head it loaded */
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
      int64_t b = r / (p.H * p.T), h = r / p.T % p.H, t = r % p.T, hk = h / p.G;
      ensure_kv(&th, &in, b, hk);
      for (int64_t d = 0; d < p.D; d++) qrow[d] = ops_get(in.q, ((b * p.T + t) * p.H + h) * p.D + d);
      double lse = row_softmax(&p, pr, row_logits(&p, &in, &th, b, h, t, qrow, pr));
      for (int64_t j = 0; j < p.Dv; j++) acc[j] = 0;
      for (int64_t s = 0; s < p.S; s++) {
        if (pr[s] == 0) continue;
        for (int64_t j = 0; j < p.Dv; j++) acc[j] += pr[s] * th.v[s * p.Dv + j];
      }
      for (int64_t j = 0; j < p.Dv; j++) ops_set(out, ((b * p.T + t) * p.H + h) * p.Dv + j, acc[j]);
      if (lse_out) ops_set(lse_out, r, lse);
    }
  }
  if (own) ref_release(ws);
  return TKB_OK;
}

static tkb_status ref_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return ref_run_forward(a, state, outputs[0], NULL);
}

static tkb_status ref_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  if (!residuals[0])
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "dot_product_attention: forward_res needs the residual lse");
  return ref_run_forward(a, state, outputs[0], residuals[0]);
}

/* ---- vjp ---- */

/*
 * With p[s] = exp(x[s] - lse) the probabilities of row (b, h, t) and dout its cotangent:
 *   dp[s]    = dout[b,t,h,:] . v[b,s,hk,:]
 *   delta    = sum_s p[s] dp[s]                    (= dout . out)
 *   ds[s]    = p[s] (dp[s] - delta)                (softmax backward; 0 where not kept)
 *   dq[b,t,h,:]  = scale * sum_s ds[s] k[b,s,hk,:]
 *   dk[b,s,hk,:] = scale * sum_{h in group hk, t} ds q[b,t,h,:]
 *   dv[b,s,hk,:] = sum_{h in group hk, t} p dout[b,t,h,:]
 *   dbias[cell]  = sum of ds over the (b, h, t, s) that broadcast from the cell
 */

/* Pass 1 visits rows in groups that own disjoint dbias cells: the dims (b, h, t) along
 * which bias broadcasts (its dim is 1, ours is not) are "reduced" and iterated inside a
 * group, in a fixed order; the others enumerate the groups. A work item takes
 * REF_CHUNK consecutive groups with the reduced index outermost, so that rows sharing
 * a kv head run back to back (each cell still sums in reduced-index order). */
typedef struct row_groups {
  int64_t ext[3];  /* B, H, T */
  bool red[3];     /* reduced dims */
  int64_t outer, inner;
} row_groups;

static row_groups make_groups(const attn_plan *p) {
  row_groups g = {.ext = {p->B, p->H, p->T}, .outer = 1, .inner = 1};
  for (int i = 0; i < 3; i++) {
    g.red[i] = p->bias && p->bias_st[i] == 0 && g.ext[i] > 1;
    if (g.red[i]) g.inner *= g.ext[i];
    else g.outer *= g.ext[i];
  }
  return g;
}

/* The (b, h, t) of the ig-th row of group og: non-reduced dims decoded from og and
 * reduced ones from ig, both row-major. */
static void group_row(const row_groups *g, int64_t og, int64_t ig, int64_t bht[3]) {
  for (int i = 2; i >= 0; i--) {
    int64_t *src = g->red[i] ? &ig : &og;
    bht[i] = *src % g->ext[i];
    *src /= g->ext[i];
  }
}

static tkb_status ref_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  attn_plan p;
  attn_inputs in;
  tkb_status st = tkb__attn_plan(a, &p);
  if (!st) st = tkb__attn_inputs(a, &p, &in);
  if (!st) st = tkb__attn_check_vjp(&p, residuals[0], cotangents[0], grads);
  if (st) return st;
  const tkb_array *dout = cotangents[0];
  tkb_array *dq = grads[0], *dk = grads[1], *dv = grads[2], *dbias = p.bias ? grads[3] : NULL;
  ref_ws *ws = state;
  bool own = !ws;
  if (own && (st = ref_prepare(a, (void **)&ws)) != TKB_OK) return st;
  const row_groups grp = make_groups(&p);
  const int64_t dbias_len = p.bias && p.bias_st[3] != 0 ? p.S : 1;

  /* Pass 1, per row: lse, delta, dq; dbias per group of rows. */
  const int64_t chunks = (grp.outer + REF_CHUNK - 1) / REF_CHUNK;
#pragma omp parallel num_threads(ref_threads(ws))
  {
    ref_thread th = ref_thread_slices(ws, &p);
    double *qrow = th.qrow, *drow = th.drow, *acc = th.acc;
#pragma omp for schedule(static)
    for (int64_t ch = 0; ch < chunks; ch++) {
      const int64_t og0 = ch * REF_CHUNK, og1 = og0 + REF_CHUNK < grp.outer ? og0 + REF_CHUNK : grp.outer;
      for (int64_t i = 0; i < (og1 - og0) * dbias_len; i++) th.dbias[i] = 0;
      for (int64_t ig = 0; ig < grp.inner; ig++)
        for (int64_t og = og0; og < og1; og++) {
          int64_t bht[3];
          group_row(&grp, og, ig, bht);
          int64_t b = bht[0], h = bht[1], t = bht[2], hk = h / p.G, r = row_index(&p, b, h, t);
          ensure_kv(&th, &in, b, hk);
          for (int64_t d = 0; d < p.D; d++) qrow[d] = ops_get(in.q, ((b * p.T + t) * p.H + h) * p.D + d);
          for (int64_t j = 0; j < p.Dv; j++)
            drow[j] = ops_get(dout, ((b * p.T + t) * p.H + h) * p.Dv + j);
          double *pr = th.x, *ds = th.y;
          ws->lse[r] = row_softmax(&p, pr, row_logits(&p, &in, &th, b, h, t, qrow, pr));
          dots(ds, drow, th.vt, p.Dv, p.S); /* dp */
          double delta = 0;
          for (int64_t s = 0; s < p.S; s++) delta += pr[s] * ds[s];
          ws->delta[r] = delta;
          for (int64_t s = 0; s < p.S; s++) ds[s] = pr[s] * (ds[s] - delta);
          if (dq) {
            for (int64_t d = 0; d < p.D; d++) acc[d] = 0;
            for (int64_t s = 0; s < p.S; s++) {
              if (ds[s] == 0) continue;
              for (int64_t d = 0; d < p.D; d++) acc[d] += ds[s] * th.k[s * p.D + d];
            }
            for (int64_t d = 0; d < p.D; d++)
              ops_set(dq, ((b * p.T + t) * p.H + h) * p.D + d, p.scale * acc[d]);
          }
          if (dbias) {
            double *cell = th.dbias + (og - og0) * dbias_len;
            for (int64_t s = 0; s < p.S; s++) cell[dbias_len == 1 ? 0 : s] += ds[s];
          }
        }
      if (dbias)
        for (int64_t og = og0; og < og1; og++) {
          int64_t bht[3];
          group_row(&grp, og, 0, bht); /* reduced dims have stride 0 in bias_st */
          for (int64_t s = 0; s < dbias_len; s++)
            ops_set(dbias, attn_bcast_index(p.bias_st, bht[0], bht[1], bht[2], s),
                     th.dbias[(og - og0) * dbias_len + s]);
        }
    }
  }

  /* Pass 2, per key row (b, s, hk): dk and dv over the group's query heads and rows. */
  const int64_t keys = p.B * p.Hk * p.S;
  if (dk || dv) {
#pragma omp parallel num_threads(ref_threads(ws))
    {
      ref_thread th = ref_thread_slices(ws, &p);
      double *dk_acc = th.acc, *dv_acc = th.acc + p.D, *x = th.x, *y = th.y;
      /* keys in (b, hk, s) order: consecutive keys share the heads a thread loaded */
#pragma omp for schedule(static)
      for (int64_t i = 0; i < keys; i++) {
        int64_t b = i / (p.Hk * p.S), hk = i / p.S % p.Hk, s = i % p.S;
        ensure_kv(&th, &in, b, hk);
        ensure_q(&th, &p, &in, dout, b, hk);
        const double *krow = th.k + s * p.D, *vrow = th.v + s * p.Dv;
        for (int64_t d = 0; d < p.D + p.Dv; d++) th.acc[d] = 0;
        for (int64_t g = 0; g < p.G; g++) {
          const int64_t h = hk * p.G + g;
          dots(x, krow, th.qt + g * p.T * p.D, p.D, p.T);   /* x[t] = q[t] . k[s] */
          dots(y, vrow, th.ot + g * p.T * p.Dv, p.Dv, p.T); /* y[t] = dp = dout[t] . v[s] */
          for (int64_t t = 0; t < p.T; t++) {
            const int64_t r = row_index(&p, b, h, t);
            const double xl = logit(&p, &in, b, h, t, s, x[t]);
            if (ws->lse[r] == -INFINITY || xl == -INFINITY) continue;
            const double *q = th.q + (g * p.T + t) * p.D, *o = th.o + (g * p.T + t) * p.Dv;
            const double pr = exp(xl - ws->lse[r]), ds = pr * (y[t] - ws->delta[r]);
            for (int64_t d = 0; d < p.D; d++) dk_acc[d] += ds * q[d];
            for (int64_t j = 0; j < p.Dv; j++) dv_acc[j] += pr * o[j];
          }
        }
        if (dk)
          for (int64_t d = 0; d < p.D; d++)
            ops_set(dk, ((b * p.S + s) * p.Hk + hk) * p.D + d, p.scale * dk_acc[d]);
        if (dv)
          for (int64_t j = 0; j < p.Dv; j++)
            ops_set(dv, ((b * p.S + s) * p.Hk + hk) * p.Dv + j, dv_acc[j]);
      }
    }
  }
  if (own) ref_release(ws);
  return TKB_OK;
}

const tkb_fn tkb_op_dot_product_attention_reference = {
    .name = "dot_product_attention",
    .params = tkb__attn_params,
    .n_params = TKB_ATTN_N_PARAMS,
    .infer = tkb__attn_infer,
    .prepare = ref_prepare,
    .release = ref_release,
    .forward = ref_forward,
    .forward_res = ref_forward_res,
    .vjp = ref_vjp,
};
