/*
 * cpu_kernels.h - the forward and vjp of cpu.c for one math type. Included twice by
 * cpu_variant.h, once per instruction set: once with T = float (tkb__blas.sgemm), once with
 * T = double (tkb__blas.dgemm). Before including, cpu_variant.h defines
 *   T        the math type              MATH_DT  its tkb_dtype
 *   GEMM     tkb__blas.sgemm / .dgemm    EXP, LOG the type's exp and log
 *   FN(name) name suffixed with the type (name_f32 / name_f64)
 * Every GEMM here runs on the calling thread (cpu.c keeps OpenBLAS single-threaded for
 * the duration of a call); the parallelism is ours, one OpenMP region per call.
 */

/* Per-thread slice of a workspace (NULL stays NULL). */
static T *FN(slice)(void *base, int64_t per_thread, int t) {
  return base ? (T *)base + (int64_t)t * per_thread : NULL;
}

/* The w chunk w[:, v0:v0+nv] as T: w itself (ld = V) when w has the math dtype, else
 * widened row by row into buf (ld = nv). */
static const T *FN(w_chunk)(const cpu_state *s, const tkb_array *w, int64_t v0, int64_t nv,
                            T *buf, int64_t *ld) {
  const int64_t Hd = s->p.Hd, V = s->p.V;
  if (w->spec.dtype == MATH_DT) {
    *ld = V;
    return (const T *)w->data + v0;
  }
  const size_t es = tkb_dtype_size(w->spec.dtype);
  for (int64_t k = 0; k < Hd; k++)
    tkb_convert((const char *)w->data + (size_t)(k * V + v0) * es, w->spec.dtype, buf + k * nv,
                MATH_DT, (size_t)nv);
  *ld = nv;
  return buf;
}

/* x[r0:r0+nb, k0:k0+nk] as T: x itself (ld = Hd) when x has the math dtype, else widened
 * into buf (ld = nk) unless `ready` says buf already holds it. */
static const T *FN(x_block)(const cpu_state *s, const tkb_array *x, int64_t r0, int64_t nb,
                            int64_t k0, int64_t nk, T *buf, bool ready, int64_t *ld) {
  const int64_t Hd = s->p.Hd;
  if (x->spec.dtype == MATH_DT) {
    *ld = Hd;
    /* an empty x has no data to point into (Hd = 0: no product reads it) */
    return x->data ? (const T *)x->data + r0 * Hd + k0 : NULL;
  }
  *ld = nk;
  if (ready) return buf;
  const size_t es = tkb_dtype_size(x->spec.dtype);
  for (int64_t r = 0; nk > 0 && r < nb; r++) /* nk = 0: an empty x, no data */
    tkb_convert((const char *)x->data + (size_t)((r0 + r) * Hd + k0) * es, x->spec.dtype,
                buf + r * nk, MATH_DT, (size_t)nk);
  return buf;
}

/* L[nb, nv] (ld nv) = X[nb, Hd] @ W[Hd, nv]  (Hd = 0 gives zeros without asking BLAS) */
static void FN(logits)(const cpu_state *s, const T *X, int64_t ldx, const T *W, int64_t ldw,
                       int64_t nb, int64_t nv, T *L) {
  if (s->p.Hd == 0) {
    memset(L, 0, (size_t)(nb * nv) * sizeof(T));
    return;
  }
  GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)nb, (blasint)nv, (blasint)s->p.Hd,
       1, X, (blasint)ldx, W, (blasint)ldw, 0, L, (blasint)nv);
}

/*
 * Folds a block of logits L[nb, nv] (rows r0.., columns v0..) into one group's online
 * logsumexp state. Per row i, with m = max of the logits seen so far and
 * sum = sum of exp(logit - m) over them, a block with max cm moves both to
 * mn = max(m, cm):
 *   sum = sum * exp(m - mn) + sum_v exp(L[r][v] - mn),   m = mn.
 * lab[i] catches logits[i, labels[i]] when its column is in the block.
 */
static void FN(fold_block)(const T *L, int64_t nb, int64_t nv, int64_t r0, int64_t v0,
                           const int32_t *labels, T *m, T *sum, T *lab) {
  for (int64_t r = 0; r < nb; r++) {
    const int64_t i = r0 + r;
    const T *l = L + r * nv;
    T cm = -(T)INFINITY, cs = 0;
#pragma omp simd reduction(max : cm)
    for (int64_t v = 0; v < nv; v++) cm = l[v] > cm ? l[v] : cm;
    const T mn = m[i] > cm ? m[i] : cm;
#pragma omp simd reduction(+ : cs)
    for (int64_t v = 0; v < nv; v++) cs += EXP(l[v] - mn);
    sum[i] = sum[i] * (m[i] == mn ? (T)1 : EXP(m[i] - mn)) + cs;
    m[i] = mn;
    const int64_t y = labels[i];
    if (y >= v0 && y < v0 + nv) lab[i] = l[y - v0];
  }
}

/*
 * Forward: loss (and lse when not NULL).
 * The vocabulary's chunks are split into ngroups consecutive groups; a thread takes a
 * whole group (dynamic schedule) and runs the online logsumexp of every row over the
 * group's chunks into the group's own (m, sum, lab) rows. The groups are then merged in
 * group order, per row:
 *   M = max_g m_g,  lse = M + log sum_g sum_g exp(m_g - M),  lab = sum_g lab_g
 * (lab_g is 0 except in the group holding the label's column). The groups and chunks
 * follow from the shapes alone, so the result does not depend on the thread count.
 *   loss = reduce_i (lse_i - lab_i), summed over rows in order, in double.
 */
static void FN(forward)(const cpu_state *s, const lsce_call *c, T *loss, T *lse, int nt) {
  const int64_t B = s->p.B, Hd = s->p.Hd, V = s->p.V, vc = s->fvc, bc = s->fbc;
  const int64_t G = s->ngroups, nch = (V + vc - 1) / vc;
  const int32_t *labels = c->labels->data;
  T *gm = s->g_m, *gs = s->g_s, *glab = s->g_lab;
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    T *wbuf = FN(slice)(s->f_w, s->f_w_n, t), *xbuf = FN(slice)(s->f_x, s->f_x_n, t);
    T *L = FN(slice)(s->f_logits, s->f_logits_n, t);
    bool x_ready = false; /* xbuf holds all of x (B <= bc): widened once per thread */
    /* no rows (B = 0): nothing to fold, and the group buffers are empty (NULL) */
#pragma omp for schedule(dynamic, 1)
    for (int64_t g = 0; g < (B > 0 ? G : 0); g++) {
      T *m = gm + g * B, *sum = gs + g * B, *lab = glab + g * B;
      for (int64_t i = 0; i < B; i++) {
        m[i] = -(T)INFINITY;
        sum[i] = 0;
        lab[i] = 0;
      }
      for (int64_t ch = nch * g / G; ch < nch * (g + 1) / G; ch++) {
        const int64_t v0 = ch * vc, nv = V - v0 < vc ? V - v0 : vc;
        int64_t ldw, ldx;
        const T *W = FN(w_chunk)(s, c->w, v0, nv, wbuf, &ldw);
        for (int64_t r0 = 0; r0 < B; r0 += bc) {
          const int64_t nb = B - r0 < bc ? B - r0 : bc;
          const T *X = FN(x_block)(s, c->x, r0, nb, 0, Hd, xbuf, x_ready, &ldx);
          x_ready = B <= bc;
          FN(logits)(s, X, ldx, W, ldw, nb, nv, L);
          FN(fold_block)(L, nb, nv, r0, v0, labels, m, sum, lab);
        }
      }
    }
#pragma omp for schedule(static)
    for (int64_t i = 0; i < B; i++) {
      T M = -(T)INFINITY, S = 0, lab_i = 0;
      for (int64_t g = 0; g < G; g++) M = gm[g * B + i] > M ? gm[g * B + i] : M;
      for (int64_t g = 0; g < G; g++) {
        const T mg = gm[g * B + i];
        if (mg != -(T)INFINITY) S += gs[g * B + i] * EXP(mg - M);
        lab_i += glab[g * B + i];
      }
      const T lse_i = M + LOG(S);
      if (lse) lse[i] = lse_i;
      s->row_loss[i] = (double)(lse_i - lab_i);
    }
  }
  double total = 0.0;
  for (int64_t i = 0; i < B; i++) total += s->row_loss[i];
  /* mean over B = 0 rows is 0/0 = NaN, as jnp.mean of an empty array */
  *loss = (T)(s->p.reduction == LSCE_MEAN ? total / (double)B : total);
}

/*
 * vjp. The vocabulary's chunks (vvc columns) are taken one after another by all threads
 * together, in three phases separated by barriers (phase 2's is phase 0's of the next chunk):
 *   0. W_c = w[:, chunk] widened to T (threads split the rows of w);
 *   1. threads split the rows into blocks; per block (rows are independent):
 *        D[r][v] = g (exp(X_r W_c - lse_i) - [v == labels[i]]),  g = dloss (/ B)
 *        dX_r += D_r W_c^T            (beta = 0 on the first chunk)
 *      D is kept for the whole chunk: [B, nv];
 *   2. threads split the columns of x into slices of vks; per slice
 *        dW_c[k-slice] = sum over row superblocks of X[rows, k-slice]^T D[rows]
 *      (superblocks of vbk rows, added in order: beta = 0 for the first).
 * dX is dx itself when x has the math dtype, else dx_acc, rounded into dx at the end;
 * dW_c is dw's columns or dwbuf, rounded into dw per slice. Block and slice sizes that
 * change sums (vbk, vks, vvc) follow from the shapes alone: the result does not depend
 * on the thread count.
 */
static void FN(vjp)(const cpu_state *s, const lsce_call *c, const T *lse, T dloss,
                    tkb_array *dx, tkb_array *dw, int nt) {
  const int64_t B = s->p.B, Hd = s->p.Hd, V = s->p.V;
  const int64_t vc = s->vvc, bc = s->vbc, bk = s->vbk, ks = s->vks;
  const int32_t *labels = c->labels->data;
  const T g = s->p.reduction == LSCE_MEAN ? (T)(dloss / (T)B) : dloss;
  const bool dx_direct = dx && dx->spec.dtype == MATH_DT;
  const bool dw_direct = dw && dw->spec.dtype == MATH_DT;
  const bool w_direct = c->w->spec.dtype == MATH_DT;
  T *dX = dx_direct ? (T *)dx->data : (T *)s->dx_acc;
  T *D = s->v_d;
  if (B == 0 || Hd == 0) { /* dw is zeros (no rows) or empty; dx is empty */
    if (dw) memset(dw->data, 0, dw->nbytes);
    return;
  }
  const int64_t n_rb = (B + bc - 1) / bc, n_ks = (Hd + ks - 1) / ks;
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    T *xbuf = FN(slice)(s->v_x, s->v_x_n, t), *xs = FN(slice)(s->v_xs, s->v_xs_n, t);
    for (int64_t v0 = 0; v0 < V; v0 += vc) {
      const int64_t nv = V - v0 < vc ? V - v0 : vc;
      /* 0. W_c */
      const T *W = (const T *)c->w->data + v0;
      int64_t ldw = V;
      if (!w_direct) {
        const size_t es = tkb_dtype_size(c->w->spec.dtype);
        T *wb = s->v_w;
#pragma omp for schedule(static)
        for (int64_t k = 0; k < Hd; k++)
          tkb_convert((const char *)c->w->data + (size_t)(k * V + v0) * es, c->w->spec.dtype,
                      wb + k * nv, MATH_DT, (size_t)nv);
        W = wb;
        ldw = nv;
      }
      /* 1. D and dX, by row blocks */
#pragma omp for schedule(dynamic, 1)
      for (int64_t rb = 0; rb < n_rb; rb++) {
        const int64_t r0 = rb * bc, nb = B - r0 < bc ? B - r0 : bc;
        int64_t ldx;
        const T *X = FN(x_block)(s, c->x, r0, nb, 0, Hd, xbuf, false, &ldx);
        T *Dr = D + r0 * nv;
        FN(logits)(s, X, ldx, W, ldw, nb, nv, Dr);
        for (int64_t r = 0; r < nb; r++) {
          const int64_t i = r0 + r;
          T *d = Dr + r * nv;
          const T lse_i = lse[i];
#pragma omp simd
          for (int64_t v = 0; v < nv; v++) d[v] = g * EXP(d[v] - lse_i);
          const int64_t y = labels[i];
          if (y >= v0 && y < v0 + nv) d[y - v0] -= g;
        }
        if (dx)
          GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)nb, (blasint)Hd, (blasint)nv,
               1, Dr, (blasint)nv, W, (blasint)ldw, v0 == 0 ? 0 : 1, dX + r0 * Hd, (blasint)Hd);
      }
      /* 2. dW_c, by slices of columns of x. No barrier after it when the next chunk
       * starts with phase 0 (whose own barrier comes before D is overwritten). */
      if (dw) {
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t sl = 0; sl < n_ks; sl++) {
          const int64_t k0 = sl * ks, nk = Hd - k0 < ks ? Hd - k0 : ks;
          T *dWk = dw_direct ? (T *)dw->data + k0 * V + v0 : (T *)s->v_dw + k0 * nv;
          const int64_t lddw = dw_direct ? V : nv;
          for (int64_t b0 = 0; b0 < B; b0 += bk) {
            const int64_t nbk = B - b0 < bk ? B - b0 : bk;
            int64_t ldx;
            const T *Xs = FN(x_block)(s, c->x, b0, nbk, k0, nk, xs, false, &ldx);
            GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)nk, (blasint)nv,
                 (blasint)nbk, 1, Xs, (blasint)ldx, D + b0 * nv, (blasint)nv,
                 b0 == 0 ? 0 : 1, dWk, (blasint)lddw);
          }
          if (!dw_direct) {
            const size_t es = tkb_dtype_size(dw->spec.dtype);
            for (int64_t k = k0; k < k0 + nk; k++)
              tkb_convert((T *)s->v_dw + k * nv, MATH_DT,
                          (char *)dw->data + (size_t)(k * V + v0) * es, dw->spec.dtype,
                          (size_t)nv);
          }
        }
        if (w_direct) {
#pragma omp barrier
        }
      }
    }
    if (dx && !dx_direct) {
      const size_t es = tkb_dtype_size(dx->spec.dtype);
#pragma omp for schedule(static)
      for (int64_t i = 0; i < B; i++)
        tkb_convert(dX + i * Hd, MATH_DT, (char *)dx->data + (size_t)(i * Hd) * es,
                    dx->spec.dtype, (size_t)Hd);
    }
  }
}
