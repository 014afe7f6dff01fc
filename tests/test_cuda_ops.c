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
 * gpu-check.sh). With a GPU this test also checks, against the references, the edge
 * shapes the registered specs do not reach (edge_cases.h, shared with the OpenCL test);
 * without one, that their arguments bind.
 */
#include "../ops/dot_product_attention/attention.h"
#include "../ops/gated_linear_unit/gated_linear_unit.h"
#include "../ops/linear_softmax_cross_entropy_loss/lsce.h"
#include "../ops/normalization/norm.h"
#include "../ops/ragged_dot/ragged_dot.h"
#include "check.h"
#include "edge_cases.h"
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

/* ---- On a GPU: shapes the registered specs do not reach (edge_cases.h) ---- */

static const tkb_fn *cuda_fn(const char *op) {
  for (size_t o = 0; o < N_OPS; o++)
    if (strcmp(ops[o].op, op) == 0) return ops[o].fn;
  return NULL;
}

/* Without a GPU: the edge cases' arguments at least bind and infer (their reference
 * entries standardize on the cpu; forward mode runs nothing). */
static void test_edge_args(void) {
  edge_register("cuda", "cuda", cuda_fn);
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

/* The edge cases on the GPU (edge_cases.h). */
static void test_edge_on_gpu(void) {
  edge_register("cuda", "cuda", cuda_fn);
  edge_check_all("cuda", "cuda:0", true);
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
