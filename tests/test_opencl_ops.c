/*
 * test_opencl_ops.c - the OpenCL implementations of the five shipped ops (impl "opencl":
 * ops/<op>/opencl.{c,cl}) on the first OpenCL device:
 *  - every reference entry of the five ops (cpu-tagged and Tokamax specs, every mode) has
 *    an "opencl" twin with device kind "opencl", the same arguments, counts and tags;
 *  - standardized on the cpu, the three ops without a cpu guard of their own refuse with a
 *    sentence naming the devices they run on;
 *  - ragged_dot's group sizes, which stay in device memory, are checked on the host once
 *    per array: sizes that do not sum to M fail the call with the cpu's message;
 *  - the profiler method's Chrome trace names each op's kernels;
 *  - the edge shapes the registered specs do not reach (edge_cases.h, shared with the
 *    CUDA test; the heavy ones left out) against their references, as `tkbench check
 *    --device opencl:0` does.
 * The registered cpu-tagged entries themselves are checked by `tkbench check --device
 * opencl:0` (docs/DEVELOPING.md).
 *
 * Exit 77 (CTest: SKIPPED, with the reason printed) when this machine has no OpenCL
 * backend or device.
 */
#include "../ops/dot_product_attention/attention.h"
#include "../ops/gated_linear_unit/gated_linear_unit.h"
#include "../ops/linear_softmax_cross_entropy_loss/lsce.h"
#include "../ops/normalization/norm.h"
#include "../ops/ragged_dot/ragged_dot.h"
#include "check.h"
#include "edge_cases.h"
#include "internal.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
  const char *op;
  const tkb_fn *fn;
} ops[] = {
    {"normalization", &tkb__op_normalization_opencl},
    {"gated_linear_unit", &tkb__op_gated_linear_unit_opencl},
    {"ragged_dot", &tkb__op_ragged_dot_opencl},
    {"linear_softmax_cross_entropy_loss", &tkb__op_linear_softmax_cross_entropy_loss_opencl},
    {"dot_product_attention", &tkb__op_dot_product_attention_opencl},
};
#define N_OPS (sizeof ops / sizeof ops[0])

static const tkb_fn *opencl_fn(const char *op) {
  for (size_t o = 0; o < N_OPS; o++)
    if (strcmp(ops[o].op, op) == 0) return ops[o].fn;
  return NULL;
}

static size_t find(const char *full) {
  for (size_t i = 0; i < tkb_registry_count(); i++)
    if (strcmp(tkb_registry_full_name(i), full) == 0) return i;
  return SIZE_MAX;
}

static void test_twins(void) {
  CHECK_OK(tkb_register_builtin_ops());
  size_t refs = 0, twins = 0, per_op[N_OPS] = {0};
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    size_t o = 0;
    while (o < N_OPS && strcmp(d->op, ops[o].op) != 0) o++;
    if (o == N_OPS || strcmp(d->impl_name, "reference") != 0) continue;
    refs++;
    char want[512];
    snprintf(want, sizeof want, "%s_%s_opencl", d->name, tkb_mode_name(d->mode));
    size_t j = find(want);
    CHECK_MSG(j != SIZE_MAX, "no twin %s", want);
    if (j == SIZE_MAX) continue;
    const tkb_benchmark_def *t = tkb_registry_get(j);
    CHECK_MSG(t->fn == ops[o].fn && strcmp(t->device_kind, "opencl") == 0, "%s: not %s's opencl fn",
              want, ops[o].op);
    CHECK(t->mode == d->mode && t->args == d->args && t->n_args == d->n_args &&
          t->kwargs == d->kwargs && t->counts == d->counts && strcmp(t->tags, d->tags) == 0);
    twins++;
    per_op[o]++;
  }
  printf("%zu reference entries, %zu opencl twins\n", refs, twins);
  CHECK(refs > 800 && twins == refs);
  for (size_t o = 0; o < N_OPS; o++) CHECK_MSG(per_op[o] > 0, "%s: no opencl entries", ops[o].op);
}

/* The three ops' prepare refuses a device of another kind before touching memory. */
static void test_cpu_refused(void) {
  const char *names[] = {"cpu_mixtral_8x7b_forward_opencl", "cpu_32x128x4748_sum_float32_forward_opencl",
                         "cpu_alphafold_40x40x4x32_vjp_opencl"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    size_t i = find(names[k]);
    CHECK_MSG(i != SIZE_MAX, "no entry %s", names[k]);
    if (i == SIZE_MAX) continue;
    tkb_std_fn *f = NULL;
    tkb_arrays *args = NULL, *outs = NULL;
    tkb_status st = tkb_registry_standardize(i, "cpu", 0, &f, &args);
    if (!st) st = tkb_std_fn_call(f, args, &outs);
    CHECK_ERR(st, TKB_ERR_UNSUPPORTED, "(opencl) runs on opencl:N devices; got device cpu");
    tkb_std_fn_free(f);
    tkb_arrays_free(args);
  }
}

/* group_sizes on the device: the first call with an array reads and checks it. */
static void test_group_sizes_checked(void) {
  size_t i = find("cpu_mixtral_8x7b_forward_opencl");
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL, *outs = NULL;
  CHECK_OK(tkb_registry_standardize(i, "opencl:0", 0, &f, &args));
  if (!f) return;
  tkb_array *gs = tkb_arrays_get(args, 2);
  int32_t sizes[8], bad[8];
  CHECK_OK(tkb_array_read(gs, sizes, sizeof sizes));
  memcpy(bad, sizes, sizeof bad);
  bad[3] += 1; /* sums to M + 1 */
  CHECK_OK(tkb_array_write(gs, bad, sizeof bad));
  CHECK_ERR(tkb_std_fn_call(f, args, &outs), TKB_ERR_INVALID_ARGUMENT, "sum to 257");
  bad[3] -= 2; /* sums to M - 1 ... */
  bad[5] = -1; /* ... with a negative size */
  CHECK_ERR(tkb_std_fn_call(f, args, &outs), TKB_ERR_INVALID_ARGUMENT, "sum to 257");
  CHECK_OK(tkb_array_write(gs, bad, sizeof bad));
  CHECK_ERR(tkb_std_fn_call(f, args, &outs), TKB_ERR_INVALID_ARGUMENT, "is negative");
  CHECK_OK(tkb_array_write(gs, sizes, sizeof sizes));
  CHECK_OK(tkb_std_fn_call(f, args, &outs)); /* (outs belong to f) */
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
}

/* The kernel names of the profiler's Chrome trace of one entry's last call, "|"-joined
 * in order of first appearance. */
static void trace_kernels(const char *entry, char *names, size_t cap) {
  names[0] = '\0';
  size_t i = find(entry);
  CHECK_MSG(i != SIZE_MAX, "no entry %s", entry);
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  if (i != SIZE_MAX) CHECK_OK(tkb_registry_standardize(i, "opencl:0", 0, &f, &args));
  if (!f) return;
  char dir[] = "/tmp/tkb_test_opencl_ops_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  tkb_bench_opts o = {.iterations = 1, .method = "profiler", .trace_dir = dir};
  tkb_benchmark_data *bd = NULL;
  CHECK_OK(tkb_benchmark(f, args, &o, &bd));
  const char *trace = bd ? tkb_benchmark_data_meta(bd, "trace") : NULL;
  FILE *tf = trace ? fopen(trace, "r") : NULL;
  CHECK_MSG(tf != NULL, "%s: no trace", entry);
  if (tf) {
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, tf);
    text[len] = '\0';
    fclose(tf);
    cJSON *root = cJSON_Parse(text), *ev = root ? cJSON_GetObjectItem(root, "traceEvents") : NULL;
    for (cJSON *e = ev ? ev->child : NULL; e; e = e->next) {
      cJSON *ph = cJSON_GetObjectItem(e, "ph"), *name = cJSON_GetObjectItem(e, "name");
      if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") != 0 || !cJSON_IsString(name)) continue;
      char tok[80];
      snprintf(tok, sizeof tok, "|%s|", name->valuestring);
      if (!strstr(names, tok) && strlen(names) + strlen(tok) < cap) {
        if (names[0]) names[strlen(names) - 1] = '\0';
        strcat(names, tok);
      }
    }
    cJSON_Delete(root);
    unlink(trace);
  }
  rmdir(dir);
  tkb_benchmark_data_free(bd);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
}

static void test_trace_names(void) {
  static const char *const want[][2] = {
      {"cpu_mixtral_8x7b_forward_opencl", "|rd_group_offsets|rd_fwd|"},
      {"cpu_mixtral_8x7b_vjp_opencl", "|rd_group_offsets|rd_dlhs|rd_drhs|"},
      {"cpu_memory_bound_forward_opencl", "|rd_group_offsets|rd_fwd_rows|"},
      {"cpu_memory_bound_vjp_opencl", "|rd_group_offsets|rd_dlhs_rows|rd_drhs_rows|"},
      {"cpu_32x128x4748_sum_float32_forward_res_opencl", "|lsce_logits|lsce_lse_merge|lsce_loss|"},
      {"cpu_32x128x4748_sum_float32_vjp_opencl", "|lsce_logits|lsce_dlogits|lsce_dx|lsce_dw|"},
      {"cpu_mixtral_8x7b_bf16_forward_opencl", "|attn_fwd|"},
      {"cpu_alphafold_40x40x4x32_vjp_opencl", "|attn_bwd_dq|attn_bwd_dkv|attn_bwd_dbias|"},
  };
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    char names[512];
    trace_kernels(want[k][0], names, sizeof names);
    CHECK_MSG(strcmp(names, want[k][1]) == 0, "%s: trace kernels %s, want %s", want[k][0], names,
              want[k][1]);
  }
}

int main(void) {
  tkb_device *cl = NULL;
  tkb_status st = tkb_device_get("opencl:0", &cl);
  if (st == TKB_ERR_DEVICE) {
    printf("SKIPPED: %s\n", tkb_last_error());
    return 77;
  }
  CHECK_OK(st);
  if (st) return CHECK_DONE();
  printf("opencl:0 is %s\n", tkb_device_description(cl));
  test_twins();
  test_cpu_refused();
  test_group_sizes_checked();
  test_trace_names();
  edge_register("opencl", "opencl", opencl_fn);
  /* The heavy cases reach the CUDA kernels' paths; the OpenCL ones are reached by the
   * others (the loss's chunks by 37 x 19 x 8300), and the float64 references of the
   * heavy ones take minutes of this test's 10 here. */
  edge_check_all("opencl", "opencl:0", false);
  return CHECK_DONE();
}
