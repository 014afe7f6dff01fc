/*
 * numerics_check.c - one registry entry against its op's reference: the entry with the
 * same op, spec name and mode whose impl is "reference". Both are standardized with the
 * same seed (the reference on the cpu), so Philox gives them the same inputs; both are
 * called once and every output is compared with tkb_array_diff_summary and judged by
 * the tolerance model of tkb_check_thresholds_for (src/core/tolerance.c): elementwise
 * allclose, the relative l2 error, and the fitted scale and bias.
 *
 * Gradients are compared for the same cotangents, so that each is held to its own
 * dtype: in vjp mode the entry gets the reference's cotangents; in forward_and_vjp mode,
 * whose cotangents are each side's own forward outputs (which differ in their last
 * bits), the reference's gradients are recomputed in its vjp mode for the entry's
 * forward outputs.
 */
#include "internal.h"
#include "std_fn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tkb_status tkb_registry_find_reference(size_t entry, size_t *ref) {
  const tkb_benchmark_def *d = tkb_registry_get(entry);
  if (!d || !ref)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_registry_find_reference: %s (entry %zu of %zu registered)",
                         !d ? "no such entry" : "ref is NULL", entry, tkb_registry_count());
  /* by name: a scan per entry would make checking the suite quadratic */
  char name[512];
  snprintf(name, sizeof name, "%s_%s_reference", d->name, tkb_mode_name(d->mode));
  size_t i;
  if (tkb_registry_find(name, &i) == TKB_OK && strcmp(tkb_registry_get(i)->op, d->op) == 0) {
    *ref = i;
    return TKB_OK;
  }
  return tkb_set_error(TKB_ERR_NOT_FOUND,
                       "%s has no reference: no entry '%s_%s_reference' of op '%s' is registered",
                       tkb_registry_full_name(entry), d->name, tkb_mode_name(d->mode), d->op);
}

void tkb_check_result_free(tkb_check_result *r) {
  if (!r) return;
  for (int i = 0; i < r->n_outputs; i++) free((char *)r->outputs[i].name);
  free(r->outputs);
  free((char *)r->name);
  free((char *)r->reference_name);
  free(r);
}

/* Rank of a float dtype's precision: lower is coarser (tolerances follow the coarser). */
static int precision_rank(tkb_dtype dt) {
  switch (dt) {
    case TKB_FLOAT8_E5M2: return 1;
    case TKB_FLOAT8_E4M3FN: return 2;
    case TKB_BFLOAT16: return 3;
    case TKB_FLOAT16: return 4;
    case TKB_FLOAT32: return 5;
    case TKB_FLOAT64: return 6;
    default: return 0; /* integers, bool: exact */
  }
}

/* Root mean square of the finite values of e (0 when none), and how many there are. */
static double rms_finite(const tkb_array *e, int64_t *n) {
  double sum = 0;
  *n = 0;
  for (int64_t i = 0; i < e->numel; i++) {
    const double v = tkb_array_get_f64(e, i);
    if (!isfinite(v)) continue;
    sum += v * v;
    ++*n;
  }
  return *n ? sqrt(sum / (double)*n) : 0.0;
}

/* Copies src[k] into dst[k] for k < count (across devices): the entry gets the
 * reference's cotangents (vjp mode), or the reference the entry's (forward_and_vjp).
 * `who` names the side that receives them. */
static tkb_status give_cotangents(tkb_arrays *dst, const tkb_arrays *src, size_t count,
                                  const char *who, const char *whose) {
  for (size_t k = 0; k < count; k++) {
    tkb_status st = tkb_array_copy_into(tkb_arrays_get(dst, k), tkb_arrays_get(src, k));
    if (st) {
      char msg[600];
      snprintf(msg, sizeof msg, "%s", tkb_last_error());
      return tkb_set_error(st, "%s: giving it %s cotangent %zu ('%s'): %s", who, whose, k,
                           tkb_arrays_name(dst, k), msg);
    }
  }
  return TKB_OK;
}

/* Checks that the first n arrays of a and r have the same specs (and values, with
 * compare_values; tkb_array_equal reads device arrays). `what` says what they are. */
static tkb_status same_arrays(const tkb_arrays *a, const tkb_arrays *r, size_t n,
                              const char *entry, const char *ref, const char *what,
                              bool compare_values) {
  for (size_t k = 0; k < n; k++) {
    const tkb_array *x = tkb_arrays_get(a, k), *y = tkb_arrays_get(r, k);
    char xs[160], ys[160];
    tkb_spec_format(&x->spec, xs, sizeof xs);
    tkb_spec_format(&y->spec, ys, sizeof ys);
    if (!tkb_spec_equal(&x->spec, &y->spec))
      return tkb_set_error(TKB_ERR_BAD_SHAPE, "%s and its reference %s disagree on %s %zu ('%s'): %s vs %s",
                           entry, ref, what, k, tkb_arrays_name(a, k), xs, ys);
    if (compare_values && !tkb_array_equal(x, y))
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "%s and its reference %s were given different values for %s %zu "
                           "('%s', %s): register both with the same arguments and initializers",
                           entry, ref, what, k, tkb_arrays_name(a, k), xs);
  }
  return TKB_OK;
}

/* Checks that the entry and its reference were given the same arguments. */
static tkb_status same_args(const tkb_arrays *a, const tkb_arrays *r, const char *entry,
                            const char *ref, bool compare_values) {
  if (tkb_arrays_count(a) != tkb_arrays_count(r))
    return tkb_set_error(TKB_ERR_BAD_SHAPE, "%s takes %zu arrays but its reference %s takes %zu",
                         entry, tkb_arrays_count(a), ref, tkb_arrays_count(r));
  return same_arrays(a, r, tkb_arrays_count(a), entry, ref, "argument", compare_values);
}

/* Appends cpu copies of src[from, from + count) to dst, with their names. */
static tkb_status host_copies(tkb_arrays *dst, const tkb_arrays *src, size_t from, size_t count) {
  for (size_t k = from; k < from + count; k++) {
    tkb_array *copy = NULL;
    tkb_status st = tkb_array_copy(tkb_arrays_get(src, k), tkb__cpu_device(), &copy);
    if (!st) st = tkb_arrays_push(dst, copy, tkb_arrays_name(src, k));
    if (st) {
      tkb_array_free(copy);
      return st;
    }
  }
  return TKB_OK;
}

/* Registry entry i standardized in `mode` rather than its own (the reference's vjp for a
 * forward_and_vjp check). */
static tkb_status standardize_as(size_t i, tkb_mode mode, uint64_t seed, tkb_std_fn **f,
                                 tkb_arrays **args) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  const tkb_value *v = d->args;
  const tkb_kwarg *kw = d->kwargs;
  size_t nv = d->n_args, nkw = d->n_kwargs;
  if (d->factory) {
    tkb_status st = d->factory(d->user, &v, &nv, &kw, &nkw);
    if (st) return st;
  }
  tkb_std_opts o = {.mode = mode, .seed = seed, .device = "cpu"};
  return tkb_standardize_function(d->fn, v, nv, kw, nkw, &o, f, args);
}

/* forward, forward_res and vjp: both sides called on the same arguments (vjp: the same
 * cotangents). actual and expected get cpu copies of every output. */
static tkb_status run_same_args(size_t entry, size_t ref, const tkb_check_opts *o,
                                tkb_arrays *actual, tkb_arrays *expected) {
  const char *name = tkb_registry_full_name(entry), *ref_name = tkb_registry_full_name(ref);
  const bool vjp = tkb_registry_get(entry)->mode == TKB_MODE_VJP;
  tkb_std_fn *fr = NULL, *fe = NULL;
  tkb_arrays *ar = NULL, *ae = NULL, *outr = NULL, *oute = NULL;
  tkb_status st = tkb_registry_standardize(ref, "cpu", o->seed, &fr, &ar);
  if (!st) st = tkb_std_fn_call(fr, ar, &outr);
  if (!st) st = tkb_registry_standardize(entry, o->device, o->seed, &fe, &ae);
  /* in vjp mode the std args are cotangents, each side's own forward outputs */
  if (!st) st = same_args(ae, ar, name, ref_name, !vjp);
  if (!st && vjp) st = give_cotangents(ae, ar, tkb_arrays_count(ar), name, "the reference's");
  if (!st) st = tkb_std_fn_call(fe, ae, &oute);
  if (!st && tkb_arrays_count(oute) != tkb_arrays_count(outr))
    st = tkb_set_error(TKB_ERR_BAD_SHAPE, "%s returns %zu arrays but its reference %s returns %zu",
                       name, tkb_arrays_count(oute), ref_name, tkb_arrays_count(outr));
  if (!st) st = host_copies(actual, oute, 0, tkb_arrays_count(oute));
  if (!st) st = host_copies(expected, outr, 0, tkb_arrays_count(outr));
  tkb_std_fn_free(fe);
  tkb_arrays_free(ae);
  tkb_std_fn_free(fr);
  tkb_arrays_free(ar);
  return st;
}

/* forward_and_vjp: the entry's forward outputs against the reference's, and its
 * gradients against the reference's for the entry's own forward outputs as cotangents
 * (the reference standardized in vjp mode, whose std args are its forward outputs). */
static tkb_status run_forward_and_vjp(size_t entry, size_t ref, const tkb_check_opts *o,
                                      tkb_arrays *actual, tkb_arrays *expected) {
  const char *name = tkb_registry_full_name(entry), *ref_name = tkb_registry_full_name(ref);
  tkb_std_fn *fp = NULL, *fe = NULL, *fv = NULL;
  tkb_arrays *ap = NULL, *ae = NULL, *oute = NULL, *cv = NULL, *gradr = NULL;
  /* the reference's own arguments, to check the entry got the same (standardizing
   * fills them; nothing is called) */
  tkb_status st = tkb_registry_standardize(ref, "cpu", o->seed, &fp, &ap);
  if (!st) st = tkb_registry_standardize(entry, o->device, o->seed, &fe, &ae);
  if (!st) st = same_args(ae, ap, name, ref_name, true);
  if (!st) st = tkb_std_fn_call(fe, ae, &oute);
  size_t n_out = 0;
  if (!st) {
    n_out = (size_t)fe->shapes.n_outputs;
    st = standardize_as(ref, TKB_MODE_VJP, o->seed, &fv, &cv);
  }
  if (!st && tkb_arrays_count(cv) != n_out)
    st = tkb_set_error(TKB_ERR_BAD_SHAPE, "%s has %zu forward outputs but its reference %s has %zu",
                       name, n_out, ref_name, tkb_arrays_count(cv));
  if (!st) st = same_arrays(oute, cv, n_out, name, ref_name, "forward output", false);
  /* the reference's forward outputs before they are replaced by the entry's */
  if (!st) st = host_copies(expected, cv, 0, n_out);
  if (!st) st = give_cotangents(cv, oute, n_out, ref_name, "the checked entry's");
  if (!st) st = tkb_std_fn_call(fv, cv, &gradr);
  if (!st && tkb_arrays_count(oute) != n_out + tkb_arrays_count(gradr))
    st = tkb_set_error(TKB_ERR_BAD_SHAPE, "%s returns %zu arrays but its reference %s returns %zu",
                       name, tkb_arrays_count(oute), ref_name, n_out + tkb_arrays_count(gradr));
  if (!st) st = host_copies(expected, gradr, 0, tkb_arrays_count(gradr));
  if (!st) st = host_copies(actual, oute, 0, tkb_arrays_count(oute));
  tkb_std_fn_free(fv);
  tkb_arrays_free(cv);
  tkb_std_fn_free(fe);
  tkb_arrays_free(ae);
  tkb_std_fn_free(fp);
  tkb_arrays_free(ap);
  return st;
}

/* One criterion: |value| (or value) against threshold. */
static tkb_check_criterion criterion(double value, double threshold, bool judged, bool magnitude) {
  const double v = magnitude ? fabs(value) : value;
  return (tkb_check_criterion){.value = value, .threshold = threshold, .judged = judged,
                               .passed = !judged || v <= threshold};
}

/* Compares one output and judges it. */
static tkb_status judge_output(const tkb_array *a, const tkb_array *e, const tkb_check_opts *o,
                               tkb_check_output *c) {
  c->spec = a->spec;
  c->expected_spec = e->spec;
  const tkb_dtype coarser = precision_rank(a->spec.dtype) <= precision_rank(e->spec.dtype)
                                ? a->spec.dtype : e->spec.dtype;
  int64_t n;
  const double rms = rms_finite(e, &n);
  tkb_check_thresholds t;
  tkb_status st = tkb_check_thresholds_for(coarser, n, &t);
  if (st) return st;
  double rtol = o->rtol, atol = o->atol;
  c->scale = 1.0;
  if (!o->fixed_tolerance) {
    c->scale = rms > 0 ? rms : 1.0;
    rtol = t.rtol;
    atol = t.atol_rel * c->scale;
  }
  st = tkb_array_diff_summary(a, e, rtol, atol, &c->diff);
  if (!st) st = tkb_array_numeric_summary(a, &c->actual_summary);
  if (!st) st = tkb_array_numeric_summary(e, &c->expected_summary);
  if (st) return st;
  const tkb_diff_summary *d = &c->diff;
  /* a NaN or infinity facing anything else fails allclose whatever the finite ratio */
  const double worst = d->allclose || d->max_tolerance_ratio > 1 ? d->max_tolerance_ratio : INFINITY;
  c->criteria[TKB_CRITERION_ALLCLOSE] = (tkb_check_criterion){
      .value = worst, .threshold = 1.0, .judged = true, .passed = d->allclose};
  /* The aggregates need a size to be relative to: an expected output of zeros (or with
   * no finite element) has none, and allclose alone judges it. */
  const bool judged = !o->fixed_tolerance && d->n_finite > 0 && d->rms_expected > 0;
  c->criteria[TKB_CRITERION_REL_L2] = criterion(d->rel_l2_diff, t.rel_l2, judged, false);
  c->criteria[TKB_CRITERION_SCALE] = criterion(d->scale, t.scale, judged, true);
  c->criteria[TKB_CRITERION_BIAS] = criterion(d->bias, t.bias, judged, true);
  c->failed = TKB_CRITERION_COUNT;
  for (int k = TKB_CRITERION_COUNT - 1; k >= 0; k--)
    if (!c->criteria[k].passed) c->failed = (tkb_criterion)k;
  c->passed = c->failed == TKB_CRITERION_COUNT;
  return TKB_OK;
}

tkb_status tkb_check_entry(size_t entry, const tkb_check_opts *opts, tkb_check_result **out) {
  tkb__clear_error();
  const tkb_benchmark_def *d = tkb_registry_get(entry);
  if (!d || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_check_entry: %s (entry %zu of %zu)",
                         !d ? "no such entry" : "out is NULL", entry, tkb_registry_count());
  tkb_check_opts o = opts ? *opts : (tkb_check_opts){0};
  if (o.fixed_tolerance && (!(o.rtol >= 0) || !(o.atol >= 0) || isinf(o.rtol) || isinf(o.atol)))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_check_entry: rtol = %g, atol = %g; both must be finite and >= 0",
                         o.rtol, o.atol);
  size_t ref;
  tkb_status st = tkb_registry_find_reference(entry, &ref);
  if (st) return st;
  const char *name = tkb_registry_full_name(entry), *ref_name = tkb_registry_full_name(ref);

  tkb_arrays *actual = NULL, *expected = NULL;
  tkb_check_result *r = NULL;
  st = tkb_arrays_new(&actual);
  if (!st) st = tkb_arrays_new(&expected);
  if (!st)
    st = d->mode == TKB_MODE_FORWARD_AND_VJP && entry != ref
             ? run_forward_and_vjp(entry, ref, &o, actual, expected)
             : run_same_args(entry, ref, &o, actual, expected);
  if (!st) {
    r = calloc(1, sizeof *r);
    if (r) r->outputs = calloc(tkb_arrays_count(expected) + 1, sizeof *r->outputs);
    if (r) r->name = tkb__strdup(name);
    if (r) r->reference_name = tkb__strdup(ref_name);
    if (!r || !r->outputs || !r->name || !r->reference_name)
      st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory checking %s", name);
  }
  if (!st) {
    r->entry = entry;
    r->reference = ref;
    r->mode = d->mode;
    r->passed = true;
  }
  for (size_t k = 0; !st && k < tkb_arrays_count(expected); k++) {
    tkb_check_output *c = &r->outputs[k];
    c->name = tkb__strdup(tkb_arrays_name(actual, k)); /* the reference's in forward_and_vjp
                                                          are its cotangents' ("dy") */
    r->n_outputs = (int)k + 1;
    if (!c->name) {
      st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory checking %s", name);
      break;
    }
    st = judge_output(tkb_arrays_get(actual, k), tkb_arrays_get(expected, k), &o, c);
    if (st) {
      char msg[800];
      snprintf(msg, sizeof msg, "%s", tkb_last_error());
      st = tkb_set_error(st, "%s: output %zu ('%s'): %s", name, k, c->name, msg);
      break;
    }
    r->passed = r->passed && c->passed;
  }
  tkb_arrays_free(actual);
  tkb_arrays_free(expected);
  if (st) {
    tkb_check_result_free(r);
    return st;
  }
  *out = r;
  return TKB_OK;
}
