/*
 * init_override.c - `--init ARG=DIST`: the data distribution of the selected entries'
 * abstract arrays chosen on the command line (the seed's "data distribution": a product
 * of zeros runs faster than one of random data, subnormal inputs slow many CPUs down).
 *
 * DIST is normal(mean,std), uniform(lo,hi), constant(v), zeros, ones, subnormal (uniform
 * over the dtype's subnormal range, both signs) or default (the dtype's rule). ARG names a
 * parameter, or * for every floating-point abstract array that keeps the default rule
 * (an op's own initializers, such as ragged_dot's group sizes or the loss's labels, are
 * what make its inputs valid, so * leaves them alone). A named parameter must be an
 * abstract array where it exists, and a normal distribution needs a floating-point one:
 * anything else is refused with the entry, the parameter and why.
 */
#include "bind.h"
#include "runner.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool parse_numbers(const char *s, const char *name, int count, double *out) {
  size_t len = strlen(name);
  if (strncmp(s, name, len) != 0 || s[len] != '(') return false;
  const char *p = s + len + 1;
  for (int k = 0; k < count; k++) {
    char *end;
    out[k] = strtod(p, &end);
    if (end == p || !isfinite(out[k])) return false;
    while (*end == ' ') end++;
    if (*end != (k + 1 < count ? ',' : ')')) return false;
    p = end + 1;
    while (*p == ' ') p++;
  }
  return *p == '\0';
}

tkb_status tkb__init_override_parse(const char *text, tkb__init_override *out) {
  *out = (tkb__init_override){.init = {.kind = TKB_INIT_DEFAULT}};
  const char *eq = text ? strchr(text, '=') : NULL;
  if (!eq || eq == text || (size_t)(eq - text) >= sizeof out->arg)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "--init \"%s\": give ARG=DIST, ARG a parameter's "
                         "name or * (every floating-point abstract array)", text ? text : "(null)");
  memcpy(out->arg, text, (size_t)(eq - text));
  snprintf(out->text, sizeof out->text, "%s", text);
  const char *d = eq + 1;
  double v[2];
  if (!strcmp(d, "default")) out->init.kind = TKB_INIT_DEFAULT;
  else if (!strcmp(d, "zeros")) out->init = TKB_INIT_CONSTANT_(0);
  else if (!strcmp(d, "ones")) out->init = TKB_INIT_CONSTANT_(1);
  else if (!strcmp(d, "subnormal")) out->subnormal = true, out->init.kind = TKB_INIT_UNIFORM;
  else if (parse_numbers(d, "constant", 1, v)) out->init = TKB_INIT_CONSTANT_(v[0]);
  else if (parse_numbers(d, "normal", 2, v) && v[1] >= 0) out->init = TKB_INIT_NORMAL_(v[0], v[1]);
  else if (parse_numbers(d, "uniform", 2, v) && v[1] > v[0]) out->init = TKB_INIT_UNIFORM_(v[0], v[1]);
  else
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "--init %s: \"%s\" is no distribution; give "
                         "normal(mean,std) with std >= 0, uniform(lo,hi) with lo < hi, constant(v), "
                         "zeros, ones, subnormal or default", text, d);
  return TKB_OK;
}

/* The smallest positive normal value of a floating-point dtype: below it lie the
 * subnormals. */
static double smallest_normal(tkb_dtype dt) {
  switch (dt) {
  case TKB_FLOAT16: return 6.103515625e-05;
  case TKB_FLOAT64: return DBL_MIN;
  default: return FLT_MIN; /* float32 and bfloat16 share float32's exponent */
  }
}

/* The override for parameter p of the bound call, or NULL: the last one given that names
 * it, else the last *. */
static const tkb__init_override *override_for(const char *param, const tkb__init_override *ov, size_t n) {
  const tkb__init_override *star = NULL;
  for (size_t k = n; k-- > 0;) {
    if (!strcmp(ov[k].arg, param)) return &ov[k];
    if (!star && !strcmp(ov[k].arg, "*")) star = &ov[k];
  }
  return star;
}

/* Applies the overrides to the bound values in place (their init pointers into inits[],
 * one per parameter); TKB_ERR_INVALID_ARGUMENT naming what does not apply. */
static tkb_status apply(const tkb_benchmark_def *d, tkb_value *bound, tkb_init *inits,
                        const tkb__init_override *ov, size_t n) {
  const tkb_fn *f = d->fn;
  for (size_t p = 0; p < f->n_params; p++) {
    const char *name = f->params[p].name;
    const tkb__init_override *o = override_for(name, ov, n);
    if (!o) continue;
    const bool named = strcmp(o->arg, "*") != 0;
    tkb_value *v = &bound[p];
    if (v->tag != TKB_VALUE_ABSTRACT) {
      if (!named || v->tag == TKB_VALUE_NONE) continue;
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "--init %s: %s's argument %s is %s, not an abstract "
                           "array: only arrays that tkbench fills take a distribution", o->text, f->name, name,
                           v->tag == TKB_VALUE_ARRAY ? "a concrete array" : "a static value");
    }
    const bool is_float = tkb_dtype_is_float(v->spec.dtype);
    if (!named && (!is_float || v->init)) continue;
    if (!is_float && (o->init.kind == TKB_INIT_NORMAL || o->subnormal))
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "--init %s: %s's argument %s is %s, which takes no %s "
                           "distribution (uniform, constant, zeros, ones or default)", o->text, f->name,
                           name, tkb_dtype_name(v->spec.dtype), o->subnormal ? "subnormal" : "normal");
    inits[p] = o->init;
    /* 0.99: values just under the smallest normal would round up to it in the dtype */
    if (o->subnormal) inits[p].a = -0.99 * smallest_normal(v->spec.dtype), inits[p].b = -inits[p].a;
    v->init = o->init.kind == TKB_INIT_DEFAULT ? NULL : &inits[p];
  }
  return TKB_OK;
}

tkb_status tkb__registry_standardize_init(size_t i, const char *device, uint64_t seed,
                                          const tkb__init_override *ov, size_t n, tkb_std_fn **f_std,
                                          tkb_arrays **std_args) {
  if (!n) return tkb_registry_standardize(i, device, seed, f_std, std_args);
  *f_std = NULL;
  *std_args = NULL;
  const tkb_benchmark_def *d = tkb_registry_get(i);
  const tkb_value *args;
  const tkb_kwarg *kwargs;
  size_t na, nk;
  tkb_status st = tkb__entry_args(i, &args, &na, &kwargs, &nk);
  if (st) return st;
  tkb_value *bound;
  st = tkb__bind(d->fn, args, na, kwargs, nk, &bound);
  if (st) return st;
  const size_t np = d->fn->n_params;
  tkb_init *inits = calloc(np ? np : 1, sizeof *inits);
  tkb_kwarg *by_name = calloc(np ? np : 1, sizeof *by_name);
  if (!inits || !by_name) st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory applying --init");
  if (!st) st = apply(d, bound, inits, ov, n);
  /* every parameter by name: the binding above already placed them */
  for (size_t p = 0; !st && p < np; p++) by_name[p] = (tkb_kwarg){d->fn->params[p].name, bound[p]};
  tkb_std_opts o = {.mode = d->mode, .seed = seed, .device = device};
  if (!st) st = tkb_standardize_function(d->fn, NULL, 0, by_name, np, &o, f_std, std_args);
  free(by_name);
  free(inits);
  tkb__bound_free(bound, np);
  return st;
}

tkb_status tkb__init_overrides_check(const size_t *idx, size_t n_entries, const tkb__init_override *ov,
                                     size_t n) {
  for (size_t k = 0; k < n; k++) {
    if (!strcmp(ov[k].arg, "*")) continue;
    bool found = false;
    for (size_t e = 0; e < n_entries && !found; e++) {
      const tkb_fn *f = tkb_registry_get(idx[e])->fn;
      for (size_t p = 0; p < f->n_params && !found; p++) found = !strcmp(f->params[p].name, ov[k].arg);
    }
    if (!found)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "--init %s: no selected entry has an argument "
                           "named %s ('tkbench list --verbose' shows each entry's arguments)", ov[k].text,
                           ov[k].arg);
  }
  /* what does not apply (a concrete array, an integer normal) shows when binding */
  for (size_t e = 0; e < n_entries; e++) {
    const tkb_benchmark_def *d = tkb_registry_get(idx[e]);
    const tkb_value *args;
    const tkb_kwarg *kwargs;
    size_t na, nk;
    tkb_status st = tkb__entry_args(idx[e], &args, &na, &kwargs, &nk);
    tkb_value *bound = NULL;
    if (!st) st = tkb__bind(d->fn, args, na, kwargs, nk, &bound);
    tkb_init *inits = st ? NULL : calloc(d->fn->n_params ? d->fn->n_params : 1, sizeof *inits);
    if (!st && !inits) st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory checking --init");
    if (!st) st = apply(d, bound, inits, ov, n);
    free(inits);
    if (bound) tkb__bound_free(bound, d->fn->n_params);
    if (st == TKB_ERR_INVALID_ARGUMENT) return st;
  }
  return TKB_OK;
}
