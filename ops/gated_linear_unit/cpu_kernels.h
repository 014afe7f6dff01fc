/*
 * cpu_kernels.h - gated_linear_unit's cpu kernels, written once for a math type and
 * included by cpu.c once per type with:
 *   T          float or double            MATH_DT   TKB_FLOAT32 or TKB_FLOAT64
 *   GEMM_RM    sgemm_rm or dgemm_rm       FN(name)  name##_f32 or name##_f64
 *   GATE       out = act(g) * p           GATE_VJP  dg, dp from g, p, dout
 * x (and W) of another dtype than T are "narrow" (bfloat16, float16 with T = float):
 * they are widened block by block. Each kernel is one OpenMP region: the threads first
 * widen W together (narrow x), then take blocks of mb rows in a static schedule.
 */

/* Forward: out (and the residual y when y_out is given) for every row block. */
static void FN(forward)(const glu_plan *p, glu_cpu_ws *ws, int nt, const tkb_array *x,
                        const tkb_array *w, tkb_array *out, tkb_array *y_out) {
  const int64_t R = p->rows, K = p->k, N = p->n, N2 = 2 * N;
  const tkb_dtype dt = p->x.dtype;
  const size_t es = tkb_dtype_size(dt);
  const bool narrow = dt != MATH_DT;
  const T *W = narrow ? (const T *)ws->w : (const T *)w->data;
#pragma omp parallel num_threads(nt)
  {
    glu_thread_ws *t = &ws->thr[omp_get_thread_num()];
    if (narrow) {
#pragma omp for schedule(static)
      for (int64_t k = 0; k < K; k++)
        tkb_convert(AT(w, k * N2, es), dt, (T *)ws->w + k * N2, MATH_DT, (size_t)N2);
    }
#pragma omp for schedule(static)
    for (int64_t b = 0; b < ws->nblocks; b++) {
      const int64_t r0 = b * ws->mb, m = R - r0 < ws->mb ? R - r0 : ws->mb;
      const T *A = AT(x, r0 * K, es);
      if (narrow) {
        tkb_convert(A, dt, t->x, MATH_DT, (size_t)(m * K));
        A = t->x;
      }
      /* y[r][c] = sum_k x[r][k] W[k][c]: straight into the residual when it is T */
      T *Y = (!narrow && y_out) ? (T *)AT(y_out, r0 * N2, es) : (T *)t->y;
      GEMM_RM(false, false, m, N2, K, A, K, W, N2, 0, Y, N2);
      /* y rounded to x's dtype (the residual); the gating reads the rounded values */
      if (narrow) {
        void *yq = y_out ? AT(y_out, r0 * N2, es) : t->yq;
        tkb_convert(Y, MATH_DT, yq, dt, (size_t)(m * N2));
        tkb_convert(yq, dt, Y, MATH_DT, (size_t)(m * N2));
      }
      /* out[r][n] = act(g) * p,  g = y[r][0][n], p = y[r][1][n] */
      T *O = narrow ? (T *)t->o : (T *)AT(out, r0 * N, es);
      for (int64_t r = 0; r < m; r++) GATE(p->act, Y + r * N2, Y + r * N2 + N, O + r * N, N);
      if (narrow) tkb_convert(O, MATH_DT, AT(out, r0 * N, es), dt, (size_t)(m * N));
    }
  }
}

/* Backward: dx row block by row block; dW summed by each thread over its blocks, then
 * the threads' sums added in thread order. */
static void FN(vjp)(const glu_plan *p, glu_cpu_ws *ws, int nt, const tkb_array *x,
                    const tkb_array *w, const tkb_array *y, const tkb_array *dout,
                    tkb_array *dx, tkb_array *dw) {
  const int64_t R = p->rows, K = p->k, N = p->n, N2 = 2 * N;
  const tkb_dtype dt = p->x.dtype;
  const size_t es = tkb_dtype_size(dt);
  const bool narrow = dt != MATH_DT;
  const T *W = narrow ? (const T *)ws->w : (const T *)w->data;
#pragma omp parallel num_threads(nt)
  {
    glu_thread_ws *t = &ws->thr[omp_get_thread_num()];
    t->dw_used = false;
    if (narrow) {
#pragma omp for schedule(static)
      for (int64_t k = 0; k < K; k++)
        tkb_convert(AT(w, k * N2, es), dt, (T *)ws->w + k * N2, MATH_DT, (size_t)N2);
    }
#pragma omp for schedule(static)
    for (int64_t b = 0; b < ws->nblocks; b++) {
      const int64_t r0 = b * ws->mb, m = R - r0 < ws->mb ? R - r0 : ws->mb;
      const T *A = AT(x, r0 * K, es), *Y = AT(y, r0 * N2, es), *D = AT(dout, r0 * N, es);
      if (narrow) {
        tkb_convert(A, dt, t->x, MATH_DT, (size_t)(m * K));
        tkb_convert(Y, dt, t->y, MATH_DT, (size_t)(m * N2));
        tkb_convert(D, dt, t->o, MATH_DT, (size_t)(m * N));
        A = t->x;
        Y = t->y;
        D = t->o;
      }
      /* dy[r][0][n] = dout p act'(g),  dy[r][1][n] = dout act(g) */
      T *DY = t->dy;
      for (int64_t r = 0; r < m; r++)
        GATE_VJP(p->act, Y + r * N2, Y + r * N2 + N, D + r * N, DY + r * N2, DY + r * N2 + N, N);
      /* dx[r][k] = sum_c dy[r][c] W[k][c] */
      if (dx) {
        T *C = narrow ? (T *)t->dx : (T *)AT(dx, r0 * K, es);
        GEMM_RM(false, true, m, K, N2, DY, N2, W, N2, 0, C, K);
        if (narrow) tkb_convert(C, MATH_DT, AT(dx, r0 * K, es), dt, (size_t)(m * K));
      }
      /* this thread's dW[k][c] += sum_r x[r][k] dy[r][c] */
      if (dw) GEMM_RM(true, false, K, N2, m, A, K, DY, N2, t->dw_used ? 1 : 0, t->dw, N2);
      t->dw_used = true;
    }
    /* dW[k][c] = sum over threads of their sums (implicit barrier above) */
    if (dw) {
#pragma omp for schedule(static)
      for (int64_t k = 0; k < K; k++) {
        T *row = (T *)ws->thr[0].dw + k * N2; /* thread 0's sum, completed in place */
        if (!ws->thr[0].dw_used)
          for (int64_t c = 0; c < N2; c++) row[c] = 0;
        for (int i = 1; i < nt; i++) {
          if (!ws->thr[i].dw_used) continue;
          const T *part = (const T *)ws->thr[i].dw + k * N2;
          for (int64_t c = 0; c < N2; c++) row[c] += part[c];
        }
        tkb_convert(row, MATH_DT, AT(dw, k * N2, es), dt, (size_t)N2);
      }
    }
  }
}
