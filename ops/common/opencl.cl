/*
 * opencl.cl (ops/common) - what the ops' OpenCL kernels share, compiled after the
 * backend's prelude and before an op's own opencl.cl (ops_cl_kernel_build), with
 * -DOPS_F64=0|1 choosing the math type:
 *
 *  - acc_t and accN_t (N = 2, 4, 8, 16): float and floatN, or double and doubleN
 *    (OPS_F64); OPS_ACC_DT names acc_t as a dtype (float32, float64) for the typed
 *    macros.
 *  - ops_run_<dtype>(p, n): 16 consecutive elements at p widened to acc16_t, those at
 *    and past n (n <= 0: all) as 0; one vector load when all 16 are there.
 *  - ops_hsum16, ops_hmax16: a vector's sum and maximum.
 *  - ops_store16_<dtype>(p, v, n): the first n lanes of v rounded as TKB_ST rounds and
 *    stored at p (OPS_STORE).
 *  - OPS_MM_TILE: one tile of a matrix product staged through local memory.
 *
 *   OPS_MM_TILE(i0, i_end, j0, j_end, l_begin, l_end,
 *               A_DT, a, lda, A_L_FAST, B_DT, b, ldb, B_L_FAST, STORE_C)
 *
 * computes, for the tile of C whose rows start at i0 and columns at j0,
 *   C(i, j) = sum over l in [l_begin, l_end), in order, of A(i, l) B(l, j)
 * and calls STORE_C(i, j, v, n) for each row i < i_end of the tile and each run of 16
 * columns from j < j_end: v (acc16_t) holds C(i, j .. j + 15), of which the first n are
 * in C (n may exceed 16; OPS_STORE takes it so). With
 *   A(i, l) = a[i lda + l] (A_L_FAST) or a[l lda + i],  a of dtype A_DT
 *   B(l, j) = b[j ldb + l] (B_L_FAST) or b[l ldb + j],  b of dtype B_DT
 * (a and b point at element (0, 0): an op offsets them to a group or a chunk). Sums run in
 * acc_t in one fixed order, so results do not depend on the device or the launch.
 *
 * Layout, for a CPU OpenCL (PoCL) first: PoCL runs a work-group's work-items as a loop
 * and does not vectorize across them when a work-item has an inner loop, so the work is
 * in explicit 16-wide vectors. A work-group is OPS_MM_WX x OPS_MM_WY work-items
 * (dimension 0 along j), each owning OPS_MM_R rows x 16 columns of C (R vector
 * accumulators: rows i0 + R ly + r, columns j0 + 16 lx + c), so a tile is
 * OPS_MM_TM x OPS_MM_TN = (R WY) x 64. Depth goes OPS_MM_TK at a time through the local
 * arrays the kernel declares with OPS_MM_LOCALS (OpenCL wants local variables at kernel
 * scope), loaded as 16-element runs along each operand's contiguous index. Every
 * argument but STORE_C's indices must be the same for the whole work-group (the loop
 * holds barriers).
 */
#if OPS_F64
typedef double acc_t;
typedef double2 acc2_t;
typedef double4 acc4_t;
typedef double8 acc8_t;
typedef double16 acc16_t;
#define OPS_ACC_DT float64
#define OPS_CVT16(v) convert_double16(v)
#else
typedef float acc_t;
typedef float2 acc2_t;
typedef float4 acc4_t;
typedef float8 acc8_t;
typedef float16 acc16_t;
#define OPS_ACC_DT float32
#define OPS_CVT16(v) convert_float16(v)
#endif

#define OPS_DEFINE_RUN(dt, VLOAD)                                                        \
  static inline acc16_t ops_run_##dt(__global const TKB_T(dt) *p, long n) {              \
    if (n >= 16) return OPS_CVT16(VLOAD);                                                \
    acc_t t[16];                                                                         \
    for (int s = 0; s < 16; s++) t[s] = s < n ? (acc_t)TKB_LD(dt, p[s]) : (acc_t)0;      \
    return vload16(0, t);                                                                \
  }
OPS_DEFINE_RUN(float32, vload16(0, p))
OPS_DEFINE_RUN(bfloat16, as_float16(convert_uint16(vload16(0, p)) << 16))
OPS_DEFINE_RUN(float16, vload_half16(0, (__global const half *)p))
#ifdef TKB_HAS_FP64
OPS_DEFINE_RUN(float64, vload16(0, p))
#endif
#define OPS_RUN(dt, p, n) TKB_CAT(ops_run_, dt)(p, n)

/* The sum and the largest of 16 lanes, in a fixed order. */
static inline acc_t ops_hsum16(acc16_t v) {
  const acc8_t a = v.lo + v.hi;
  const acc4_t b = a.lo + a.hi;
  const acc2_t c = b.lo + b.hi;
  return c.lo + c.hi;
}
static inline acc_t ops_hmax16(acc16_t v) {
  const acc8_t a = fmax(v.lo, v.hi);
  const acc4_t b = fmax(a.lo, a.hi);
  const acc2_t c = fmax(b.lo, b.hi);
  return fmax(c.lo, c.hi);
}

/* The narrowings of src/core/dtype_convert.h (tkb_cvt_f32_to_bf16, _f16), on 16 lanes:
 * the same formulas, so bit for bit what TKB_ST stores. */
static inline ushort16 ops_cvt16_bf16(float16 f) {
  const uint16 u = as_uint16(f);
  const uint16 nan = ((u >> 16) & 0x8000u) | 0x7fc0u;
  const uint16 r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return convert_ushort16(select(r, nan, (u & 0x7fffffffu) > 0x7f800000u));
}
static inline ushort16 ops_cvt16_f16(float16 f) {
  const uint16 u = as_uint16(f), a = u & 0x7fffffffu, sign = (u >> 16) & 0x8000u;
  const uint16 norm = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  const uint16 sub = as_uint16(as_float16(a) + 0.5f) - as_uint(0.5f);
  const uint16 payload = (a >> 13) & 0x3ffu;
  const uint16 nan = 0x7c00u | payload | select((uint16)0u, (uint16)1u, payload == 0u);
  uint16 r = select(norm, sub, a < (113u << 23));
  r = select(r, (uint16)0x7c00u, a >= 0x47800000u);
  r = select(r, nan, a > 0x7f800000u);
  return convert_ushort16(r | sign);
}

/* ops_store16_<dtype>(p, v, n): the first n (at most 16) lanes of v rounded to the dtype
 * (through float32, as TKB_ST) and stored at p; one vector store when n >= 16. */
#define OPS_DEFINE_STORE(dt, VEC, VSTORE)                                                \
  static inline void ops_store16_##dt(__global TKB_T(dt) *p, acc16_t v, long n) {        \
    const VEC w = VSTORE;                                                                \
    if (n >= 16) {                                                                       \
      vstore16(w, 0, p);                                                                 \
      return;                                                                            \
    }                                                                                    \
    TKB_T(dt) t[16];                                                                     \
    vstore16(w, 0, t);                                                                   \
    for (int s = 0; s < n; s++) p[s] = t[s];                                             \
  }
OPS_DEFINE_STORE(float32, float16, convert_float16(v))
OPS_DEFINE_STORE(bfloat16, ushort16, ops_cvt16_bf16(convert_float16(v)))
OPS_DEFINE_STORE(float16, ushort16, ops_cvt16_f16(convert_float16(v)))
#ifdef TKB_HAS_FP64
OPS_DEFINE_STORE(float64, double16, convert_double16(v))
#endif
#define OPS_STORE(dt, p, v, n) TKB_CAT(ops_store16_, dt)(p, v, n)

#define OPS_MM_WX 4
#define OPS_MM_WY 8
#define OPS_MM_R 8
#define OPS_MM_NW (OPS_MM_WX * OPS_MM_WY)
#define OPS_MM_TM (OPS_MM_WY * OPS_MM_R)
#define OPS_MM_TN (OPS_MM_WX * 16)
#define OPS_MM_TK 32
#define OPS_MM_IRUNS (OPS_MM_TM / 16) /* runs of 16 along i in a tile's rows */

#define OPS_MM_LOCALS __local acc_t ops_mm_a[OPS_MM_TM][OPS_MM_TK], ops_mm_b[OPS_MM_TK][OPS_MM_TN]

#define OPS_MM_TILE(i0, i_end, j0, j_end, l_begin, l_end, A_DT, a, lda, A_L_FAST, B_DT, b, ldb,   \
                    B_L_FAST, STORE_C)                                                           \
  do {                                                                                           \
    const int mm_lx = get_local_id(0), mm_ly = get_local_id(1);                                  \
    const int mm_lid = mm_ly * OPS_MM_WX + mm_lx;                                                \
    const long mm_i0 = (i0), mm_i1 = (i_end), mm_j0 = (j0), mm_j1 = (j_end);                     \
    const long mm_le = (l_end), mm_lda = (lda), mm_ldb = (ldb);                                  \
    __global const TKB_T(A_DT) *mm_pa = (a);                                                     \
    __global const TKB_T(B_DT) *mm_pb = (b);                                                     \
    acc16_t mm_acc[OPS_MM_R];                                                                    \
    for (int mm_r = 0; mm_r < OPS_MM_R; mm_r++) mm_acc[mm_r] = (acc16_t)0;                       \
    for (long mm_l0 = (l_begin); mm_l0 < mm_le; mm_l0 += OPS_MM_TK) {                            \
      for (int mm_e = mm_lid; mm_e < OPS_MM_TM * OPS_MM_TK / 16; mm_e += OPS_MM_NW) {            \
        if (A_L_FAST) { /* a run of l in row i */                                                \
          const int mm_ti = mm_e / (OPS_MM_TK / 16), mm_tl = mm_e % (OPS_MM_TK / 16) * 16;       \
          const long mm_gi = mm_i0 + mm_ti, mm_gl = mm_l0 + mm_tl;                               \
          vstore16(OPS_RUN(A_DT, mm_pa + mm_gi * mm_lda + mm_gl, mm_gi < mm_i1 ? mm_le - mm_gl : 0), \
                   0, &ops_mm_a[mm_ti][mm_tl]);                                                  \
        } else { /* a run of i at depth l */                                                     \
          const int mm_ti = mm_e % OPS_MM_IRUNS * 16, mm_tl = mm_e / OPS_MM_IRUNS;               \
          const long mm_gi = mm_i0 + mm_ti, mm_gl = mm_l0 + mm_tl;                               \
          acc_t mm_t[16];                                                                        \
          vstore16(OPS_RUN(A_DT, mm_pa + mm_gl * mm_lda + mm_gi, mm_gl < mm_le ? mm_i1 - mm_gi : 0), \
                   0, mm_t);                                                                     \
          for (int mm_s = 0; mm_s < 16; mm_s++) ops_mm_a[mm_ti + mm_s][mm_tl] = mm_t[mm_s];      \
        }                                                                                        \
      }                                                                                          \
      for (int mm_e = mm_lid; mm_e < OPS_MM_TK * OPS_MM_TN / 16; mm_e += OPS_MM_NW) {            \
        if (B_L_FAST) { /* a run of l in column j */                                             \
          const int mm_tj = mm_e / (OPS_MM_TK / 16), mm_tl = mm_e % (OPS_MM_TK / 16) * 16;       \
          const long mm_gj = mm_j0 + mm_tj, mm_gl = mm_l0 + mm_tl;                               \
          acc_t mm_t[16];                                                                        \
          vstore16(OPS_RUN(B_DT, mm_pb + mm_gj * mm_ldb + mm_gl, mm_gj < mm_j1 ? mm_le - mm_gl : 0), \
                   0, mm_t);                                                                     \
          for (int mm_s = 0; mm_s < 16; mm_s++) ops_mm_b[mm_tl + mm_s][mm_tj] = mm_t[mm_s];      \
        } else { /* a run of j at depth l */                                                     \
          const int mm_tj = mm_e % (OPS_MM_TN / 16) * 16, mm_tl = mm_e / (OPS_MM_TN / 16);       \
          const long mm_gj = mm_j0 + mm_tj, mm_gl = mm_l0 + mm_tl;                               \
          vstore16(OPS_RUN(B_DT, mm_pb + mm_gl * mm_ldb + mm_gj, mm_gl < mm_le ? mm_j1 - mm_gj : 0), \
                   0, &ops_mm_b[mm_tl][mm_tj]);                                                  \
        }                                                                                        \
      }                                                                                          \
      barrier(CLK_LOCAL_MEM_FENCE);                                                              \
      for (int mm_l = 0; mm_l < OPS_MM_TK; mm_l++) {                                             \
        const acc16_t mm_bv = vload16(0, &ops_mm_b[mm_l][16 * mm_lx]);                           \
        for (int mm_r = 0; mm_r < OPS_MM_R; mm_r++)                                              \
          mm_acc[mm_r] = fma((acc16_t)ops_mm_a[OPS_MM_R * mm_ly + mm_r][mm_l], mm_bv, mm_acc[mm_r]); \
      }                                                                                          \
      barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    }                                                                                            \
    for (int mm_r = 0; mm_r < OPS_MM_R; mm_r++) {                                                \
      const long mm_gi = mm_i0 + OPS_MM_R * mm_ly + mm_r, mm_gj = mm_j0 + 16 * mm_lx;            \
      if (mm_gi < mm_i1 && mm_gj < mm_j1) STORE_C(mm_gi, mm_gj, mm_acc[mm_r], mm_j1 - mm_gj);    \
    }                                                                                            \
  } while (0)
