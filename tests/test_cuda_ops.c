/*
 * test_cuda_ops.c - the CUDA implementations of normalization and gated_linear_unit
 * (impl "cuda": ops/<op>/cuda.c in the core, kernels in libtkbench-cuda.so) as far as a
 * machine without a GPU can check them:
 *  - every reference entry of the two ops (the cpu-tagged and Tokamax specs, every mode)
 *    has a "cuda" twin with device kind "cuda", the same arguments, counts and tags;
 *  - calling one standardized on cpu refuses with a sentence naming the devices it runs on (the
 *    core half validates before it would launch anything);
 *  - without a GPU (or driver, or plugin), standardizing and checking one on cuda:0 fail
 *    with the device's one-sentence reason.
 * Their numbers are checked on a GPU by `tkbench check --device cuda:0` (scripts/
 * gpu-check.sh); this test then only checks the registration.
 */
#include "check.h"
#include "cuda_ops.h"
#include "internal.h"

#include <stdint.h>
#include <string.h>

static size_t find(const char *full) {
  for (size_t i = 0; i < tkb_registry_count(); i++)
    if (strcmp(tkb_registry_full_name(i), full) == 0) return i;
  return SIZE_MAX;
}

static void test_twins(void) {
  CHECK_OK(tkb_register_builtin_ops());
  CHECK_OK(tkb__register_cuda_ops()); /* idempotent */
  size_t refs = 0, twins = 0, cuda = 0;
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (strcmp(d->impl_name, "cuda") == 0) {
      cuda++;
      CHECK_MSG(strcmp(d->device_kind, "cuda") == 0, "%s: device kind %s", tkb_registry_full_name(i),
                d->device_kind);
    }
    bool norm = strcmp(d->op, "normalization") == 0, glu = strcmp(d->op, "gated_linear_unit") == 0;
    if ((!norm && !glu) || strcmp(d->impl_name, "reference") != 0) continue;
    refs++;
    char want[512];
    snprintf(want, sizeof want, "%s_%s_cuda", d->name, tkb_mode_name(d->mode));
    size_t j = find(want);
    CHECK_MSG(j != SIZE_MAX, "no twin %s", want);
    if (j == SIZE_MAX) continue;
    twins++;
    const tkb_benchmark_def *t = tkb_registry_get(j);
    CHECK(t->fn == (norm ? &tkb__op_normalization_cuda : &tkb__op_gated_linear_unit_cuda));
    CHECK(t->mode == d->mode && t->args == d->args && t->n_args == d->n_args &&
          t->kwargs == d->kwargs && t->factory == d->factory && t->counts == d->counts);
    CHECK_MSG(strcmp(t->tags, d->tags) == 0, "%s: tags '%s' vs '%s'", want, t->tags, d->tags);
  }
  printf("%zu reference entries, %zu cuda twins, %zu cuda entries\n", refs, twins, cuda);
  CHECK(refs > 300 && twins == refs && cuda == refs);
  /* both spec families: cpu-tagged (every mode) and Tokamax (forward_only) */
  CHECK(find("cpu_96x96x64_vjp_cuda") != SIZE_MAX);
  CHECK(find("cpu_alphafold_3_batch_1-64_batch_2-None_n_in-768_n_out-1536_vmap_size-None_"
             "activation-silu_dtype-float32_vjp_cuda") != SIZE_MAX);
  CHECK(find("alphafold_3_batch_1-512_batch_2-512_n_in-128_n_out-256_vmap_size-1_"
             "activation-sigmoid_dtype-bfloat16_forward_cuda") != SIZE_MAX);
}

/* The core half refuses a device of another kind before touching any memory. */
static void test_cpu_refused(void) {
  const char *names[] = {"cpu_96x96x64_forward_cuda",
                         "cpu_alphafold_3_batch_1-32_batch_2-32_n_in-128_n_out-512_vmap_size-"
                         "None_activation-silu_dtype-bfloat16_vjp_cuda"};
  for (size_t k = 0; k < 2; k++) {
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
  size_t i = find("cpu_96x96x64_forward_cuda");
  if (i == SIZE_MAX) return;
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  tkb_status st = tkb_registry_standardize(i, "cuda:0", 0, &f, &args);
  CHECK_MSG(st == TKB_ERR_DEVICE || st == TKB_ERR_NOT_FOUND, "standardize on cuda:0 -> %s: %s",
            tkb_status_name(st), tkb_last_error());
  CHECK_MSG(strlen(tkb_last_error()) > 20 && !strchr(tkb_last_error(), '\n'), "reason: '%s'",
            tkb_last_error());
  printf("cuda:0 standardize: %s\n", tkb_last_error());
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  tkb_check_result *r = NULL;
  tkb_check_opts o = {.device = "cuda:0"};
  st = tkb_check_entry(i, &o, &r);
  CHECK_MSG(st != TKB_OK || (r && !r->passed), "check on cuda:0 without a GPU -> %s",
            tkb_status_name(st));
  tkb_check_result_free(r);
}

int main(void) {
  test_twins();
  test_cpu_refused();
  tkb_device *dev = NULL;
  if (tkb_device_get("cuda:0", &dev) == TKB_OK)
    printf("cuda:0 is present (%s): its numbers are checked by `tkbench check --device cuda:0`\n",
           tkb_device_description(dev));
  else
    test_no_gpu();
  return CHECK_DONE();
}
