/*
 * numerics_check.c - one registry entry against its op's reference: the entry with the
 * same op, spec name and mode whose impl is "reference". Both are standardized with the
 * same seed (the reference on the cpu), so Philox gives them the same inputs; both are
 * called once and every output is compared with tkb_array_diff_summary at the
 * tolerances of its dtype (or the caller's).
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

/* Largest finite |e| of an array, or 1 when there is none (the atol scale). */
static double magnitude(const tkb_array *e) {
  double m = 0;
  for (int64_t i = 0; i < e->numel; i++) {
    double v = fabs(tkb_array_get_f64(e, i));
    if (isfinite(v) && v > m) m = v;
  }
  return m > 0 ? m : 1.0;
}

/* vjp mode: gives the entry the reference's cotangents (its std args), so that both
 * sides differentiate against the same ones (each side's own would be its own forward
 * outputs, which differ in the last bits). The reference's live on the cpu; the entry's
 * on its device, so the copy may cross devices. same_args has checked the specs. */
static tkb_status copy_cotangents(tkb_arrays *dst, const tkb_arrays *src, const char *entry) {
  for (size_t k = 0; k < tkb_arrays_count(dst) && k < tkb_arrays_count(src); k++) {
    tkb_status st = tkb_array_copy_into(tkb_arrays_get(dst, k), tkb_arrays_get(src, k));
    if (st) {
      char msg[600];
      snprintf(msg, sizeof msg, "%s", tkb_last_error());
      return tkb_set_error(st, "%s: giving it the reference's cotangent %zu ('%s'): %s", entry, k,
                           tkb_arrays_name(dst, k), msg);
    }
  }
  return TKB_OK;
}

/* Checks that the entry and its reference were given the same arguments (their bytes
 * too, on any two devices: tkb_array_equal reads device arrays). */
static tkb_status same_args(const tkb_arrays *a, const tkb_arrays *r, const char *entry,
                            const char *ref, bool compare_values) {
  if (tkb_arrays_count(a) != tkb_arrays_count(r))
    return tkb_set_error(TKB_ERR_BAD_SHAPE, "%s takes %zu arrays but its reference %s takes %zu",
                         entry, tkb_arrays_count(a), ref, tkb_arrays_count(r));
  for (size_t k = 0; k < tkb_arrays_count(a); k++) {
    const tkb_array *x = tkb_arrays_get(a, k), *y = tkb_arrays_get(r, k);
    char xs[160], ys[160];
    tkb_spec_format(&x->spec, xs, sizeof xs);
    tkb_spec_format(&y->spec, ys, sizeof ys);
    if (!tkb_spec_equal(&x->spec, &y->spec))
      return tkb_set_error(TKB_ERR_BAD_SHAPE,
                           "%s and its reference %s disagree on argument %zu ('%s'): %s vs %s",
                           entry, ref, k, tkb_arrays_name(a, k), xs, ys);
    if (compare_values && !tkb_array_equal(x, y))
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "%s and its reference %s were given different values for argument "
                           "%zu ('%s', %s): register both with the same arguments and "
                           "initializers",
                           entry, ref, k, tkb_arrays_name(a, k), xs);
  }
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

  tkb_std_fn *fr = NULL, *fe = NULL;
  tkb_arrays *ar = NULL, *ae = NULL, *outr = NULL, *oute = NULL, *host = NULL;
  tkb_check_result *r = NULL;
  const bool vjp = d->mode == TKB_MODE_VJP;
  st = tkb_registry_standardize(ref, "cpu", o.seed, &fr, &ar);
  if (!st) st = tkb_std_fn_call(fr, ar, &outr);
  if (!st) st = tkb_registry_standardize(entry, o.device, o.seed, &fe, &ae);
  /* in vjp mode the std args are cotangents, each side's own forward outputs */
  if (!st) st = same_args(ae, ar, name, ref_name, !vjp);
  if (!st && vjp) st = copy_cotangents(ae, ar, name);
  if (!st) st = tkb_std_fn_call(fe, ae, &oute);
  if (!st && tkb_arrays_count(oute) != tkb_arrays_count(outr))
    st = tkb_set_error(TKB_ERR_BAD_SHAPE, "%s returns %zu arrays but its reference %s returns %zu",
                       name, tkb_arrays_count(oute), ref_name, tkb_arrays_count(outr));
  /* outputs on another device come to the cpu to be compared */
  if (!st) st = tkb_arrays_new(&host);
  for (size_t k = 0; !st && k < tkb_arrays_count(oute); k++) {
    tkb_array *src = tkb_arrays_get(oute, k), *copy = NULL;
    st = tkb_array_copy(src, tkb__cpu_device(), &copy);
    if (!st) st = tkb_arrays_push(host, copy, tkb_arrays_name(oute, k));
    if (st) tkb_array_free(copy);
  }
  if (!st) {
    r = calloc(1, sizeof *r);
    if (r) r->outputs = calloc(tkb_arrays_count(outr) + 1, sizeof *r->outputs);
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
  for (size_t k = 0; !st && k < tkb_arrays_count(outr); k++) {
    const tkb_array *a = tkb_arrays_get(host, k), *e = tkb_arrays_get(outr, k);
    tkb_check_output *c = &r->outputs[k];
    c->name = tkb__strdup(tkb_arrays_name(outr, k));
    c->spec = a->spec;
    c->expected_spec = e->spec;
    r->n_outputs = (int)k + 1;
    if (!c->name) {
      st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory checking %s", name);
      break;
    }
    double rtol = o.rtol, atol = o.atol;
    c->scale = 1.0;
    if (!o.fixed_tolerance) {
      tkb_dtype coarser = precision_rank(a->spec.dtype) <= precision_rank(e->spec.dtype)
                              ? a->spec.dtype : e->spec.dtype;
      /* forward_and_vjp: the grads (the outputs after the forward's) are linear in the
       * cotangents, which are each side's OWN forward outputs: those differ in their
       * last bits (a bfloat16 y rounds a tie the other way), and the grads carry that
       * relative error, whatever their own dtype. So they are held to the coarsest
       * floating forward output's tolerance (a float32 dscale against bfloat16 y:
       * bfloat16's). vjp mode gives both sides the same cotangents and keeps the
       * grads' own tolerance: it checks their precision. */
      if (d->mode == TKB_MODE_FORWARD_AND_VJP && k >= (size_t)fr->shapes.n_outputs)
        for (int f = 0; f < fr->shapes.n_outputs; f++) {
          const tkb_dtype cot = tkb_arrays_get(outr, (size_t)f)->spec.dtype;
          if (precision_rank(cot) > 0 && precision_rank(cot) < precision_rank(coarser)) coarser = cot;
        }
      st = tkb_default_tolerance(coarser, &rtol, &atol);
      c->scale = magnitude(e);
      atol *= c->scale;
    }
    if (!st) st = tkb_array_diff_summary(a, e, rtol, atol, &c->diff);
    if (st) {
      char msg[800];
      snprintf(msg, sizeof msg, "%s", tkb_last_error());
      st = tkb_set_error(st, "%s: output %zu ('%s'): %s", name, k, tkb_arrays_name(outr, k), msg);
      break;
    }
    c->passed = c->diff.allclose;
    r->passed = r->passed && c->passed;
  }
  tkb_arrays_free(host);
  tkb_std_fn_free(fe);
  tkb_arrays_free(ae);
  tkb_std_fn_free(fr);
  tkb_arrays_free(ar);
  if (st) {
    tkb_check_result_free(r);
    return st;
  }
  *out = r;
  return TKB_OK;
}
