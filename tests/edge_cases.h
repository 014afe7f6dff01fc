/*
 * edge_cases.h - shapes of the five ops that the registered specs do not reach, shared by
 * the tests of the device implementations: test_cuda_ops.c (cuda:0) and
 * test_opencl_ops.c (opencl:0). Each case is registered for the reference and for one
 * device implementation, in every mode, under an "edge_" name with tag "edge", and
 * checked as `tkbench check` does (tkb_check_entry). Include after check.h and the ops'
 * internal headers.
 *
 * What they cover beyond the cpu_ specs: float16 and float64 (every op); normalization's
 * RMS norm, absent params, other axes, rows longer than a block and not a multiple of 32,
 * and the layouts of the CUDA kernels' paths; gated_linear_unit's gelu, relu and none and
 * odd tails; ragged_dot's groups empty at both ends and between, every row in one group,
 * 40 groups, groups of a few rows and of many rows in tiles that end mid-group, no rows
 * and K = 0; the loss with the vocabulary in several chunks and a partial last one (the
 * OpenCL chunks are 4096 columns), mixed x and w dtypes, V = 1; attention with head dims
 * of 256, odd head dims (19, 33), T != S both ways, grouped-query and multi-query heads,
 * query rows past a tile, biases broadcast over b and t, masks, a mask that keeps nothing
 * (out 0, lse -inf, zero grads) and an explicit scale. "heavy" cases take minutes on the
 * CUDA emulator under the sanitizers; TKB_TEST_QUICK leaves them out.
 */
#ifndef TKB_TEST_EDGE_CASES_H
#define TKB_TEST_EDGE_CASES_H

#include "internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

tkb_status tkb__rd_init_fixed_groups(tkb_array *a, const tkb_init_ctx *ctx); /* ops/ragged_dot */

typedef struct edge_case {
  const char *op, *name;
  const tkb_fn *ref;
  tkb_value args[5];
  size_t n_args;
  tkb_kwarg kwargs[3];
  size_t n_kwargs;
  bool heavy;
} edge_case;

static const int32_t edge_groups[6] = {0, 17, 0, 20, 13, 0}; /* M = 50 */
static const int32_t edge_groups40[6] = {0, 17, 0, 10, 13, 0}; /* M = 40 */
static const int32_t edge_groups100[6] = {0, 37, 0, 40, 23, 0}; /* M = 100 */
/* 40 groups, M = 50: rd_segment's warp scan carries from its first batch of 32 groups
 * into the second (groups 30-34 span the seam), with empty groups on both sides */
static const int32_t edge_groups_g40[40] = {0, 2, 0, 1, 3, 0, 0, 1, 0, 2, 0, 0, 1, 0, 0, 2, 0, 1, 0, 0,
                                            3, 0, 0, 1, 0, 0, 2, 0, 0, 1, 4, 3, 2, 5, 3, 0, 7, 0, 6, 0};
/* M = 300 in tiles of 64 rows: groups of 130 (tiles of 64, 64, 2), 1 and 169 rows */
static const int32_t edge_groups300[5] = {0, 130, 1, 0, 169};
static const int32_t edge_groups_all_middle[4] = {0, 0, 70, 0}; /* M = 70, one group */
static const int32_t edge_groups_all_first[5] = {9, 0, 0, 0, 0};  /* M = 9, one group */
static const int32_t edge_groups_none[2] = {0, 0};                /* M = 0 */
static const int32_t edge_groups_last[2] = {0, 3};                /* M = 3 */
static tkb_init edge_groups_init, edge_groups40_init, edge_groups100_init, edge_groups_g40_init,
    edge_groups300_init, edge_groups_all_middle_init, edge_groups_all_first_init,
    edge_groups_none_init, edge_groups_last_init, edge_labels_init,
    edge_labels_v4100_init, edge_labels_v4200_init, edge_labels_v1_init, edge_mask_none,
    edge_huge;

static edge_case edge_cases[64];
static size_t n_edge;

static edge_case *edge_add(const char *op, const char *name, const tkb_fn *ref) {
  if (n_edge == sizeof edge_cases / sizeof edge_cases[0]) {
    fprintf(stderr, "edge_cases.h: more than %zu edge cases: enlarge edge_cases\n", n_edge);
    exit(1);
  }
  edge_case *c = &edge_cases[n_edge++];
  *c = (edge_case){.op = op, .name = name, .ref = ref};
  return c;
}

/* Fills the table (once). */
static void edge_build(void) {
  if (n_edge) return;
  edge_groups_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups);
  edge_groups40_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups40);
  edge_groups100_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups100);
  edge_groups_g40_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups_g40);
  edge_groups300_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups300);
  edge_groups_all_middle_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups_all_middle);
  edge_groups_all_first_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups_all_first);
  edge_groups_none_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups_none);
  edge_groups_last_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups_last);
  edge_labels_init = TKB_INIT_RANGE_(0, 8300);
  edge_labels_v4100_init = TKB_INIT_RANGE_(0, 4100);
  edge_labels_v4200_init = TKB_INIT_RANGE_(0, 4200);
  edge_labels_v1_init = TKB_INIT_RANGE_(0, 1);
  edge_mask_none = TKB_INIT_CONSTANT_(0);
  edge_huge = TKB_INIT_CONSTANT_(1e36);
  const tkb_fn *nr = &tkb_op_normalization_reference;
  edge_case *c = edge_add("normalization", "edge_norm_f16_7x300_rms", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 7, 300));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 300));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 300));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"subtract_mean", TKB_BOOL(false)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f64_5x33x6_axis1", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 5, 33, 6));
  c->args[1] = TKB_NONE;
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 33));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(1)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f32_600x40", nr); /* 3 partial-sum blocks */
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 600, 40));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 40));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 40));
  c->n_args = 3;
  /* sm_90 bulk-copy rows (2-byte dtypes): groups of 32 threads with a partial last tile
   * of 5 rows and a bfloat16 offset (the held params' generic loads); a block per row
   * with RMS norm and no offset; one thread per row (n = 8), 300 rows in tiles of 256 */
  c = edge_add("normalization", "edge_norm_bf16_37x1000_bulk_groups", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 37, 1000));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1000));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 1000));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_bf16_5x4096_bulk_block_rms", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 5, 4096));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4096));
  c->args[2] = TKB_NONE;
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"subtract_mean", TKB_BOOL(false)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f16_300x8_bulk_thread_rows", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 300, 8));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 8));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 8));
  c->n_args = 3;
  /* colreg (other axes, n <= 128): 16 rows per thread with n = 100 (past n in the last
   * ones) and a partial second segment of 8 lanes; float32 RMS with n = 7 and a partial
   * segment of 4 lanes (inner 132: colreg needs a whole segment, 128 float32 lanes) */
  c = edge_add("normalization", "edge_norm_bf16_3x100x264_axis1_colreg", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 3, 100, 264));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 100));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 100));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(1)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f32_2x7x132_axis1_colreg_rms", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 2, 7, 132));
  c->args[1] = TKB_NONE;
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 7));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(1)};
  c->kwargs[1] = (tkb_kwarg){"subtract_mean", TKB_BOOL(false)};
  c->n_kwargs = 2;

  /* dx by rows held in registers (norm_dx_rowreg): groups of 32 threads with 2 vectors
   * each, a bfloat16 scale (element loads) and a partial last block of rows (33 rows, 8
   * per block), RMS; float64 rows of 3 vectors in 4 slots (one thread per row, no scale);
   * float32 rows of 5 vectors, 2 threads with 4 slots each */
  c = edge_add("normalization", "edge_norm_bf16_33x512_dx_groups_rms", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 33, 512));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 512));
  c->args[2] = TKB_NONE;
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"subtract_mean", TKB_BOOL(false)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f64_9x6_dx_thread_rows", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 9, 6));
  c->args[1] = TKB_NONE;
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 6));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_f32_1000x20_dx_pairs", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1000, 20));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 20));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 20));
  c->n_args = 3;

  /* the vjp's fused partial sums of dscale and doffset (cuda_dx.cuh), over blocks of 256
   * lanes: rows of 128 bfloat16 in groups of 8 threads, 600 rows (blocks of 256, 256, 88)
   * with a bfloat16 offset (its grad stored as bfloat16); float64 rows of 512 (32
   * threads holding 8 vectors each); 12000 rows of 64 bfloat16 (47 blocks: norm_params's
   * 32 rows of threads each add two or more, over two groups of 32 columns); other axes:
   * 9216 lanes of 8 bfloat16 per thread (36 blocks, n = 64), a normalized axis of 300 >
   * NORM_DX_COLS_NMAX (dx by the cols kernel, the sums by norm_partial), and float32
   * lanes of 6 per row (not a whole vector: the thread-per-lane kernels) */
  c = edge_add("normalization", "edge_norm_bf16_600x128_vjp_blocks", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 600, 128));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 128));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 128));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_f64_300x512_vjp_c8", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 300, 512));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 512));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 512));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_bf16_12000x64_vjp_47_blocks", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 12000, 64));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_bf16_64x96x96_axis0_vjp_cols", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 64, 96, 96));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(0)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_bf16_2x300x16_axis1_vjp_long", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 2, 300, 16));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 300));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 300));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(1)};
  c->n_kwargs = 1;
  /* rows of 96 bfloat16 held as 2 vectors by each of 8 threads (4 vectors past n), all
   * 1e36: mean rstd = 1e39 overflows float32, and the padding's 0 x (-inf) once made
   * every dx of the row NaN (the reference's xhat is 0) */
  c = edge_add("normalization", "edge_norm_bf16_4x96_huge_rows", nr);
  c->args[0] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_BFLOAT16, 4, 96), &edge_huge);
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 96));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 96));
  c->n_args = 3;
  /* rows longer than 512 (a block per row, blocks of fewer than 32 rows when there are
   * few): float32 rows of 1025 vectors (512 threads holding 4 each, the last partly
   * used) in 1501 blocks of 2 rows (the last of 1), no scale; float64 rows of 8192, RMS,
   * no offset (512 threads x 8 vectors: the kernel that spills); the bfloat16 37x1000
   * and 5x4096 cases above take it too (64 and 256 threads) */
  c = edge_add("normalization", "edge_norm_f32_3001x4100_vjp_block", nr);
  c->heavy = true; /* f64 5x8192 below takes the same kernel */
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 3001, 4100));
  c->args[1] = TKB_NONE;
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4100));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_f64_5x8192_vjp_block_rms", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 5, 8192));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 8192));
  c->args[2] = TKB_NONE;
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"subtract_mean", TKB_BOOL(false)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f32_4x50x6_axis1_vjp_lanes", nr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4, 50, 6));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 50));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 50));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(1)};
  c->n_kwargs = 1;

  const tkb_fn *gr = &tkb_op_gated_linear_unit_reference;
  const char *acts[3] = {"gelu", "relu", "none"};
  const tkb_dtype gdt[3] = {TKB_FLOAT16, TKB_FLOAT64, TKB_FLOAT32};
  const char *gnames[3] = {"edge_glu_f16_gelu", "edge_glu_f64_relu", "edge_glu_f32_none"};
  for (int i = 0; i < 3; i++) {
    c = edge_add("gated_linear_unit", gnames[i], gr);
    c->args[0] = TKB_ABSTRACT(TKB_SPEC(gdt[i], 3, 17, 40));
    c->args[1] = TKB_ABSTRACT(TKB_SPEC(gdt[i], 40, 2, 24));
    c->n_args = 2;
    c->kwargs[0] = (tkb_kwarg){"activation", TKB_STRING(acts[i])};
    c->n_kwargs = 1;
  }

  /* bfloat16 with N = 10, even but not a multiple of a 16-byte vector's 8 values (the
   * element path), and x of 63 values (7 past a whole 16-bit draw of 8: the fill's tail) */
  c = edge_add("gated_linear_unit", "edge_glu_bf16_n10_tails", gr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 1, 7, 9));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 9, 2, 10));
  c->n_args = 2;

  const tkb_fn *rr = &tkb_op_ragged_dot_reference;
  const tkb_dtype rdt[2] = {TKB_FLOAT16, TKB_FLOAT64};
  const char *rnames[2] = {"edge_rd_f16_empty_groups", "edge_rd_f64_empty_groups"};
  for (int i = 0; i < 2; i++) {
    c = edge_add("ragged_dot", rnames[i], rr);
    c->args[0] = TKB_ABSTRACT(TKB_SPEC(rdt[i], 50, 24));
    c->args[1] = TKB_ABSTRACT(TKB_SPEC(rdt[i], 6, 24, 20));
    c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 6), &edge_groups_init);
    c->n_args = 3;
  }
  /* M <= RD_CU_SMALL_M (64) takes the kernels that read the sizes on the device (the two
   * above: element loads for float16's N = 20, groups of 17 and 20 rows in passes of 8);
   * bfloat16 with K = 300 in 4 splits and N = 264 (16-byte loads, a partial second tile);
   * 40 groups (two batches of rd_segment's scan);
   * M = 100 takes the cuBLAS loop, with empty groups at both ends */
  c = edge_add("ragged_dot", "edge_rd_bf16_small_splits", rr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 40, 300));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 6, 300, 264));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 6), &edge_groups40_init);
  c->n_args = 3;
  c = edge_add("ragged_dot", "edge_rd_bf16_small_40_groups", rr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 50, 37));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 40, 37, 24));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 40), &edge_groups_g40_init);
  c->n_args = 3;
  c = edge_add("ragged_dot", "edge_rd_f16_cublas_empty_groups", rr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 100, 24));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 6, 24, 20));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 6), &edge_groups100_init);
  c->n_args = 3;

  const tkb_fn *lr = &tkb_op_linear_softmax_cross_entropy_loss_reference;
  const tkb_dtype lx[2] = {TKB_BFLOAT16, TKB_FLOAT32};
  const char *lnames[2] = {"edge_lsce_bf16_chunks", "edge_lsce_f32_bf16w_chunks"};
  for (int i = 0; i < 2; i++) {
    c = edge_add("linear_softmax_cross_entropy_loss", lnames[i], lr);
    c->heavy = true; /* 34M logits */
    c->args[0] = TKB_ABSTRACT(TKB_SPEC(lx[i], 4096, 8));
    c->args[1] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 4096), &edge_labels_init);
    c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 8, 8300));
    c->n_args = 3;
    c->kwargs[0] = (tkb_kwarg){"reduction", TKB_STRING(i ? "sum" : "mean")};
    c->n_kwargs = 1;
  }

  const tkb_fn *ar = &tkb_op_dot_product_attention_reference;
  const tkb_dtype adt[2] = {TKB_FLOAT32, TKB_FLOAT64};
  const char *anames[2] = {"edge_attn_f32_d256_causal", "edge_attn_f64_d256_causal"};
  for (int i = 0; i < 2; i++) {
    c = edge_add("dot_product_attention", anames[i], ar);
    c->args[0] = TKB_ABSTRACT(TKB_SPEC(adt[i], 1, 40, 2, 256));
    c->args[1] = TKB_ABSTRACT(TKB_SPEC(adt[i], 1, 37, 1, 256));
    c->args[2] = TKB_ABSTRACT(TKB_SPEC(adt[i], 1, 37, 1, 256));
    c->n_args = 3;
    c->kwargs[0] = (tkb_kwarg){"is_causal", TKB_BOOL(true)};
    c->n_kwargs = 1;
  }
  c = edge_add("dot_product_attention", "edge_attn_bf16_gqa_bias_mask", ar);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 2, 24, 4, 48));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 2, 70, 2, 48));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 2, 70, 2, 80));
  c->args[3] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 4, 1, 70)); /* q's dtype, as Tokamax's */
  c->args[4] = TKB_ABSTRACT(TKB_SPEC(TKB_BOOL, 2, 1, 24, 70));
  c->n_args = 5;
  c = edge_add("dot_product_attention", "edge_attn_f16_masked_out", ar);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 1, 9, 2, 32));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 1, 11, 2, 32));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 1, 11, 2, 32));
  c->args[3] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 1, 2, 9, 11));
  c->args[4] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_BOOL, 1, 1, 1, 11), &edge_mask_none);
  c->n_args = 5;

  /* ragged_dot: every row in one group (the middle one; the first, with groups of a few
   * rows on average), tiles of 64 rows ending inside groups of 130 and 169 rows with a
   * group of one row between, no rows at all (drhs zero), K = 0 (out zero) */
  c = edge_add("ragged_dot", "edge_rd_f32_all_rows_middle_group", rr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 70, 33));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4, 33, 70));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 4), &edge_groups_all_middle_init);
  c->n_args = 3;
  c = edge_add("ragged_dot", "edge_rd_bf16_all_rows_first_group", rr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 9, 6));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 5, 6, 7));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 5), &edge_groups_all_first_init);
  c->n_args = 3;
  c = edge_add("ragged_dot", "edge_rd_bf16_tiles_end_in_groups", rr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 300, 70));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 5, 70, 100));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 5), &edge_groups300_init);
  c->n_args = 3;
  c = edge_add("ragged_dot", "edge_rd_f32_no_rows", rr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 0, 4));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 2, 4, 3));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 2), &edge_groups_none_init);
  c->n_args = 3;
  c = edge_add("ragged_dot", "edge_rd_f32_k0", rr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 3, 0));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 2, 0, 5));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 2), &edge_groups_last_init);
  c->n_args = 3;

  /* the loss: three chunks of 4096, 4096 and 108 columns with odd B and Hd; float16 x
   * with float32 w (two chunks, the second of 4 columns); float64 (math in float64,
   * two chunks); V = 1 (loss 0) */
  c = edge_add("linear_softmax_cross_entropy_loss", "edge_lsce_bf16_37x19x8300_chunks", lr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 37, 19));
  c->args[1] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 37), &edge_labels_init);
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 19, 8300));
  c->n_args = 3;
  c = edge_add("linear_softmax_cross_entropy_loss", "edge_lsce_f16x_f32w_5x40x4100_sum", lr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 5, 40));
  c->args[1] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 5), &edge_labels_v4100_init);
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 40, 4100));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"reduction", TKB_STRING("sum")};
  c->n_kwargs = 1;
  c = edge_add("linear_softmax_cross_entropy_loss", "edge_lsce_f64_3x7x4200", lr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 3, 7));
  c->args[1] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 3), &edge_labels_v4200_init);
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 7, 4200));
  c->n_args = 3;
  c = edge_add("linear_softmax_cross_entropy_loss", "edge_lsce_f32_v1", lr);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4, 5));
  c->args[1] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 4), &edge_labels_v1_init);
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 5, 1));
  c->n_args = 3;

  /* attention: grouped-query (3 query heads a kv head), causal, odd head dims and 70
   * query rows (tiles of 32 and a tail of 6), a bias [H, 1, S] broadcast over b and t
   * and a mask [B, 1, T, S]; multi-query with T > S (causal rows past S keep every key)
   * and an explicit scale; D = Dv = 256 in bfloat16, grouped-query, not causal */
  c = edge_add("dot_product_attention", "edge_attn_f32_gqa_causal_odd_dims", ar);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 2, 70, 6, 19));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 2, 45, 2, 19));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 2, 45, 2, 33));
  c->args[3] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 6, 1, 45));
  c->args[4] = TKB_ABSTRACT(TKB_SPEC(TKB_BOOL, 2, 1, 70, 45));
  c->n_args = 5;
  c->kwargs[0] = (tkb_kwarg){"is_causal", TKB_BOOL(true)};
  c->n_kwargs = 1;
  c = edge_add("dot_product_attention", "edge_attn_bf16_mqa_t_gt_s_scale", ar);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 1, 50, 3, 64));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 1, 20, 1, 64));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 1, 20, 1, 64));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"is_causal", TKB_BOOL(true)};
  c->kwargs[1] = (tkb_kwarg){"scale", TKB_FLOAT(0.3)};
  c->n_kwargs = 2;
  c = edge_add("dot_product_attention", "edge_attn_bf16_d256_gqa", ar);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 1, 33, 4, 256));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 1, 65, 2, 256));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 1, 65, 2, 256));
  c->n_args = 3;
}

/* The device implementation of an op (NULL: none there). */
typedef const tkb_fn *(*edge_device_fn)(const char *op);

/* Registers every case for the reference (device kind cpu) and for `impl` (its fn from
 * device_fn, device kind `kind`), in every mode; again is fine. */
static void edge_register(const char *impl, const char *kind, edge_device_fn device_fn) {
  edge_build();
  static const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_VJP,
                                   TKB_MODE_FORWARD_AND_VJP};
  for (size_t i = 0; i < n_edge; i++)
    for (size_t m = 0; m < 4; m++)
      for (int dev = 0; dev < 2; dev++) {
        const tkb_fn *fn = dev ? device_fn(edge_cases[i].op) : edge_cases[i].ref;
        CHECK_MSG(fn != NULL, "%s: no %s implementation", edge_cases[i].op, impl);
        if (!fn) continue;
        tkb_benchmark_def d = {.op = edge_cases[i].op,
                               .name = edge_cases[i].name,
                               .impl_name = dev ? impl : "reference",
                               .fn = fn,
                               .args = edge_cases[i].args,
                               .n_args = edge_cases[i].n_args,
                               .kwargs = edge_cases[i].n_kwargs ? edge_cases[i].kwargs : NULL,
                               .n_kwargs = edge_cases[i].n_kwargs,
                               .mode = modes[m],
                               .tags = "edge",
                               .device_kind = dev ? kind : "cpu"};
        tkb_status st = tkb_register_benchmark(&d);
        CHECK_MSG(st == TKB_OK || st == TKB_ERR_DUPLICATE_ARGUMENT, "registering %s: %s",
                  edge_cases[i].name, tkb_last_error());
      }
}

/* The edge case registered under name. */
static const edge_case *edge_find(const char *name) {
  for (size_t i = 0; i < n_edge; i++)
    if (strcmp(edge_cases[i].name, name) == 0) return &edge_cases[i];
  return NULL;
}

/* Checks every registered edge entry of `impl` on `device` against its reference, as
 * `tkbench check` does; a failing output is printed with its diff summary. The heavy
 * cases run only with `heavy` and without TKB_TEST_QUICK (the sanitizer build). */
static void edge_check_all(const char *impl, const char *device, bool heavy) {
  const bool quick = !heavy || getenv("TKB_TEST_QUICK") != NULL;
  int passed = 0, total = 0, skipped = 0, others = 0;
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (strncmp(d->name, "edge_", 5) != 0 || strcmp(d->impl_name, impl) != 0) continue;
    /* another part's (TKB_TEST_PART)? A case's four modes are consecutive, and the vjp
     * modes cost the most: entry i of case c goes by i + c, so that each part gets each
     * mode of a quarter of the cases rather than one mode of all of them */
    const size_t at = (size_t)total++;
    if (!check_part_takes(at + at / 4)) {
      others++;
      continue;
    }
    const edge_case *ec = edge_find(d->name);
    if (quick && ec && ec->heavy) {
      skipped++;
      continue;
    }
    tkb_check_result *r = NULL;
    tkb_check_opts o = {.device = device};
    tkb_status st = tkb_check_entry(i, &o, &r);
    CHECK_MSG(st == TKB_OK, "%s: %s", tkb_registry_full_name(i), tkb_last_error());
    if (st) continue;
    CHECK_MSG(r->passed, "%s differs from its reference", r->name);
    if (r->passed) passed++;
    for (int k = 0; k < r->n_outputs; k++) {
      const tkb_check_output *c = &r->outputs[k];
      if (!c->passed)
        printf("  FAIL %s output '%s': max|diff| %.3g at flat %lld (actual %.9g, expected "
               "%.9g), %.2f%% close, NaN %lld/%lld, Inf %lld/%lld (rtol %.3g atol %.3g)\n",
               r->name, c->name, c->diff.max_abs_diff, (long long)c->diff.max_abs_diff_index,
               c->diff.max_diff_actual, c->diff.max_diff_expected, c->diff.percent_close,
               (long long)c->diff.nan_actual, (long long)c->diff.nan_expected,
               (long long)c->diff.inf_actual, (long long)c->diff.inf_expected, c->diff.rtol,
               c->diff.atol);
    }
    tkb_check_result_free(r);
  }
  printf("edge cases on %s: %d of %d passed, %d heavy ones left out, %d in other parts\n", device,
         passed, total, skipped, others);
  CHECK(total == (int)(4 * n_edge));
}

#endif /* TKB_TEST_EDGE_CASES_H */
