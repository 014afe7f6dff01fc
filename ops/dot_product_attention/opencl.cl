/*
 * opencl.cl - dot_product_attention's OpenCL kernels (host side: opencl.c; math:
 * attention.h). Built after the backend's prelude and ops/common/opencl.cl with
 *   -DX_DT=<q's = k's = v's dtype> -DB_DT=<bias's dtype> -DOPS_F64=0|1 -DATTN_D=<D>
 *   -DATTN_DV=<Dv> -DHAS_BIAS=0|1 -DHAS_MASK=0|1 -DCAUSAL=0|1
 * q [B,T,H,D], k [B,S,Hk,D], v [B,S,Hk,Dv], out and dout [B,T,H,Dv], lse and delta
 * [B,H,T] in the math type; bias and mask broadcast to [B,H,T,S] through element strides
 * (0 where they broadcast). Query head h reads kv head h / G.
 *
 * A work-item owns one query row (forward, dq) or one key (dk, dv) and holds its head
 * dims in registers as 16-wide vectors (the head dims are compiled in, padded to 16 with
 * zeros); its work-group of ATTN_TILE rows shares the other side's rows, staged through
 * local memory ATTN_TILE at a time. Per row the scores then exist one tile at a time:
 * memory O(T D), never O(T S).
 *   attn_fwd        online softmax over key tiles: m' = max(m, max_j l_j),
 *                   p_j = e^(l_j - m'), l' = e^(m - m') l + sum_j p_j,
 *                   o' = e^(m - m') o + sum_j p_j v_j;  out = o / l, lse = m + log l
 *   attn_bwd_dq     with p = e^(l - lse) and dp = dout_t . v_s: pass 1 over the keys sums
 *                   delta_t = sum_s p dp (= dout_t . out_t), stored for attn_bwd_dkv;
 *                   pass 2: dq_t = scale sum_s p (dp - delta_t) k_s
 *   attn_bwd_dkv    per key s of kv head hk, over the G query heads of hk and the query
 *                   tiles: dv_s = sum p dout_t, dk_s = scale sum p (dp - delta_t) q_t
 *   attn_bwd_dbias  a work-item per bias element: the sum of p (dp - delta) over the
 *                   (b, h, t, s) it is broadcast to, recomputed from global memory
 * l = scale q.k + bias, or -inf where the mask or causality (s > t) drops it. A row that
 * keeps nothing ends with l = 0: out = 0, lse = -inf, and p = 0 in the vjp (zero grads).
 * Every sum has a fixed order, so results do not depend on the device.
 */
#define X_T TKB_T(X_DT)
#define ATTN_TILE 32 /* query rows (keys) per work-group, and per staged tile */
/* 16-wide vectors of a q or k row, of a v, out or dout row (at least 1: C has no empty
 * arrays; a head dim of 0 gives vectors of zeros) */
#define NQ (ATTN_D > 16 ? (ATTN_D + 15) / 16 : 1)
#define NV (ATTN_DV > 16 ? (ATTN_DV + 15) / 16 : 1)

/* Row r's vectors (of a [rows, heads, dim] array at head `hd`) into x[0 .. nvec). */
#define ATTN_LOAD_ROW(x, nvec, base, dim)                                          \
  for (int c_ = 0; c_ < (nvec); c_++) (x)[c_] = OPS_RUN(X_DT, (base) + 16 * c_, (dim) - 16 * c_)

/* Whether (b, h, t, s) is kept (s < S and t < T are the caller's). */
static inline bool attn_keep(__global const uchar *mask, long4 mst, long b, long h, long t, long s) {
#if CAUSAL
  if (s > t) return false;
#endif
#if HAS_MASK
  if (!mask[b * mst.x + h * mst.y + t * mst.z + s * mst.w]) return false;
#endif
  return true;
}

/* The logit of a kept (b, h, t, s) from the dot product q.k. */
static inline acc_t attn_logit(acc_t dot, acc_t scale, __global const TKB_T(B_DT) *bias, long4 bst,
                               long b, long h, long t, long s) {
  acc_t l = scale * dot;
#if HAS_BIAS
  l += (acc_t)TKB_LD(B_DT, bias[b * bst.x + h * bst.y + t * bst.z + s * bst.w]);
#endif
  return l;
}

/* p = e^(l - lse): 0 when dropped (l = -inf) or when the row kept nothing (lse = -inf) */
static inline acc_t attn_prob(acc_t l, acc_t lse) {
  return (l == -INFINITY || lse == -INFINITY) ? (acc_t)0 : exp(l - lse);
}

/* Stages rows s0 .. s0 + ATTN_TILE of a [B, S, Hk, dim] array (kv head hk) as 16-wide
 * vectors, zeros past S: the work-group together. */
#define ATTN_STAGE(dst, nvec, src, dim, s0)                                                   \
  for (int e_ = get_local_id(0); e_ < ATTN_TILE * (nvec); e_ += ATTN_TILE) {                  \
    const int j_ = e_ / (nvec), c_ = e_ % (nvec);                                             \
    const long s_ = (s0) + j_;                                                                \
    (dst)[j_][c_] = s_ < S ? OPS_RUN(X_DT, (src) + ((b * S + s_) * Hk + hk) * (dim) + 16 * c_, \
                                     (dim) - 16 * c_)                                         \
                           : (acc16_t)0;                                                      \
  }

/* The same for query rows t0 .. of a [B, T, H, dim] array (query head h), zeros past T. */
#define ATTN_STAGE_Q(dst, nvec, src, dim, t0)                                                 \
  for (int e_ = get_local_id(0); e_ < ATTN_TILE * (nvec); e_ += ATTN_TILE) {                  \
    const int i_ = e_ / (nvec), c_ = e_ % (nvec);                                             \
    const long t_ = (t0) + i_;                                                                \
    (dst)[i_][c_] = t_ < T ? OPS_RUN(X_DT, (src) + ((b * T + t_) * H + h) * (dim) + 16 * c_,   \
                                     (dim) - 16 * c_)                                         \
                           : (acc16_t)0;                                                      \
  }

static inline acc_t attn_dot(const acc16_t *x, __local const acc16_t *y, int n) {
  acc16_t s = 0;
  for (int c = 0; c < n; c++) s = fma(x[c], y[c], s);
  return ops_hsum16(s);
}

/* One work-group per (b, h, tile of query rows), a work-item per row. */
__kernel __attribute__((reqd_work_group_size(ATTN_TILE, 1, 1))) void attn_fwd(
    __global const X_T *q, __global const X_T *k, __global const X_T *v,
    __global const TKB_T(B_DT) *bias, __global const uchar *mask, __global X_T *out,
    __global acc_t *lse, long B, long T, long S, long H, long Hk, long G, acc_t scale,
    long4 bst, long4 mst, int write_lse) {
  __local acc16_t ks[ATTN_TILE][NQ], vs[ATTN_TILE][NV];
  const long tiles = (T + ATTN_TILE - 1) / ATTN_TILE, wg = get_group_id(0);
  const long t0 = wg % tiles * ATTN_TILE, h = wg / tiles % H, b = wg / tiles / H, hk = h / G;
  const long t = t0 + get_local_id(0);
  const bool row = t < T;
  acc16_t qv[NQ], o[NV];
  ATTN_LOAD_ROW(qv, NQ, q + ((b * T + (row ? t : 0)) * H + h) * ATTN_D, ATTN_D);
  for (int c = 0; c < NV; c++) o[c] = 0;
  acc_t m = -INFINITY, l = 0;
  const long t_last = min(T - 1, t0 + ATTN_TILE - 1);
  const long s_end = CAUSAL ? min(S, t_last + 1) : S;
  for (long s0 = 0; s0 < s_end; s0 += ATTN_TILE) {
    barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile is consumed */
    ATTN_STAGE(ks, NQ, k, ATTN_D, s0);
    ATTN_STAGE(vs, NV, v, ATTN_DV, s0);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!row) continue;
    acc_t p[ATTN_TILE], tm = -INFINITY;
    for (int j = 0; j < ATTN_TILE; j++) {
      const long s = s0 + j;
      p[j] = (s < S && attn_keep(mask, mst, b, h, t, s))
                 ? attn_logit(attn_dot(qv, ks[j], NQ), scale, bias, bst, b, h, t, s)
                 : (acc_t)-INFINITY;
      tm = fmax(tm, p[j]);
    }
    const acc_t nm = fmax(m, tm);
    if (nm == -INFINITY) continue; /* nothing kept so far: o and l stay 0 */
    const acc_t alpha = m == -INFINITY ? (acc_t)0 : exp(m - nm);
    acc_t ps = 0;
    for (int j = 0; j < ATTN_TILE; j++) {
      p[j] = p[j] == -INFINITY ? (acc_t)0 : exp(p[j] - nm);
      ps += p[j];
    }
    l = l * alpha + ps;
    for (int c = 0; c < NV; c++) {
      acc16_t acc = o[c] * alpha;
      for (int j = 0; j < ATTN_TILE; j++) acc = fma((acc16_t)p[j], vs[j][c], acc);
      o[c] = acc;
    }
    m = nm;
  }
  if (!row) return;
  __global X_T *orow = out + ((b * T + t) * H + h) * ATTN_DV;
  for (int c = 0; c < NV; c++)
    OPS_STORE(X_DT, orow + 16 * c, l > 0 ? o[c] / l : (acc16_t)0, ATTN_DV - 16 * c);
  if (write_lse) lse[(b * H + h) * T + t] = l > 0 ? m + log(l) : (acc_t)-INFINITY;
}

/* One work-group per (b, h, tile of query rows), a work-item per row: delta, then dq. */
__kernel __attribute__((reqd_work_group_size(ATTN_TILE, 1, 1))) void attn_bwd_dq(
    __global const X_T *q, __global const X_T *k, __global const X_T *v,
    __global const TKB_T(B_DT) *bias, __global const uchar *mask, __global const acc_t *lse,
    __global const X_T *dout, __global acc_t *delta, __global X_T *dq, long B, long T, long S,
    long H, long Hk, long G, acc_t scale, long4 bst, long4 mst, int write_dq) {
  __local acc16_t ks[ATTN_TILE][NQ], vs[ATTN_TILE][NV];
  const long tiles = (T + ATTN_TILE - 1) / ATTN_TILE, wg = get_group_id(0);
  const long t0 = wg % tiles * ATTN_TILE, h = wg / tiles % H, b = wg / tiles / H, hk = h / G;
  const long t = t0 + get_local_id(0);
  const bool row = t < T;
  const long tr = row ? t : 0;
  acc16_t qv[NQ], dov[NV], acc[NQ];
  ATTN_LOAD_ROW(qv, NQ, q + ((b * T + tr) * H + h) * ATTN_D, ATTN_D);
  ATTN_LOAD_ROW(dov, NV, dout + ((b * T + tr) * H + h) * ATTN_DV, ATTN_DV);
  for (int c = 0; c < NQ; c++) acc[c] = 0;
  const acc_t ls = lse[(b * H + h) * T + tr];
  acc_t dl = 0;
  const long t_last = min(T - 1, t0 + ATTN_TILE - 1);
  const long s_end = CAUSAL ? min(S, t_last + 1) : S;
  for (int pass = 0; pass < (write_dq ? 2 : 1); pass++)
    for (long s0 = 0; s0 < s_end; s0 += ATTN_TILE) {
      barrier(CLK_LOCAL_MEM_FENCE);
      ATTN_STAGE(ks, NQ, k, ATTN_D, s0);
      ATTN_STAGE(vs, NV, v, ATTN_DV, s0);
      barrier(CLK_LOCAL_MEM_FENCE);
      if (!row) continue;
      for (int j = 0; j < ATTN_TILE; j++) {
        const long s = s0 + j;
        if (s >= S || !attn_keep(mask, mst, b, h, t, s)) continue;
        const acc_t p =
            attn_prob(attn_logit(attn_dot(qv, ks[j], NQ), scale, bias, bst, b, h, t, s), ls);
        if (p == 0) continue;
        const acc_t dp = attn_dot(dov, vs[j], NV);
        if (pass == 0) {
          dl += p * dp;
        } else {
          const acc16_t ds = (acc16_t)(p * (dp - dl));
          for (int c = 0; c < NQ; c++) acc[c] = fma(ds, ks[j][c], acc[c]);
        }
      }
    }
  if (!row) return;
  delta[(b * H + h) * T + t] = dl;
  if (!write_dq) return;
  __global X_T *drow = dq + ((b * T + t) * H + h) * ATTN_D;
  for (int c = 0; c < NQ; c++) OPS_STORE(X_DT, drow + 16 * c, scale * acc[c], ATTN_D - 16 * c);
}

/* One work-group per (b, kv head hk, tile of keys), a work-item per key: dk and dv over
 * the G query heads and the query tiles that can keep the key. */
__kernel __attribute__((reqd_work_group_size(ATTN_TILE, 1, 1))) void attn_bwd_dkv(
    __global const X_T *q, __global const X_T *k, __global const X_T *v,
    __global const TKB_T(B_DT) *bias, __global const uchar *mask, __global const acc_t *lse,
    __global const X_T *dout, __global const acc_t *delta, __global X_T *dk, __global X_T *dv,
    long B, long T, long S, long H, long Hk, long G, acc_t scale, long4 bst, long4 mst,
    int write_dk, int write_dv) {
  __local acc16_t qs[ATTN_TILE][NQ], dos[ATTN_TILE][NV];
  __local acc_t lses[ATTN_TILE], deltas[ATTN_TILE];
  const long tiles = (S + ATTN_TILE - 1) / ATTN_TILE, wg = get_group_id(0);
  const long s0 = wg % tiles * ATTN_TILE, hk = wg / tiles % Hk, b = wg / tiles / Hk;
  const long s = s0 + get_local_id(0);
  const bool key = s < S;
  const long sr = key ? s : 0;
  acc16_t kv[NQ], vv[NV], dka[NQ], dva[NV];
  ATTN_LOAD_ROW(kv, NQ, k + ((b * S + sr) * Hk + hk) * ATTN_D, ATTN_D);
  ATTN_LOAD_ROW(vv, NV, v + ((b * S + sr) * Hk + hk) * ATTN_DV, ATTN_DV);
  for (int c = 0; c < NQ; c++) dka[c] = 0;
  for (int c = 0; c < NV; c++) dva[c] = 0;
  /* causal: only query rows t >= s0 keep a key of this tile */
  const long t_begin = CAUSAL ? s0 : 0;
  for (long g = 0; g < G; g++) {
    const long h = hk * G + g;
    for (long t0 = t_begin; t0 < T; t0 += ATTN_TILE) {
      barrier(CLK_LOCAL_MEM_FENCE);
      ATTN_STAGE_Q(qs, NQ, q, ATTN_D, t0);
      ATTN_STAGE_Q(dos, NV, dout, ATTN_DV, t0);
      {
        const int i = get_local_id(0);
        const long t = t0 + i;
        lses[i] = t < T ? lse[(b * H + h) * T + t] : (acc_t)-INFINITY;
        deltas[i] = t < T ? delta[(b * H + h) * T + t] : (acc_t)0;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      if (!key) continue;
      for (int i = 0; i < ATTN_TILE; i++) {
        const long t = t0 + i;
        if (t >= T || !attn_keep(mask, mst, b, h, t, s)) continue;
        const acc_t p =
            attn_prob(attn_logit(attn_dot(kv, qs[i], NQ), scale, bias, bst, b, h, t, s), lses[i]);
        if (p == 0) continue;
        const acc_t ds = p * (attn_dot(vv, dos[i], NV) - deltas[i]);
        for (int c = 0; c < NV; c++) dva[c] = fma((acc16_t)p, dos[i][c], dva[c]);
        for (int c = 0; c < NQ; c++) dka[c] = fma((acc16_t)ds, qs[i][c], dka[c]);
      }
    }
  }
  if (!key) return;
  const long at = (b * S + s) * Hk + hk;
  if (write_dk)
    for (int c = 0; c < NQ; c++) OPS_STORE(X_DT, dk + at * ATTN_D + 16 * c, scale * dka[c], ATTN_D - 16 * c);
  if (write_dv)
    for (int c = 0; c < NV; c++) OPS_STORE(X_DT, dv + at * ATTN_DV + 16 * c, dva[c], ATTN_DV - 16 * c);
}

/* dot of two rows in global memory */
static inline acc_t attn_dot_gg(__global const X_T *x, __global const X_T *y, int n) {
  acc16_t s = 0;
  for (int c = 0; 16 * c < n; c++) s = fma(OPS_RUN(X_DT, x + 16 * c, n - 16 * c), OPS_RUN(X_DT, y + 16 * c, n - 16 * c), s);
  return ops_hsum16(s);
}

/* One work-item per element e of bias (its shape padded to rank 4: dims): dbias[e] = the
 * sum, in order, of p (dp - delta) over the (b, h, t, s) it is broadcast to. */
__kernel void attn_bwd_dbias(__global const X_T *q, __global const X_T *k, __global const X_T *v,
                             __global const TKB_T(B_DT) *bias, __global const uchar *mask,
                             __global const acc_t *lse, __global const X_T *dout,
                             __global const acc_t *delta, __global TKB_T(B_DT) *dbias, long B,
                             long T, long S, long H, long Hk, long G, acc_t scale, long4 bst,
                             long4 mst, long4 dims) {
  const long e = get_global_id(0);
  const long db[4] = {dims.x, dims.y, dims.z, dims.w}, full[4] = {B, H, T, S};
  if (e >= db[0] * db[1] * db[2] * db[3]) return;
  long ec[4], rest = e, members = 1;
  for (int i = 3; i >= 0; i--) {
    ec[i] = rest % db[i];
    rest /= db[i];
    if (db[i] == 1) members *= full[i];
  }
  acc_t sum = 0;
  for (long m = 0; m < members; m++) {
    long c[4], mr = m;
    for (int i = 3; i >= 0; i--) {
      if (db[i] == 1) {
        c[i] = mr % full[i];
        mr /= full[i];
      } else {
        c[i] = ec[i];
      }
    }
    const long b = c[0], h = c[1], t = c[2], s = c[3], hk = h / G;
    if (!attn_keep(mask, mst, b, h, t, s)) continue;
    const long row = (b * H + h) * T + t;
    __global const X_T *qr = q + ((b * T + t) * H + h) * ATTN_D;
    const acc_t p = attn_prob(attn_logit(attn_dot_gg(qr, k + ((b * S + s) * Hk + hk) * ATTN_D, ATTN_D),
                                         scale, bias, bst, b, h, t, s), lse[row]);
    if (p == 0) continue;
    __global const X_T *dr = dout + ((b * T + t) * H + h) * ATTN_DV;
    sum += p * (attn_dot_gg(dr, v + ((b * S + s) * Hk + hk) * ATTN_DV, ATTN_DV) - delta[row]);
  }
  dbias[e] = TKB_ST(B_DT, sum);
}
