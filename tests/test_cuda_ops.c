/*
 * test_cuda_ops.c - the CUDA implementations of the five shipped ops (normalization,
 * gated_linear_unit, ragged_dot, linear_softmax_cross_entropy_loss, dot_product_attention;
 * impl "cuda": ops/<op>/cuda.c in the core, kernels in libtkbench-cuda.so) as far as a
 * machine without a GPU can check them:
 *  - every reference entry of the five ops (the cpu-tagged and Tokamax specs, every mode)
 *    has a "cuda" twin with device kind "cuda", the same arguments, counts and tags;
 *  - calling one standardized on cpu refuses with a sentence naming the devices it runs on (the
 *    core half validates before it would launch anything);
 *  - without a GPU (or driver, or plugin), standardizing and checking one on cuda:0 fail
 *    with the device's one-sentence reason.
 * Their numbers are checked on a GPU by `tkbench check --device cuda:0` (scripts/
 * gpu-check.sh). With a GPU this test also checks, against the references, edge shapes
 * the registered specs do not reach (test_edge_on_gpu); without one, that their
 * arguments bind.
 */
#include "../ops/dot_product_attention/attention.h"
#include "../ops/gated_linear_unit/gated_linear_unit.h"
#include "../ops/linear_softmax_cross_entropy_loss/lsce.h"
#include "../ops/normalization/norm.h"
#include "../ops/ragged_dot/ragged_dot.h"
#include "check.h"
#include "internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t find(const char *full) {
  for (size_t i = 0; i < tkb_registry_count(); i++)
    if (strcmp(tkb_registry_full_name(i), full) == 0) return i;
  return SIZE_MAX;
}

/* The five ops and their CUDA tkb_fn. */
static const struct {
  const char *op;
  const tkb_fn *fn;
} ops[] = {
    {"normalization", &tkb__op_normalization_cuda},
    {"gated_linear_unit", &tkb__op_gated_linear_unit_cuda},
    {"ragged_dot", &tkb__op_ragged_dot_cuda},
    {"linear_softmax_cross_entropy_loss", &tkb__op_linear_softmax_cross_entropy_loss_cuda},
    {"dot_product_attention", &tkb__op_dot_product_attention_cuda},
};
#define N_OPS (sizeof ops / sizeof ops[0])

static void test_twins(void) {
  CHECK_OK(tkb_register_builtin_ops());
  CHECK_OK(tkb_register_builtin_ops()); /* idempotent */
  size_t refs = 0, twins = 0, cuda = 0, per_op[N_OPS] = {0};
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (strcmp(d->impl_name, "cuda") == 0) {
      cuda++;
      CHECK_MSG(strcmp(d->device_kind, "cuda") == 0, "%s: device kind %s", tkb_registry_full_name(i),
                d->device_kind);
    }
    size_t o = 0;
    while (o < N_OPS && strcmp(d->op, ops[o].op) != 0) o++;
    if (o == N_OPS || strcmp(d->impl_name, "reference") != 0) continue;
    refs++;
    per_op[o]++;
    char want[512];
    snprintf(want, sizeof want, "%s_%s_cuda", d->name, tkb_mode_name(d->mode));
    size_t j = find(want);
    CHECK_MSG(j != SIZE_MAX, "no twin %s", want);
    if (j == SIZE_MAX) continue;
    twins++;
    const tkb_benchmark_def *t = tkb_registry_get(j);
    CHECK_MSG(t->fn == ops[o].fn, "%s: not %s's cuda fn", want, ops[o].op);
    CHECK(t->mode == d->mode && t->args == d->args && t->n_args == d->n_args &&
          t->kwargs == d->kwargs && t->factory == d->factory && t->counts == d->counts);
    CHECK_MSG(strcmp(t->tags, d->tags) == 0, "%s: tags '%s' vs '%s'", want, t->tags, d->tags);
  }
  printf("%zu reference entries, %zu cuda twins, %zu cuda entries\n", refs, twins, cuda);
  CHECK(refs > 800 && twins == refs && cuda == refs);
  for (size_t o = 0; o < N_OPS; o++) CHECK_MSG(per_op[o] > 0, "%s: no reference entries", ops[o].op);
  /* both spec families: cpu-tagged (every mode) and Tokamax */
  CHECK(find("cpu_96x96x64_vjp_cuda") != SIZE_MAX);
  CHECK(find("cpu_alphafold_3_batch_1-64_batch_2-None_n_in-768_n_out-1536_vmap_size-None_"
             "activation-silu_dtype-float32_vjp_cuda") != SIZE_MAX);
  CHECK(find("alphafold_3_batch_1-512_batch_2-512_n_in-128_n_out-256_vmap_size-1_"
             "activation-sigmoid_dtype-bfloat16_forward_cuda") != SIZE_MAX);
  CHECK(find("cpu_mixtral_8x7b_vjp_cuda") != SIZE_MAX);                        /* ragged_dot */
  CHECK(find("maxtext_gpt-oss-131072x512_256x512x7168_vjp_cuda") != SIZE_MAX);
  CHECK(find("cpu_32x128x4748_sum_float32_forward_and_vjp_cuda") != SIZE_MAX); /* lsce */
  CHECK(find("qwen3-8b_1024x4096x151936_mean_bfloat16_vjp_cuda") != SIZE_MAX);
  CHECK(find("cpu_mixtral_8x7b_bf16_vjp_cuda") != SIZE_MAX);                   /* attention */
  CHECK(find("cpu_alphafold_40x40x4x64_forward_and_vjp_cuda") != SIZE_MAX);
  CHECK(find("mixtral_8x7b_bf16_forward_res_cuda") != SIZE_MAX);
}

/* The core half refuses a device of another kind before touching any memory. */
static void test_cpu_refused(void) {
  const char *names[] = {"cpu_96x96x64_forward_cuda",
                         "cpu_alphafold_3_batch_1-32_batch_2-32_n_in-128_n_out-512_vmap_size-"
                         "None_activation-silu_dtype-bfloat16_vjp_cuda",
                         "cpu_mixtral_8x7b_forward_cuda",
                         "cpu_mixtral_8x7b_vjp_cuda",
                         "cpu_32x128x4748_sum_float32_forward_res_cuda",
                         "cpu_64x256x9496_mean_bfloat16_vjp_cuda",
                         "cpu_mixtral_8x7b_bf16_forward_cuda",
                         "cpu_alphafold_40x40x4x64_vjp_cuda"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    size_t i = find(names[k]);
    CHECK_MSG(i != SIZE_MAX, "no entry %s", names[k]);
    if (i == SIZE_MAX) continue;
    tkb_std_fn *f = NULL;
    tkb_arrays *args = NULL;
    tkb_arrays *outs = NULL;
    /* vjp mode runs the forward while standardizing (for the cotangents) */
    tkb_status st = tkb_registry_standardize(i, "cpu", 0, &f, &args);
    if (!st) st = tkb_std_fn_call(f, args, &outs);
    CHECK_ERR(st, TKB_ERR_UNSUPPORTED, "(cuda) runs on cuda:N devices; got device cpu");
    tkb_arrays_free(outs);
    tkb_std_fn_free(f);
    tkb_arrays_free(args);
  }
}

/* No GPU here: the entries fail with the device's reason, never crash or hang. */
static void test_no_gpu(void) {
  const char *names[] = {"cpu_96x96x64_forward_cuda", "cpu_mixtral_8x7b_vjp_cuda",
                         "cpu_32x128x4748_sum_float32_forward_cuda",
                         "cpu_alphafold_40x40x4x64_forward_res_cuda"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    size_t i = find(names[k]);
    CHECK_MSG(i != SIZE_MAX, "no entry %s", names[k]);
    if (i == SIZE_MAX) continue;
    tkb_std_fn *f = NULL;
    tkb_arrays *args = NULL;
    tkb_status st = tkb_registry_standardize(i, "cuda:0", 0, &f, &args);
    CHECK_MSG(st == TKB_ERR_DEVICE || st == TKB_ERR_NOT_FOUND, "%s: standardize on cuda:0 -> %s: %s",
              names[k], tkb_status_name(st), tkb_last_error());
    CHECK_MSG(strlen(tkb_last_error()) > 20 && !strchr(tkb_last_error(), '\n'), "reason: '%s'",
              tkb_last_error());
    if (k == 0) printf("cuda:0 standardize: %s\n", tkb_last_error());
    tkb_std_fn_free(f);
    tkb_arrays_free(args);
    tkb_check_result *r = NULL;
    tkb_check_opts o = {.device = "cuda:0"};
    st = tkb_check_entry(i, &o, &r);
    CHECK_MSG(st != TKB_OK || (r && !r->passed), "%s: check on cuda:0 without a GPU -> %s",
              names[k], tkb_status_name(st));
    tkb_check_result_free(r);
  }
}

/* On a GPU, group_sizes and labels are device memory: the cuda fns' infer (run with the
 * concrete arrays when a standardized call is lowered) must plan from their specs and
 * never read them. A data pointer the host cannot read stands in for device memory. */
static void test_device_data_not_read(void) {
  tkb_array gs = {.spec = TKB_SPEC(TKB_INT32, 4), .data = (void *)16, .nbytes = 16, .numel = 4};
  tkb_value rd[3] = {TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 64, 32)),
                     TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 4, 32, 48)), TKB_ARRAY(&gs)};
  tkb_args a = {.fn = &tkb__op_ragged_dot_cuda, .count = 3, .values = rd};
  tkb_shapes sh;
  CHECK_OK(tkb__op_ragged_dot_cuda.infer(&a, &sh));
  CHECK(sh.n_outputs == 1 && sh.outputs[0].shape[0] == 64 && sh.outputs[0].shape[1] == 48);
  tkb_array labels = {.spec = TKB_SPEC(TKB_INT32, 8), .data = (void *)16, .nbytes = 32, .numel = 8};
  tkb_value ls[4] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 8, 16)), TKB_ARRAY(&labels),
                     TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 16, 100)), TKB_STRING("sum")};
  a = (tkb_args){.fn = &tkb__op_linear_softmax_cross_entropy_loss_cuda, .count = 4, .values = ls};
  CHECK_OK(tkb__op_linear_softmax_cross_entropy_loss_cuda.infer(&a, &sh));
  CHECK(sh.n_outputs == 1 && sh.n_residuals == 1 && sh.outputs[0].rank == 0 &&
        sh.residuals[0].dtype == TKB_FLOAT32 && sh.residuals[0].shape[0] == 8);
}

/* ---- On a GPU: shapes the registered specs do not reach ----
 * Each case is registered twice here (reference and cuda, every mode) under an "edge_"
 * name and checked as `tkbench check` does. They cover what the cpu_ specs leave out:
 * rows longer than a block and not a multiple of 32 (normalization), float16 and float64
 * (every op), RMS norm and absent params, the activations gelu, relu and none, ragged
 * groups that are empty at both ends, lsce's vocabulary split into several chunks (B
 * 4096: chunks of 8192 columns), head dims of 256 (more than 48 KiB of shared memory, in
 * float32 and float64), T != S, grouped-query heads with Dv != D, a bias broadcast over
 * b and t, and a mask that keeps nothing (out 0, lse -inf, zero grads); normalization's
 * vjp kernels' layouts; ragged_dot's two paths (few rows: sizes read on the device). */
tkb_status tkb__rd_init_fixed_groups(tkb_array *a, const tkb_init_ctx *ctx); /* ops/ragged_dot */

typedef struct edge_case {
  const char *op, *name;
  const tkb_fn *ref, *cuda;
  tkb_value args[5];
  size_t n_args;
  tkb_kwarg kwargs[3];
  size_t n_kwargs;
  bool heavy; /* minutes on the emulator under the sanitizers (TKB_TEST_QUICK skips it) */
} edge_case;

static const int32_t edge_groups[6] = {0, 17, 0, 20, 13, 0}; /* M = 50 */
static const int32_t edge_groups40[6] = {0, 17, 0, 10, 13, 0}; /* M = 40 */
static const int32_t edge_groups100[6] = {0, 37, 0, 40, 23, 0}; /* M = 100 */
/* 40 groups, M = 50: rd_segment's warp scan carries from its first batch of 32 groups
 * into the second (groups 30-34 span the seam), with empty groups on both sides */
static const int32_t edge_groups_g40[40] = {0, 2, 0, 1, 3, 0, 0, 1, 0, 2, 0, 0, 1, 0, 0, 2, 0, 1, 0, 0,
                                            3, 0, 0, 1, 0, 0, 2, 0, 0, 1, 4, 3, 2, 5, 3, 0, 7, 0, 6, 0};
static tkb_init edge_groups_init, edge_groups40_init, edge_groups100_init, edge_groups_g40_init, edge_labels_init,
    edge_mask_none, edge_huge;

static edge_case edge_cases[40];
static size_t n_edge;

static edge_case *edge_add(const char *op, const char *name, const tkb_fn *ref, const tkb_fn *cuda) {
  if (n_edge == sizeof edge_cases / sizeof edge_cases[0]) {
    fprintf(stderr, "test_cuda_ops: more than %zu edge cases: enlarge edge_cases\n", n_edge);
    exit(1);
  }
  edge_case *c = &edge_cases[n_edge++];
  *c = (edge_case){.op = op, .name = name, .ref = ref, .cuda = cuda};
  return c;
}

static void edge_register(void) {
  if (n_edge) return; /* registered before */
  edge_groups_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups);
  edge_groups40_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups40);
  edge_groups100_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups100);
  edge_groups_g40_init = TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)edge_groups_g40);
  edge_labels_init = TKB_INIT_RANGE_(0, 8300);
  edge_mask_none = TKB_INIT_CONSTANT_(0);
  edge_huge = TKB_INIT_CONSTANT_(1e36);
  const tkb_fn *nr = &tkb_op_normalization_reference, *nc = &tkb__op_normalization_cuda;
  edge_case *c = edge_add("normalization", "edge_norm_f16_7x300_rms", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 7, 300));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 300));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 300));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"subtract_mean", TKB_BOOL(false)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f64_5x33x6_axis1", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 5, 33, 6));
  c->args[1] = TKB_NONE;
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 33));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(1)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f32_600x40", nr, nc); /* 3 partial-sum blocks */
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 600, 40));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 40));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 40));
  c->n_args = 3;
  /* sm_90 bulk-copy rows (2-byte dtypes): groups of 32 threads with a partial last tile
   * of 5 rows and a bfloat16 offset (the held params' generic loads); a block per row
   * with RMS norm and no offset; one thread per row (n = 8), 300 rows in tiles of 256 */
  c = edge_add("normalization", "edge_norm_bf16_37x1000_bulk_groups", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 37, 1000));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1000));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 1000));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_bf16_5x4096_bulk_block_rms", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 5, 4096));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4096));
  c->args[2] = TKB_NONE;
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"subtract_mean", TKB_BOOL(false)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f16_300x8_bulk_thread_rows", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 300, 8));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 8));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 8));
  c->n_args = 3;
  /* colreg (other axes, n <= 128): 16 rows per thread with n = 100 (past n in the last
   * ones) and a partial second segment of 8 lanes; float32 RMS with n = 7 and a partial
   * segment of 4 lanes (inner 132: colreg needs a whole segment, 128 float32 lanes) */
  c = edge_add("normalization", "edge_norm_bf16_3x100x264_axis1_colreg", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 3, 100, 264));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 100));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 100));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(1)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f32_2x7x132_axis1_colreg_rms", nr, nc);
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
  c = edge_add("normalization", "edge_norm_bf16_33x512_dx_groups_rms", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 33, 512));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 512));
  c->args[2] = TKB_NONE;
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"subtract_mean", TKB_BOOL(false)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f64_9x6_dx_thread_rows", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 9, 6));
  c->args[1] = TKB_NONE;
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 6));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_f32_1000x20_dx_pairs", nr, nc);
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
  c = edge_add("normalization", "edge_norm_bf16_600x128_vjp_blocks", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 600, 128));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 128));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 128));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_f64_300x512_vjp_c8", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 300, 512));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 512));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 512));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_bf16_12000x64_vjp_47_blocks", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 12000, 64));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_bf16_64x96x96_axis0_vjp_cols", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 64, 96, 96));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(0)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_bf16_2x300x16_axis1_vjp_long", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 2, 300, 16));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 300));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 300));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(1)};
  c->n_kwargs = 1;
  /* rows of 96 bfloat16 held as 2 vectors by each of 8 threads (4 vectors past n), all
   * 1e36: mean rstd = 1e39 overflows float32, and the padding's 0 x (-inf) once made
   * every dx of the row NaN (the reference's xhat is 0) */
  c = edge_add("normalization", "edge_norm_bf16_4x96_huge_rows", nr, nc);
  c->args[0] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_BFLOAT16, 4, 96), &edge_huge);
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 96));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 96));
  c->n_args = 3;
  /* rows longer than 512 (a block per row, blocks of fewer than 32 rows when there are
   * few): float32 rows of 1025 vectors (512 threads holding 4 each, the last partly
   * used) in 1501 blocks of 2 rows (the last of 1), no scale; float64 rows of 8192, RMS,
   * no offset (512 threads x 8 vectors: the kernel that spills); the bfloat16 37x1000
   * and 5x4096 cases above take it too (64 and 256 threads) */
  c = edge_add("normalization", "edge_norm_f32_3001x4100_vjp_block", nr, nc);
  c->heavy = true; /* f64 5x8192 below takes the same kernel */
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 3001, 4100));
  c->args[1] = TKB_NONE;
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4100));
  c->n_args = 3;
  c = edge_add("normalization", "edge_norm_f64_5x8192_vjp_block_rms", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 5, 8192));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 8192));
  c->args[2] = TKB_NONE;
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"subtract_mean", TKB_BOOL(false)};
  c->n_kwargs = 1;
  c = edge_add("normalization", "edge_norm_f32_4x50x6_axis1_vjp_lanes", nr, nc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4, 50, 6));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 50));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 50));
  c->n_args = 3;
  c->kwargs[0] = (tkb_kwarg){"axis", TKB_INT(1)};
  c->n_kwargs = 1;

  const tkb_fn *gr = &tkb_op_gated_linear_unit_reference, *gc = &tkb__op_gated_linear_unit_cuda;
  const char *acts[3] = {"gelu", "relu", "none"};
  const tkb_dtype gdt[3] = {TKB_FLOAT16, TKB_FLOAT64, TKB_FLOAT32};
  const char *gnames[3] = {"edge_glu_f16_gelu", "edge_glu_f64_relu", "edge_glu_f32_none"};
  for (int i = 0; i < 3; i++) {
    c = edge_add("gated_linear_unit", gnames[i], gr, gc);
    c->args[0] = TKB_ABSTRACT(TKB_SPEC(gdt[i], 3, 17, 40));
    c->args[1] = TKB_ABSTRACT(TKB_SPEC(gdt[i], 40, 2, 24));
    c->n_args = 2;
    c->kwargs[0] = (tkb_kwarg){"activation", TKB_STRING(acts[i])};
    c->n_kwargs = 1;
  }

  /* bfloat16 with N = 10, even but not a multiple of a 16-byte vector's 8 values (the
   * element path), and x of 63 values (7 past a whole 16-bit draw of 8: the fill's tail) */
  c = edge_add("gated_linear_unit", "edge_glu_bf16_n10_tails", gr, gc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 1, 7, 9));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 9, 2, 10));
  c->n_args = 2;

  const tkb_fn *rr = &tkb_op_ragged_dot_reference, *rc = &tkb__op_ragged_dot_cuda;
  const tkb_dtype rdt[2] = {TKB_FLOAT16, TKB_FLOAT64};
  const char *rnames[2] = {"edge_rd_f16_empty_groups", "edge_rd_f64_empty_groups"};
  for (int i = 0; i < 2; i++) {
    c = edge_add("ragged_dot", rnames[i], rr, rc);
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
  c = edge_add("ragged_dot", "edge_rd_bf16_small_splits", rr, rc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 40, 300));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 6, 300, 264));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 6), &edge_groups40_init);
  c->n_args = 3;
  c = edge_add("ragged_dot", "edge_rd_bf16_small_40_groups", rr, rc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 50, 37));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 40, 37, 24));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 40), &edge_groups_g40_init);
  c->n_args = 3;
  c = edge_add("ragged_dot", "edge_rd_f16_cublas_empty_groups", rr, rc);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 100, 24));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 6, 24, 20));
  c->args[2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 6), &edge_groups100_init);
  c->n_args = 3;

  const tkb_fn *lr = &tkb_op_linear_softmax_cross_entropy_loss_reference,
               *lc = &tkb__op_linear_softmax_cross_entropy_loss_cuda;
  const tkb_dtype lx[2] = {TKB_BFLOAT16, TKB_FLOAT32};
  const char *lnames[2] = {"edge_lsce_bf16_chunks", "edge_lsce_f32_bf16w_chunks"};
  for (int i = 0; i < 2; i++) {
    c = edge_add("linear_softmax_cross_entropy_loss", lnames[i], lr, lc);
    c->heavy = true; /* 34M logits */
    c->args[0] = TKB_ABSTRACT(TKB_SPEC(lx[i], 4096, 8));
    c->args[1] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 4096), &edge_labels_init);
    c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 8, 8300));
    c->n_args = 3;
    c->kwargs[0] = (tkb_kwarg){"reduction", TKB_STRING(i ? "sum" : "mean")};
    c->n_kwargs = 1;
  }

  const tkb_fn *ar = &tkb_op_dot_product_attention_reference, *ac = &tkb__op_dot_product_attention_cuda;
  const tkb_dtype adt[2] = {TKB_FLOAT32, TKB_FLOAT64};
  const char *anames[2] = {"edge_attn_f32_d256_causal", "edge_attn_f64_d256_causal"};
  for (int i = 0; i < 2; i++) {
    c = edge_add("dot_product_attention", anames[i], ar, ac);
    c->args[0] = TKB_ABSTRACT(TKB_SPEC(adt[i], 1, 40, 2, 256));
    c->args[1] = TKB_ABSTRACT(TKB_SPEC(adt[i], 1, 37, 1, 256));
    c->args[2] = TKB_ABSTRACT(TKB_SPEC(adt[i], 1, 37, 1, 256));
    c->n_args = 3;
    c->kwargs[0] = (tkb_kwarg){"is_causal", TKB_BOOL(true)};
    c->n_kwargs = 1;
  }
  c = edge_add("dot_product_attention", "edge_attn_bf16_gqa_bias_mask", ar, ac);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 2, 24, 4, 48));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 2, 70, 2, 48));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 2, 70, 2, 80));
  c->args[3] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 4, 1, 70)); /* q's dtype, as Tokamax's */
  c->args[4] = TKB_ABSTRACT(TKB_SPEC(TKB_BOOL, 2, 1, 24, 70));
  c->n_args = 5;
  c = edge_add("dot_product_attention", "edge_attn_f16_masked_out", ar, ac);
  c->args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 1, 9, 2, 32));
  c->args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 1, 11, 2, 32));
  c->args[2] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 1, 11, 2, 32));
  c->args[3] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 1, 2, 9, 11));
  c->args[4] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_BOOL, 1, 1, 1, 11), &edge_mask_none);
  c->n_args = 5;

  static const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_VJP,
                                   TKB_MODE_FORWARD_AND_VJP};
  for (size_t i = 0; i < n_edge; i++)
    for (size_t m = 0; m < 4; m++)
      for (int impl = 0; impl < 2; impl++) {
        tkb_benchmark_def d = {.op = edge_cases[i].op,
                               .name = edge_cases[i].name,
                               .impl_name = impl ? "cuda" : "reference",
                               .fn = impl ? edge_cases[i].cuda : edge_cases[i].ref,
                               .args = edge_cases[i].args,
                               .n_args = edge_cases[i].n_args,
                               .kwargs = edge_cases[i].n_kwargs ? edge_cases[i].kwargs : NULL,
                               .n_kwargs = edge_cases[i].n_kwargs,
                               .mode = modes[m],
                               .tags = "edge",
                               .device_kind = impl ? "cuda" : "cpu"};
        tkb_status st = tkb_register_benchmark(&d);
        CHECK_MSG(st == TKB_OK || st == TKB_ERR_DUPLICATE_ARGUMENT, "registering %s: %s",
                  edge_cases[i].name, tkb_last_error());
      }
}

/* Without a GPU: the edge cases' arguments at least bind and infer (their reference
 * entries standardize on the cpu; forward mode runs nothing). */
static void test_edge_args(void) {
  edge_register();
  int n = 0;
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (strncmp(d->name, "edge_", 5) != 0 || strcmp(d->impl_name, "reference") != 0 ||
        d->mode != TKB_MODE_FORWARD)
      continue;
    tkb_std_fn *f = NULL;
    tkb_arrays *args = NULL;
    CHECK_MSG(tkb_registry_standardize(i, "cpu", 0, &f, &args) == TKB_OK, "%s: %s",
              tkb_registry_full_name(i), tkb_last_error());
    n++;
    tkb_std_fn_free(f);
    tkb_arrays_free(args);
  }
  CHECK(n == (int)n_edge);
}

/* The edge case registered under name. */
static const edge_case *edge_find(const char *name) {
  for (size_t i = 0; i < n_edge; i++)
    if (strcmp(edge_cases[i].name, name) == 0) return &edge_cases[i];
  return NULL;
}

/* TKB_TEST_QUICK (the sanitizer build, where the emulated device runs the kernels
 * several times slower) leaves out the heavy cases, which the Release run checks. */
static void test_edge_on_gpu(void) {
  edge_register();
  const bool quick = getenv("TKB_TEST_QUICK") != NULL;
  int passed = 0, total = 0, skipped = 0;
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (strncmp(d->name, "edge_", 5) != 0 || strcmp(d->impl_name, "cuda") != 0) continue;
    total++;
    const edge_case *ec = edge_find(d->name);
    if (quick && ec && ec->heavy) {
      skipped++;
      continue;
    }
    tkb_check_result *r = NULL;
    tkb_check_opts o = {.device = "cuda:0"};
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
  printf("edge cases on cuda:0: %d of %d passed, %d heavy ones left out (TKB_TEST_QUICK)\n", passed, total,
         skipped);
  CHECK(total == (int)(4 * n_edge));
}

int main(void) {
  test_twins();
  test_cpu_refused();
  test_device_data_not_read();
  tkb_device *dev = NULL;
  if (tkb_device_get("cuda:0", &dev) == TKB_OK) {
    printf("cuda:0 is present (%s): the registered specs are checked by `tkbench check "
           "--device cuda:0`; the edge cases here\n", tkb_device_description(dev));
    test_edge_on_gpu();
  } else {
    test_no_gpu();
    test_edge_args();
  }
  return CHECK_DONE();
}
