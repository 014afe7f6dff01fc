/*
 * ragged_dot.h - internal to ops/ragged_dot: the signature and the call's plan, shared
 * by op.c (infer, counts), reference.c, cpu.c and specs.c. Not installed.
 *
 *   ragged_dot(lhs[M, K], rhs[G, K, N], group_sizes[G] int32) -> out[M, N]
 *
 * The rows of lhs are split into G consecutive groups, group g holding group_sizes[g]
 * rows starting at offset o_g = sum_{h<g} group_sizes[h] (sizes >= 0, summing to M;
 * empty groups are allowed). With lhs_g = lhs[o_g : o_g + s_g]:
 *   out_g[r, n]   = sum_k lhs_g[r, k] rhs[g, k, n]        (lhs_g @ rhs[g])
 * Backward, given dout (rows grouped the same way):
 *   dlhs_g[r, k]  = sum_n dout_g[r, n] rhs[g, k, n]       (dout_g @ rhs[g]^T)
 *   drhs[g, k, n] = sum_r lhs_g[r, k] dout_g[r, n]        (lhs_g^T @ dout_g; 0 when empty)
 * group_sizes is an integer array: it gets no gradient slot. Sums run in float32
 * (float64 for float64 operands); out, dlhs and drhs have the operands' dtype. There are
 * no residuals: the vjp reads lhs and rhs themselves (Tokamax keeps none either when
 * there is no activation).
 */
#ifndef TKB_OP_RAGGED_DOT_H
#define TKB_OP_RAGGED_DOT_H

#include "tkbench.h"
#include "../common/ops_common.h"

#include <stdbool.h>
#include <stdint.h>

/* What one call computes, from the specs alone. */
typedef struct rd_plan {
  tkb_spec lhs;   /* [M, K] */
  tkb_spec rhs;   /* [G, K, N], lhs's dtype */
  tkb_spec gs;    /* [G] int32 */
  tkb_spec out;   /* [M, N], lhs's dtype */
  int64_t m, k, n, g;
  bool f64;       /* math in float64 */
} rd_plan;

#define RD_N_PARAMS 3
extern const tkb_param tkb__rd_params[RD_N_PARAMS];

/* The device implementations (the reference and cpu ones are tkbench.h's): each
 * validates on the host and launches its kernels through the device's backend. */
extern const tkb_fn tkb__op_ragged_dot_cuda; /* cuda.c */
extern const tkb_fn tkb__op_ragged_dot_opencl; /* opencl.c */

/*
 * Validates the call (ranks, dtypes, K and G agreement) and fills the plan. When
 * group_sizes is concrete, also checks its values (tkb__rd_check_group_sizes).
 */
tkb_status tkb__rd_plan_make(const tkb_args *a, rd_plan *p);
/* Every size >= 0 and the sum == M; the message names lhs's and group_sizes' shapes. */
tkb_status tkb__rd_check_group_sizes(const rd_plan *p, const int32_t *sizes);
/* The infer hook of both implementations. */
tkb_status tkb__rd_infer(const tkb_args *a, tkb_shapes *shapes);
/* Counts per call: 2 M K N flops per product, bytes of the arrays read and written (only
 * the rhs groups that have rows), items = M rows. */
tkb_status tkb__rd_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out);
/* Plans the call and fetches the three arrays, which must be concrete (and the group
 * sizes valid). */
tkb_status tkb__rd_bind(const tkb_args *a, rd_plan *p, const tkb_array **lhs,
                        const tkb_array **rhs, const int32_t **sizes);
/* Checks that an output/cotangent/grad buffer has the spec the plan wants. */
tkb_status tkb__rd_check_buffer(const tkb_array *arr, const tkb_spec *want, const char *what);

/*
 * group_sizes initializers for suite entries (tkb_init callbacks on an int32[G] array):
 *  - tkb__rd_init_random_groups: a seeded random composition of M into G non-negative
 *    parts, as Tokamax's generate_group_sizes (each of the M rows picks one of the G
 *    groups uniformly; the sizes are the counts). Row i uses word i % 4 of the Philox
 *    draw (counter i / 4, stream) under the seed. M comes from the call's lhs (or, with
 *    no call, from *(const int64_t *)ctx->user).
 *  - tkb__rd_init_fixed_groups: copies the G sizes at ctx->user (const int32_t *).
 */
tkb_status tkb__rd_init_random_groups(tkb_array *a, const tkb_init_ctx *ctx);
tkb_status tkb__rd_init_fixed_groups(tkb_array *a, const tkb_init_ctx *ctx);

#endif /* TKB_OP_RAGGED_DOT_H */
