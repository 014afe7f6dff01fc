/*
 * cpu_kernels.h - the flash-attention kernels of cpu.c, written once for a math type and
 * included twice by cpu_variant.h (float for bfloat16/float16/float32 inputs, double for
 * float64), once per instruction set. Not a public header; expects from the includer:
 *   NUM     the math type             SFX     the function-name suffix (f32, f64)
 *   GEMM    tkb__blas.sgemm / .dgemm   EXPT    exp for NUM (vectorizable for float)
 *   EXP_ROW (optional) a variant's FN(exp_row) for NUM = float, in intrinsics
 *   TILE_MAX, EXP_ROW_BOUNDED, EXP_ROW_BOUNDED_LO (optional, together, NUM = float): the
 *           rows' maxima of a score tile and its least score (-inf when a score is
 *           NaN), and FN(exp_row) for rows whose every argument lies in
 *           [EXP_ROW_BOUNDED_LO, 0], which the forward takes where the least score
 *           shows that they do
 * q, k and v of every dtype are copied (widened) tile by tile (or head by head) into the
 * workspace, contiguous (FN(view_rows) says why).
 * Notation as in attention.h; "row" is a score row (b, h, t), "tile" a block of tq
 * query rows by bk keys.
 */

#define FN(name) ATTN_CAT(name, SFX)

/* ---- one thread's slices of the workspace ---- */

typedef struct FN(thread) {
  NUM *kc, *vc;       /* [S][D], [S][Dv]: widened k and v of kv head (kb, khk) */
  NUM *kt, *vt;       /* [D][S], [Dv][S]: k and v of that head transposed (vt: vtb, vthk) */
  NUM *qc, *oc;       /* [G][T][D], [G][T][Dv]: widened q and dout of the group (qb, qhk) */
  NUM *qbuf, *dobuf;  /* [tq][D], [tq][Dv]: widened q / dout rows of one tile */
  NUM *kbuf, *vbuf;   /* [bk][D], [bk][Dv]: widened k / v rows of one key tile */
  NUM *ktbuf, *vtbuf; /* [D][bk], [Dv][bk]: that key tile transposed */
  NUM *x, *y;         /* [tq][bk]: scores / probabilities, dp */
  NUM *oacc;          /* [tq][Dv]: unnormalized output rows */
  NUM *mrow, *lrow;   /* [tq]: running max and sum of the online softmax */
  NUM *pblk, *dpblk;  /* [tq][S]: one row block's probabilities (then ds) and dp */
  NUM *dqacc;         /* [tq][D] */
  NUM *dbacc;         /* [tq][S]: dbias partial sums of a row group */
  NUM *dkacc, *dvacc; /* [bk][D], [bk][Dv] */
  int64_t kb, khk, vtb, vthk, qb, qhk; /* heads held by kc/vc/kt, vt, qc/oc (-1: none) */
} FN(thread);

static FN(thread) FN(thread_slices)(const cpu_ws *ws) {
  NUM *m = (NUM *)ws->mem + (int64_t)omp_get_thread_num() * ws->off[CPU_N_SLICES];
  NUM **dst[CPU_N_SLICES];
  FN(thread) th;
  dst[CPU_KC] = &th.kc, dst[CPU_VC] = &th.vc, dst[CPU_KT] = &th.kt, dst[CPU_VT] = &th.vt;
  dst[CPU_QC] = &th.qc, dst[CPU_OC] = &th.oc, dst[CPU_QBUF] = &th.qbuf;
  dst[CPU_DOBUF] = &th.dobuf, dst[CPU_KBUF] = &th.kbuf, dst[CPU_VBUF] = &th.vbuf;
  dst[CPU_KTBUF] = &th.ktbuf, dst[CPU_VTBUF] = &th.vtbuf, dst[CPU_X] = &th.x;
  dst[CPU_Y] = &th.y, dst[CPU_OACC] = &th.oacc, dst[CPU_MROW] = &th.mrow;
  dst[CPU_LROW] = &th.lrow, dst[CPU_PBLK] = &th.pblk, dst[CPU_DPBLK] = &th.dpblk;
  dst[CPU_DQACC] = &th.dqacc, dst[CPU_DBACC] = &th.dbacc, dst[CPU_DKACC] = &th.dkacc;
  dst[CPU_DVACC] = &th.dvacc;
  for (int i = 0; i < CPU_N_SLICES; i++) *dst[i] = m + ws->off[i];
  th.kb = th.khk = th.vtb = th.vthk = th.qb = th.qhk = -1;
  return th;
}

/* ---- matrix products ---- */

/* C[M x N] = alpha op(A) B + beta C (row-major; op(A) = A^T when ta), as cblas; also
 * for K == 0 (C = beta C, where cblas might not touch C) and M or N == 0. B is never
 * transposed: products with B^T go to k and v transposed once per head (see cpu.c).
 * Runs on the calling thread (the hooks keep OpenBLAS single-threaded). beta is 0 or 1. */
static void FN(gemm)(bool ta, int64_t M, int64_t N, int64_t K, NUM alpha, const NUM *A,
                     int64_t lda, const NUM *B, int64_t ldb, NUM beta, NUM *C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    if (beta == 0)
      for (int64_t i = 0; i < M; i++) memset(C + i * ldc, 0, (size_t)N * sizeof(NUM));
    return;
  }
  GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (blasint)M, (blasint)N,
       (blasint)K, alpha, A, (blasint)(lda > 0 ? lda : 1), B, (blasint)(ldb > 0 ? ldb : 1),
       beta, C, (blasint)(ldc > 0 ? ldc : 1));
}

/* dst[c * ldd + r] = src[r * lds + c] for r < rows, c < cols, in blocks of 16 rows so
 * that reads and writes both stay in a few cache lines. */
static void FN(transpose)(NUM *dst, int64_t ldd, const NUM *src, int64_t lds, int64_t rows,
                          int64_t cols) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t r1 = r0 + 16 < rows ? r0 + 16 : rows;
    for (int64_t c = 0; c < cols; c++)
      for (int64_t r = r0; r < r1; r++) dst[c * ldd + r] = src[r * lds + c];
  }
}

/* ---- moving rows between arrays and the workspace ---- */

/* dst[r][w] = x[b, r0 + r, hd, w] (r < n, w < W) widened to NUM; x is [B, L, NH, W]. */
static void FN(widen_rows)(NUM *dst, const tkb_array *x, int64_t b, int64_t hd, int64_t r0,
                           int64_t n) {
  const int64_t L = x->spec.shape[1], NH = x->spec.shape[2], W = x->spec.shape[3];
  for (int64_t r = 0; r < n; r++) {
    const int64_t src = ((b * L + r0 + r) * NH + hd) * W;
    NUM *d = dst + r * W;
    switch (x->spec.dtype) {
      case TKB_BFLOAT16: {
        const uint16_t *s = (const uint16_t *)x->data + src;
        for (int64_t w = 0; w < W; w++) d[w] = (NUM)attn_bf16_widen(s[w]);
        break;
      }
      case TKB_FLOAT16: {
        const uint16_t *s = (const uint16_t *)x->data + src;
        for (int64_t w = 0; w < W; w++) d[w] = (NUM)attn_f16_widen(s[w]);
        break;
      }
      case TKB_FLOAT32: {
        const float *s = (const float *)x->data + src;
        for (int64_t w = 0; w < W; w++) d[w] = (NUM)s[w];
        break;
      }
      case TKB_FLOAT64: {
        const double *s = (const double *)x->data + src;
        for (int64_t w = 0; w < W; w++) d[w] = (NUM)s[w];
        break;
      }
      default: break; /* the plan admits no other dtype */
    }
  }
}

/* Rows [r0, r0 + n) of head hd of batch b of x, as NUM: copied (widened) into buf, row
 * stride W. Also for x already of the math type: read in place, the rows of a head are
 * NH * W elements apart (4 KiB for 8 heads of 128 floats), a stride that maps a tile's
 * rows onto the same few L1 sets; contiguous, the tile products ran 10-15 % faster
 * (T = S = 1024, D = 128, 8 heads, on the Xeon). */
static const NUM *FN(view_rows)(const tkb_array *x, int64_t b, int64_t hd, int64_t r0,
                              int64_t n, NUM *buf, int64_t *ld) {
  FN(widen_rows)(buf, x, b, hd, r0, n);
  *ld = x->spec.shape[3];
  return buf;
}

/* x[b, r0 + r, hd, w] = mul * src[r * ld + w] (r < n, w < W), rounded to x's dtype. */
static void FN(store_rows)(tkb_array *x, int64_t b, int64_t hd, int64_t r0, int64_t n,
                           const NUM *src, int64_t ld, NUM mul) {
  const int64_t L = x->spec.shape[1], NH = x->spec.shape[2], W = x->spec.shape[3];
  for (int64_t r = 0; r < n; r++) {
    const int64_t dst = ((b * L + r0 + r) * NH + hd) * W;
    const NUM *s = src + r * ld;
    switch (x->spec.dtype) {
      case TKB_BFLOAT16: {
        uint16_t *d = (uint16_t *)x->data + dst;
        for (int64_t w = 0; w < W; w++) d[w] = tkb_f32_to_bf16((float)(mul * s[w]));
        break;
      }
      case TKB_FLOAT16: {
        uint16_t *d = (uint16_t *)x->data + dst;
        for (int64_t w = 0; w < W; w++) d[w] = tkb_f32_to_f16((float)(mul * s[w]));
        break;
      }
      case TKB_FLOAT32: {
        float *d = (float *)x->data + dst;
        for (int64_t w = 0; w < W; w++) d[w] = (float)(mul * s[w]);
        break;
      }
      case TKB_FLOAT64: {
        double *d = (double *)x->data + dst;
        for (int64_t w = 0; w < W; w++) d[w] = (double)(mul * s[w]);
        break;
      }
      default: break;
    }
  }
}

/* The kv head (b, hk) as NUM: k and v rows (widened into kc/vc), k
 * transposed key tile by key tile and, when want_vt, v likewise (FN(tile_t)). Made once
 * per thread per head and kept while the thread stays on it. */
typedef struct FN(head) {
  const NUM *K, *V, *Kt, *Vt;
  int64_t ldk, ldv, S, bk;
} FN(head);

/* src's rows (S of W, row stride lds) transposed per key tile of bk keys: tile j0 is
 * [W][n] at dst + j0 W with row stride n = min(bk, S - j0), so a tile product reads
 * one contiguous block. Transposed whole ([W][S], row stride S), a tile's rows were S
 * floats apart: 4 KiB at S = 1024, which maps them all onto the same few L1 sets, and
 * every tile product read its B operand from L2. */
static void FN(tile_t)(NUM *dst, const NUM *src, int64_t lds, int64_t S, int64_t W,
                       int64_t bk) {
  for (int64_t j0 = 0; j0 < S; j0 += bk) {
    const int64_t n = S - j0 < bk ? S - j0 : bk;
    FN(transpose)(dst + j0 * W, n, src + j0 * lds, lds, n, W);
  }
}

/* Key tile j0 of a FN(tile_t) layout: its [W][n] block, row stride *ld. */
static const NUM *FN(tile)(const NUM *t, const FN(head) *hd, int64_t j0, int64_t W,
                           int64_t *ld) {
  *ld = hd->S - j0 < hd->bk ? hd->S - j0 : hd->bk;
  return t + j0 * W;
}

static FN(head) FN(kv_head)(FN(thread) *th, const attn_plan *p, const attn_inputs *in,
                            int64_t b, int64_t hk, int64_t bk, bool want_vt) {
  FN(head) hd;
  const bool fresh = th->kb != b || th->khk != hk;
  if (fresh) { /* copied whatever the dtype: see FN(view_rows) */
    FN(widen_rows)(th->kc, in->k, b, hk, 0, p->S);
    FN(widen_rows)(th->vc, in->v, b, hk, 0, p->S);
  }
  hd.K = th->kc, hd.ldk = p->D;
  hd.V = th->vc, hd.ldv = p->Dv;
  hd.S = p->S;
  hd.bk = bk;
  if (fresh) {
    FN(tile_t)(th->kt, hd.K, hd.ldk, p->S, p->D, bk);
    th->kb = b, th->khk = hk;
  }
  if (want_vt && (th->vtb != b || th->vthk != hk)) {
    FN(tile_t)(th->vt, hd.V, hd.ldv, p->S, p->Dv, bk);
    th->vtb = b, th->vthk = hk;
  }
  hd.Kt = th->kt;
  hd.Vt = th->vt;
  return hd;
}

/* ---- score rows ---- */

/* On the n scores of row (b, h, t) for keys j0 .. j0 + n - 1:
 *   row[s] += bias[b, h, t, j0 + s]
 *   row[s]  = -inf where mask[b, h, t, j0 + s] is false, or causal and j0 + s > t */
static void FN(mask_row)(const attn_plan *p, const attn_inputs *in, NUM *row, int64_t n, int64_t b,
                         int64_t h, int64_t t, int64_t j0) {
  if (in->bias) {
    const int64_t off = attn_bcast_index(p->bias_st, b, h, t, j0);
    if (p->bias_st[3] == 0) { /* one bias value for the whole row */
      const NUM c = (NUM)ops_get(in->bias, off);
      for (int64_t s = 0; s < n; s++) row[s] += c;
    } else {
      switch (in->bias->spec.dtype) {
        case TKB_BFLOAT16: {
          const uint16_t *bp = (const uint16_t *)in->bias->data + off;
          for (int64_t s = 0; s < n; s++) row[s] += (NUM)attn_bf16_widen(bp[s]);
          break;
        }
        case TKB_FLOAT16: {
          const uint16_t *bp = (const uint16_t *)in->bias->data + off;
          for (int64_t s = 0; s < n; s++) row[s] += (NUM)attn_f16_widen(bp[s]);
          break;
        }
        case TKB_FLOAT32: {
          const float *bp = (const float *)in->bias->data + off;
          for (int64_t s = 0; s < n; s++) row[s] += (NUM)bp[s];
          break;
        }
        case TKB_FLOAT64: {
          const double *bp = (const double *)in->bias->data + off;
          for (int64_t s = 0; s < n; s++) row[s] += (NUM)bp[s];
          break;
        }
        default: break;
      }
    }
  }
  if (in->mask) {
    const uint8_t *mp = (const uint8_t *)in->mask->data + attn_bcast_index(p->mask_st, b, h, t, j0);
    if (p->mask_st[3] == 0) {
      if (!mp[0])
        for (int64_t s = 0; s < n; s++) row[s] = (NUM)-INFINITY;
    } else {
      for (int64_t s = 0; s < n; s++) row[s] = mp[s] ? row[s] : (NUM)-INFINITY;
    }
  }
  if (p->causal)
    for (int64_t s = t - j0 + 1 > 0 ? t - j0 + 1 : 0; s < n; s++) row[s] = (NUM)-INFINITY;
}

/* max_s row[s] (-inf for an all-masked row) */
static inline NUM FN(row_max)(const NUM *row, int64_t n) {
  NUM mx = (NUM)-INFINITY;
#pragma omp simd reduction(max : mx)
  for (int64_t s = 0; s < n; s++) mx = row[s] > mx ? row[s] : mx;
  return mx;
}

/* row[s] = exp(row[s] - sub); returns sum_s row[s]. Masked scores (-inf) give 0.
 * Two loops: the exp loop alone vectorizes in every inlined copy, which it did not
 * with the reduction fused in (measured: scalar exp took a third of the forward). */
static NUM FN(exp_row)(NUM *row, int64_t n, NUM sub) {
#ifdef EXP_ROW
  return EXP_ROW(row, n, sub);
#endif
  for (int64_t s = 0; s < n; s++) row[s] = EXPT(row[s] - sub);
  NUM sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t s = 0; s < n; s++) sum += row[s];
  return sum;
}

/* row[s] = p[s] = exp(row[s] - lse): probabilities from logits and the row's lse
 * residual; all 0 for an empty row (lse = -inf). */
static void FN(probs_row)(NUM *row, int64_t n, NUM lse) {
  if (lse == (NUM)-INFINITY) {
    memset(row, 0, (size_t)n * sizeof(NUM));
    return;
  }
  (void)FN(exp_row)(row, n, lse);
}

/* ---- forward: one tile of query rows against all keys, online softmax ---- */

/*
 * Rows t0 .. t0 + m - 1 of head (b, h), hk = h / G. Per key tile j0 .. j0 + n - 1:
 *   x[i][s]  = scale * q[t0+i] . k[j0+s] (+ bias, masks)              (gemm)
 *   mnew[i]  = max(mrow[i], max_s x[i][s])
 *   x[i][s]  = exp(x[i][s] - mnew[i])
 *   lrow[i]  = lrow[i] exp(mrow[i] - mnew[i]) + sum_s x[i][s]
 *   o[i][:]  = o[i][:] exp(mrow[i] - mnew[i]) + sum_s x[i][s] v[j0+s][:]   (gemm)
 * then out[t0+i] = o[i] / lrow[i] and lse[t0+i] = mrow[i] + log lrow[i]. A row with no
 * kept key keeps mrow = -inf, lrow = 0: out 0, lse -inf. Causal: key tiles past the
 * block's last row are skipped.
 */
static void FN(forward_tile)(FN(thread) *th, const attn_plan *p, const attn_inputs *in,
                             const cpu_ws *ws, int64_t b, int64_t h, int64_t t0, int64_t m,
                             tkb_array *out, tkb_array *lse_out) {
  const int64_t hk = h / p->G, bk = ws->bk, Dv = p->Dv;
  int64_t ldq;
  const NUM *Q = FN(view_rows)(in->q, b, h, t0, m, th->qbuf, &ldq);
  const FN(head) hd = FN(kv_head)(th, p, in, b, hk, ws->bk, false);
  for (int64_t i = 0; i < m; i++) th->mrow[i] = (NUM)-INFINITY, th->lrow[i] = 0;
  memset(th->oacc, 0, (size_t)(m * Dv) * sizeof(NUM));
  const int64_t s_end = p->causal && t0 + m < p->S ? t0 + m : p->S;
  for (int64_t j0 = 0; j0 < s_end; j0 += bk) {
    const int64_t n = s_end - j0 < bk ? s_end - j0 : bk;
    int64_t ldt;
    const NUM *Kt = FN(tile)(hd.Kt, &hd, j0, p->D, &ldt);
    FN(gemm)(false, m, n, p->D, (NUM)p->scale, Q, ldq, Kt, ldt, 0, th->x, bk);
    for (int64_t i = 0; i < m; i++) FN(mask_row)(p, in, th->x + i * bk, n, b, h, t0 + i, j0);
#ifdef TILE_MAX
    /* the rows' maxima into y (free in the forward), and the tile's least score */
    const NUM tmin = TILE_MAX(th->x, m, n, bk, th->y);
#endif
    for (int64_t i = 0; i < m; i++) {
      NUM *row = th->x + i * bk;
#ifdef TILE_MAX
      const NUM mx = th->y[i], mold = th->mrow[i];
#else
      const NUM mx = FN(row_max)(row, n), mold = th->mrow[i];
#endif
      const NUM mnew = mx > mold ? mx : mold;
      if (mnew == (NUM)-INFINITY) { /* nothing kept yet: p = 0, o and l stay 0 */
        memset(row, 0, (size_t)n * sizeof(NUM));
        continue;
      }
      /* 0 when mold = -inf; exactly 1 when the max is unchanged (exp(0) = 1 in EXPT),
       * most rows of most key tiles past the first: no scalar exp for those */
      const NUM corr = mnew == mold ? (NUM)1 : EXPT(mold - mnew);
      NUM sum;
#ifdef TILE_MAX
      /* every score minus mnew within [EXP_ROW_BOUNDED_LO, 0], none NaN: the exp
       * without the clamp's compare (the same bits) */
      if (tmin - mnew >= EXP_ROW_BOUNDED_LO) sum = EXP_ROW_BOUNDED(row, n, mnew);
      else
#endif
        sum = FN(exp_row)(row, n, mnew);
      th->lrow[i] = th->lrow[i] * corr + sum;
      th->mrow[i] = mnew;
      if (corr != 1) {
        NUM *o = th->oacc + i * Dv;
        for (int64_t j = 0; j < Dv; j++) o[j] *= corr;
      }
    }
    FN(gemm)(false, m, Dv, n, 1, th->x, bk, hd.V + j0 * hd.ldv, hd.ldv, 1, th->oacc, Dv);
  }
  for (int64_t i = 0; i < m; i++) {
    const NUM l = th->lrow[i], inv = l > 0 ? 1 / l : 0;
    NUM *o = th->oacc + i * Dv;
    for (int64_t j = 0; j < Dv; j++) o[j] *= inv;
    if (lse_out)
      ((NUM *)lse_out->data)[(b * p->H + h) * p->T + t0 + i] =
          l > 0 ? th->mrow[i] + (NUM)log((double)l) : (NUM)-INFINITY;
  }
  FN(store_rows)(out, b, h, t0, m, th->oacc, Dv, 1);
}

static void FN(forward)(const attn_plan *p, const attn_inputs *in, const cpu_ws *ws,
                        tkb_array *out, tkb_array *lse_out) {
  const int64_t tq = ws->tq, nqt = (p->T + tq - 1) / tq;
  const int64_t items = p->B * p->H * nqt;
  const int nt = cpu_threads(ws);
  /* items in (b, hk, g, query tile) order: a thread's consecutive items share the kv
   * head it widened. Each thread takes them from a range of its own (attn_ranges_next),
   * items one at a time, as causal tiles grow along t. */
  if (items < INT32_MAX) {
    attn_range ranges[nt];
    attn_ranges_init(ranges, nt, items);
#pragma omp parallel num_threads(nt)
    {
      FN(thread) th = FN(thread_slices)(ws);
      for (int64_t it; (it = attn_ranges_next(ranges, nt, omp_get_thread_num())) >= 0;) {
        const int64_t b = it / (p->H * nqt), h = it / nqt % p->H, t0 = it % nqt * tq;
        FN(forward_tile)(&th, p, in, ws, b, h, t0, p->T - t0 < tq ? p->T - t0 : tq, out,
                         lse_out);
      }
    }
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    FN(thread) th = FN(thread_slices)(ws);
#pragma omp for schedule(dynamic, 1)
    for (int64_t it = 0; it < items; it++) {
      const int64_t b = it / (p->H * nqt), h = it / nqt % p->H, t0 = it % nqt * tq;
      FN(forward_tile)(&th, p, in, ws, b, h, t0, p->T - t0 < tq ? p->T - t0 : tq, out, lse_out);
    }
  }
}

/* ---- vjp ---- */

/*
 * Flash-attention backward from q, k, v, dout and the lse residual; probabilities are
 * recomputed, never stored for the whole [T, S]:
 *   p[t][s]  = exp(x[t][s] - lse[t])           (x: the logits, as in the forward)
 *   dp[t][s] = dout[t] . v[s]
 *   delta[t] = sum_s p[t][s] dp[t][s]
 *   ds[t][s] = p[t][s] (dp[t][s] - delta[t])
 *   dq[t] = scale sum_s ds[t][s] k[s]     dk[s] = scale sum_t ds[t][s] q[t]
 *   dv[s] = sum_t p[t][s] dout[t]         dbias = ds summed over broadcast dims
 * Two passes, each of which owns what it writes, so that no two threads add into the
 * same element and the result does not depend on the thread count:
 *   A. per query tile: p and dp for the tile's row block [tq, S], delta (kept for B),
 *      ds, dq, and dbias (tiles that share dbias cells run in one work item, in order);
 *   B. per key tile of a kv head: dk and dv, over the group's query heads and rows.
 */

/* Pass A: query tiles grouped so that each group owns its dbias cells. The dims
 * (b, h, query tile) along which bias broadcasts (its dim is 1, ours is not) are
 * iterated inside a group, the others enumerate groups. */
typedef struct FN(groups) {
  int64_t ext[3];
  bool red[3];
  int64_t outer, inner;
} FN(groups);

static FN(groups) FN(make_groups)(const attn_plan *p, int64_t nqt) {
  FN(groups) g = {.ext = {p->B, p->H, nqt}, .outer = 1, .inner = 1};
  const int64_t full[3] = {p->B, p->H, p->T};
  for (int i = 0; i < 3; i++) {
    g.red[i] = p->bias && p->bias_st[i] == 0 && full[i] > 1;
    if (g.red[i]) g.inner *= g.ext[i];
    else g.outer *= g.ext[i];
  }
  return g;
}

static void FN(vjp_rows)(FN(thread) *th, const attn_plan *p, const attn_inputs *in,
                         const cpu_ws *ws, const tkb_array *lse_in, const tkb_array *dout,
                         int64_t b, int64_t h, int64_t t0, int64_t m, tkb_array *dq) {
  const int64_t hk = h / p->G, bk = ws->bk, S = p->S, ldb = S > 0 ? S : 1;
  int64_t ldq, lddo;
  const NUM *Q = FN(view_rows)(in->q, b, h, t0, m, th->qbuf, &ldq);
  const NUM *dO = FN(view_rows)(dout, b, h, t0, m, th->dobuf, &lddo);
  const FN(head) hd = FN(kv_head)(th, p, in, b, hk, ws->bk, true);
  const NUM *lse = (const NUM *)lse_in->data + (b * p->H + h) * p->T + t0;
  NUM *delta = (NUM *)ws->delta + (b * p->H + h) * p->T + t0;
  const int64_t s_end = p->causal && t0 + m < S ? t0 + m : S;
  /* pblk[i][s] = p, dpblk[i][s] = dp for s < s_end (later keys are all masked) */
  for (int64_t j0 = 0; j0 < s_end; j0 += bk) {
    const int64_t n = s_end - j0 < bk ? s_end - j0 : bk;
    int64_t ldt;
    const NUM *Kt = FN(tile)(hd.Kt, &hd, j0, p->D, &ldt);
    FN(gemm)(false, m, n, p->D, (NUM)p->scale, Q, ldq, Kt, ldt, 0, th->pblk + j0, ldb);
    for (int64_t i = 0; i < m; i++) {
      NUM *row = th->pblk + i * ldb + j0;
      FN(mask_row)(p, in, row, n, b, h, t0 + i, j0);
      FN(probs_row)(row, n, lse[i]);
    }
    const NUM *Vt = FN(tile)(hd.Vt, &hd, j0, p->Dv, &ldt);
    FN(gemm)(false, m, n, p->Dv, 1, dO, lddo, Vt, ldt, 0, th->dpblk + j0, ldb);
  }
  /* delta[i] = sum_s p dp;  ds = p (dp - delta), in place of p */
  for (int64_t i = 0; i < m; i++) {
    NUM *pr = th->pblk + i * ldb;
    const NUM *dp = th->dpblk + i * ldb;
    NUM d = 0;
#pragma omp simd reduction(+ : d)
    for (int64_t s = 0; s < s_end; s++) d += pr[s] * dp[s];
    delta[i] = d;
    for (int64_t s = 0; s < s_end; s++) pr[s] = pr[s] * (dp[s] - d);
  }
  /* dq = scale ds k, key tile by key tile (keeps each gemm single-threaded) */
  if (dq) {
    if (s_end == 0 || p->D == 0) memset(th->dqacc, 0, (size_t)(m * p->D) * sizeof(NUM));
    for (int64_t j0 = 0; j0 < s_end; j0 += bk) {
      const int64_t n = s_end - j0 < bk ? s_end - j0 : bk;
      FN(gemm)(false, m, p->D, n, 1, th->pblk + j0, ldb, hd.K + j0 * hd.ldk, hd.ldk, j0 ? 1 : 0,
               th->dqacc, p->D);
    }
    FN(store_rows)(dq, b, h, t0, m, th->dqacc, p->D, (NUM)p->scale);
  }
  /* dbias partial sums: dbacc[row][col], row = i where bias has a t dim (else 0),
   * col = s where it has an s dim (else 0) */
  if (in->bias) {
    const bool has_t = p->bias_st[2] != 0, has_s = p->bias_st[3] != 0;
    for (int64_t i = 0; i < m; i++) {
      const NUM *ds = th->pblk + i * ldb;
      NUM *acc = th->dbacc + (has_t ? i : 0) * ldb;
      if (has_s) {
        for (int64_t s = 0; s < s_end; s++) acc[s] += ds[s];
      } else {
        NUM sum = 0;
        for (int64_t s = 0; s < s_end; s++) sum += ds[s];
        acc[0] += sum;
      }
    }
  }
}

/* Pass B: dk and dv of keys j0 .. j0 + n - 1 of kv head (b, hk), over the query rows of
 * its G heads (causal: rows t >= j0 only):
 *   x = p (recomputed),  dv += x^T dout,  y = dp = dout v^T,  x = ds,  dk += x^T q */
static void FN(vjp_keys)(FN(thread) *th, const attn_plan *p, const attn_inputs *in,
                         const cpu_ws *ws, const tkb_array *lse_in, const tkb_array *dout,
                         int64_t b, int64_t hk, int64_t j0, int64_t n, tkb_array *dk,
                         tkb_array *dv) {
  const int64_t tq = ws->tq, bk = ws->bk, D = p->D, Dv = p->Dv;
  int64_t ldk, ldv, ldq, lddo;
  const NUM *K = FN(view_rows)(in->k, b, hk, j0, n, th->kbuf, &ldk);
  const NUM *V = FN(view_rows)(in->v, b, hk, j0, n, th->vbuf, &ldv);
  FN(transpose)(th->ktbuf, bk, K, ldk, n, D); /* [D][n], row stride bk */
  FN(transpose)(th->vtbuf, bk, V, ldv, n, Dv);
  if (th->qb != b || th->qhk != hk) {
    for (int64_t g = 0; g < p->G; g++) {
      FN(widen_rows)(th->qc + g * p->T * D, in->q, b, hk * p->G + g, 0, p->T);
      FN(widen_rows)(th->oc + g * p->T * Dv, dout, b, hk * p->G + g, 0, p->T);
    }
    th->qb = b, th->qhk = hk;
  }
  memset(th->dkacc, 0, (size_t)(n * D) * sizeof(NUM));
  memset(th->dvacc, 0, (size_t)(n * Dv) * sizeof(NUM));
  for (int64_t g = 0; g < p->G; g++) {
    const int64_t h = hk * p->G + g;
    const NUM *lse = (const NUM *)lse_in->data + (b * p->H + h) * p->T;
    const NUM *delta = (const NUM *)ws->delta + (b * p->H + h) * p->T;
    for (int64_t t0 = p->causal ? j0 : 0; t0 < p->T; t0 += tq) {
      const int64_t m = p->T - t0 < tq ? p->T - t0 : tq;
      const NUM *Q = th->qc + (g * p->T + t0) * D, *dO = th->oc + (g * p->T + t0) * Dv;
      ldq = D;
      lddo = Dv;
      FN(gemm)(false, m, n, D, (NUM)p->scale, Q, ldq, th->ktbuf, bk, 0, th->x, bk);
      for (int64_t i = 0; i < m; i++) {
        NUM *row = th->x + i * bk;
        FN(mask_row)(p, in, row, n, b, h, t0 + i, j0);
        FN(probs_row)(row, n, lse[t0 + i]);
      }
      FN(gemm)(true, n, Dv, m, 1, th->x, bk, dO, lddo, 1, th->dvacc, Dv);
      FN(gemm)(false, m, n, Dv, 1, dO, lddo, th->vtbuf, bk, 0, th->y, bk);
      for (int64_t i = 0; i < m; i++) {
        NUM *pr = th->x + i * bk;
        const NUM *dp = th->y + i * bk, d = delta[t0 + i];
        for (int64_t s = 0; s < n; s++) pr[s] = pr[s] * (dp[s] - d);
      }
      FN(gemm)(true, n, D, m, 1, th->x, bk, Q, ldq, 1, th->dkacc, D);
    }
  }
  if (dk) FN(store_rows)(dk, b, hk, j0, n, th->dkacc, D, (NUM)p->scale);
  if (dv) FN(store_rows)(dv, b, hk, j0, n, th->dvacc, Dv, 1);
}

static void FN(vjp)(const attn_plan *p, const attn_inputs *in, const cpu_ws *ws,
                    const tkb_array *lse_in, const tkb_array *dout, tkb_array *dq,
                    tkb_array *dk, tkb_array *dv, tkb_array *dbias) {
  const int64_t tq = ws->tq, bk = ws->bk, nqt = (p->T + tq - 1) / tq;
  const int64_t nkt = (p->S + bk - 1) / bk, ldb = p->S > 0 ? p->S : 1;
  const FN(groups) grp = FN(make_groups)(p, nqt);
#pragma omp parallel num_threads(cpu_threads(ws))
  {
    FN(thread) th = FN(thread_slices)(ws);
    /* Pass A */
#pragma omp for schedule(dynamic, 1)
    for (int64_t og = 0; og < grp.outer; og++) {
      int64_t bhq[3] = {0, 0, 0}, m = 0;
      if (in->bias) memset(th.dbacc, 0, (size_t)(tq * ldb) * sizeof(NUM));
      for (int64_t ig = 0; ig < grp.inner; ig++) {
        int64_t o = og, r = ig;
        for (int i = 2; i >= 0; i--) { /* (b, h, tile) from og and ig, row-major */
          int64_t *src = grp.red[i] ? &r : &o;
          bhq[i] = *src % grp.ext[i];
          *src /= grp.ext[i];
        }
        const int64_t t0 = bhq[2] * tq;
        m = p->T - t0 < tq ? p->T - t0 : tq;
        FN(vjp_rows)(&th, p, in, ws, lse_in, dout, bhq[0], bhq[1], t0, m, dq);
      }
      if (dbias) { /* the group's cells; broadcast dims have stride 0 in bias_st */
        const int64_t rows = p->bias_st[2] != 0 ? m : 1, cols = p->bias_st[3] != 0 ? p->S : 1;
        for (int64_t i = 0; i < rows; i++)
          for (int64_t s = 0; s < cols; s++)
            ops_set(dbias, attn_bcast_index(p->bias_st, bhq[0], bhq[1], bhq[2] * tq + i, s),
                     (double)th.dbacc[i * ldb + s]);
      }
    }
    /* the implicit barrier of the loop above: delta is complete for pass B */
    /* Pass B */
    if (dk || dv) {
#pragma omp for schedule(dynamic, 1)
      for (int64_t it = 0; it < p->B * p->Hk * nkt; it++) {
        const int64_t b = it / (p->Hk * nkt), hk = it / nkt % p->Hk, j0 = it % nkt * bk;
        FN(vjp_keys)(&th, p, in, ws, lse_in, dout, b, hk, j0, p->S - j0 < bk ? p->S - j0 : bk,
                     dk, dv);
      }
    }
  }
}

#undef FN
