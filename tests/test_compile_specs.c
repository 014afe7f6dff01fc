/*
 * test_compile_specs.c - Tokamax's compile_benchmark from specs alone (seed=None): an
 * f_std standardized with no_init is compiled from its specs and run on concrete
 * arguments given per run, so one compile serves many inputs; the compile's lower and
 * compile times are reported by every run. For the toy function by hand, then for each
 * shipped op's smallest cpu-tagged spec, every implementation of the cpu, in every mode
 * that can be compiled from specs: the outputs of a run on seeded arguments equal those
 * of an f_std standardized with that seed (under TKB_TEST_QUICK the cpu implementations
 * in forward and forward_and_vjp).
 */
#include "tkbench.h"
#include "check.h"
#include "std_fn.h"
#include "toy_fn.h"

#include <stdint.h>

static const tkb_bench_opts one_call = {.iterations = 1, .experiments = 1, .warmup_once = true};

/* x and y filled from `seed`, as a seeded standardization would. */
static tkb_arrays *toy_args(const tkb_value *args, uint64_t seed, tkb_std_fn **f) {
  tkb_arrays *a = NULL;
  tkb_std_opts o = {.seed = seed};
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 2, NULL, 0, &o, f, &a));
  return a;
}

static void test_toy(void) {
  const tkb_value args[2] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64)),
                             TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64))};
  tkb_std_fn *fs = NULL, *f1 = NULL, *f2 = NULL;
  tkb_arrays *specs = NULL;
  tkb_std_opts o = {.no_init = true};
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 2, NULL, 0, &o, &fs, &specs));
  tkb_compiled *c = NULL;
  CHECK_OK(tkb_compile_benchmark(fs, specs, &c));
  if (!c) return;
  tkb_benchmark_data *bd = NULL;
  CHECK_ERR(tkb_compiled_run(c, &one_call, &bd), TKB_ERR_INVALID_ARGUMENT, "compiled from specs");
  CHECK_ERR(tkb_compiled_run_args(c, specs, &one_call, &bd), TKB_ERR_INVALID_ARGUMENT, "has no data");
  tkb_arrays *a1 = toy_args(args, 1, &f1), *a2 = toy_args(args, 2, &f2);
  tkb_benchmark_data *bd1 = NULL, *bd2 = NULL;
  CHECK_OK(tkb_compiled_run_args(c, a1, &one_call, &bd1));
  /* the outputs are those of this run's arguments: out = x + y */
  const float *x = tkb_arrays_get(a1, 0)->data, *y = tkb_arrays_get(a1, 1)->data;
  const float *out = fs->outputs[0]->data;
  bool right = true;
  for (int i = 0; i < 64; i++) right = right && out[i] == x[i] + y[i];
  CHECK(right);
  CHECK_OK(tkb_compiled_run_args(c, a2, &one_call, &bd2));
  x = tkb_arrays_get(a2, 0)->data;
  y = tkb_arrays_get(a2, 1)->data;
  right = true;
  for (int i = 0; i < 64; i++) right = right && out[i] == x[i] + y[i];
  CHECK(right);
  /* lowered and compiled once: every run reports that one compile */
  if (bd1 && bd2) {
    CHECK(bd1->lower_time_ms == bd2->lower_time_ms && bd1->compile_time_ms == bd2->compile_time_ms);
    CHECK(bd1->lower_time_ms >= 0 && bd1->n_evaluation_times == 1);
  }
  /* arguments of other specs */
  const tkb_value other[2] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 65)),
                              TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 65))};
  tkb_std_fn *fo = NULL;
  tkb_arrays *ao = toy_args(other, 1, &fo);
  CHECK_ERR(tkb_compiled_run_args(c, ao, &one_call, &bd), TKB_ERR_BAD_SHAPE,
            "is float32[65] but f_std expects float32[64]");
  CHECK_ERR(tkb_compiled_run_args(c, NULL, &one_call, &bd), TKB_ERR_INVALID_ARGUMENT, "args is NULL");
  /* a seeded compile also runs on other arguments of its specs */
  tkb_compiled *c1 = NULL;
  CHECK_OK(tkb_compile_benchmark(f1, a1, &c1));
  tkb_benchmark_data *bd3 = NULL;
  CHECK_OK(tkb_compiled_run_args(c1, a2, &one_call, &bd3));
  CHECK_OK(tkb_compiled_run(c1, &one_call, &bd));
  tkb_benchmark_data_free(bd);
  tkb_benchmark_data_free(bd3);
  tkb_compiled_free(c1);
  tkb_benchmark_data_free(bd1);
  tkb_benchmark_data_free(bd2);
  tkb_compiled_free(c);
  tkb_std_fn_free(fo);
  tkb_arrays_free(ao);
  tkb_std_fn_free(f1);
  tkb_arrays_free(a1);
  tkb_std_fn_free(f2);
  tkb_arrays_free(a2);
  tkb_std_fn_free(fs);
  tkb_arrays_free(specs);

  /* vjp mode keeps a forward pass inside f_std: not from specs */
  o.mode = TKB_MODE_VJP;
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 2, NULL, 0, &o, &fs, &specs));
  CHECK_ERR(tkb_compile_benchmark(fs, specs, &c), TKB_ERR_UNSUPPORTED, "vjp mode");
  tkb_std_fn_free(fs);
  tkb_arrays_free(specs);
}

static tkb_status entry_args(const tkb_benchmark_def *d, const tkb_value **v, size_t *nv,
                             const tkb_kwarg **kw, size_t *nkw) {
  *v = d->args;
  *nv = d->n_args;
  *kw = d->kwargs;
  *nkw = d->n_kwargs;
  return d->factory ? d->factory(d->user, v, nv, kw, nkw) : TKB_OK;
}

/* Elements of an entry's array arguments (to find each op's smallest spec). */
static int64_t numel_of(size_t i) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  const tkb_value *v;
  const tkb_kwarg *kw;
  size_t nv, nkw;
  tkb_std_fn *f = NULL;
  tkb_arrays *a = NULL;
  tkb_std_opts o = {.no_init = true};
  if (entry_args(d, &v, &nv, &kw, &nkw) || tkb_standardize_function(d->fn, v, nv, kw, nkw, &o, &f, &a))
    return INT64_MAX;
  int64_t n = 0;
  for (size_t k = 0; k < tkb_arrays_count(a); k++) n += tkb_arrays_get(a, k)->numel;
  tkb_std_fn_free(f);
  tkb_arrays_free(a);
  return n;
}

/* One registry entry compiled from specs and run on its seeded arguments: the outputs
 * equal those of the seeded f_std's own call. */
static void check_entry(size_t i) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  const char *name = tkb_registry_full_name(i);
  const tkb_value *v;
  const tkb_kwarg *kw;
  size_t nv, nkw;
  CHECK_OK(entry_args(d, &v, &nv, &kw, &nkw));
  tkb_std_fn *fs = NULL, *fr = NULL;
  tkb_arrays *specs = NULL, *args = NULL, *want = NULL;
  tkb_std_opts o = {.mode = d->mode, .no_init = true};
  CHECK_OK(tkb_standardize_function(d->fn, v, nv, kw, nkw, &o, &fs, &specs));
  CHECK_OK(tkb_registry_standardize(i, "cpu", 7, &fr, &args));
  tkb_compiled *c = NULL;
  tkb_benchmark_data *bd = NULL;
  tkb_status st = fs ? tkb_compile_benchmark(fs, specs, &c) : TKB_ERR_INTERNAL;
  CHECK_MSG(st == TKB_OK, "%s: compile from specs: %s", name, tkb_last_error());
  if (!st) st = tkb_compiled_run_args(c, args, &one_call, &bd);
  CHECK_MSG(st == TKB_OK, "%s: run on seeded arguments: %s", name, tkb_last_error());
  if (!st) st = tkb_std_fn_call(fr, args, &want);
  CHECK_MSG(st == TKB_OK, "%s: the seeded call: %s", name, tkb_last_error());
  if (!st) {
    const tkb_arrays *got = fs->out_view;
    CHECK_MSG(tkb_arrays_count(got) == tkb_arrays_count(want), "%s: %zu outputs, want %zu", name,
              tkb_arrays_count(got), tkb_arrays_count(want));
    for (size_t k = 0; k < tkb_arrays_count(got) && k < tkb_arrays_count(want); k++)
      CHECK_MSG(tkb_array_equal(tkb_arrays_get(got, k), tkb_arrays_get(want, k)),
                "%s: output %zu ('%s') differs from the seeded f_std's", name, k,
                tkb_arrays_name(want, k));
  }
  tkb_benchmark_data_free(bd);
  tkb_compiled_free(c);
  tkb_std_fn_free(fs);
  tkb_arrays_free(specs);
  tkb_std_fn_free(fr);
  tkb_arrays_free(args);
}

static void test_shipped_ops(void) {
  CHECK_OK(tkb_register_builtin_ops());
  const size_t n = tkb_registry_count();
  /* each op's smallest cpu-tagged spec */
  const char *ops[16], *smallest[16];
  int64_t best[16];
  int n_ops = 0;
  for (size_t i = 0; i < n; i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (!tkb_registry_has_tag(i, "cpu") || d->mode != TKB_MODE_FORWARD || strcmp(d->impl_name, "reference"))
      continue;
    int k = 0;
    while (k < n_ops && strcmp(ops[k], d->op)) k++;
    if (k == n_ops && n_ops < 16) {
      ops[n_ops] = d->op;
      best[n_ops++] = INT64_MAX;
    }
    const int64_t m = numel_of(i);
    if (k < n_ops && m < best[k]) {
      best[k] = m;
      smallest[k] = d->name;
    }
  }
  int checked = 0;
  for (size_t i = 0; i < n; i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (strcmp(d->device_kind, "cpu") || d->mode == TKB_MODE_VJP) continue;
    /* the sanitizer tree: the fast implementations in forward and forward_and_vjp (the
     * float64 references run many times slower there) */
    if (check_quick() && (!strcmp(d->impl_name, "reference") || d->mode == TKB_MODE_FORWARD_RES))
      continue;
    int k = 0;
    while (k < n_ops && strcmp(ops[k], d->op)) k++;
    if (k == n_ops || strcmp(d->name, smallest[k])) continue;
    check_entry(i);
    checked++;
  }
  printf("%d entries compiled from specs and run on seeded arguments\n", checked);
  CHECK(checked >= (check_quick() ? 5 * 2 : 5 * 3 * 2)); /* five ops, three modes, two impls */
  tkb_registry_clear();
}

int main(void) {
  test_toy();
  test_shipped_ops();
  return CHECK_DONE();
}
