/*
 * fuzz_standardize.c - standardization over the shipped ops: an entry of the suite's cpu
 * set is picked, some of its arguments are changed (a dimension, a dtype, a rank, a
 * static value, an optional array left out, another mode), and the result is
 * standardized with specs only, then, when everything it would hold is small (64 KiB: the
 * references are plain loops, slow under the sanitizers), for real
 * and called once. An op's infer must refuse what its kernel cannot take, so that no
 * input reaches a kernel that reads or writes out of bounds.
 */
#include "fuzz.h"

#include "std_fn.h"

#include <math.h>

/* Bytes of the input, read in turn (zeros once it is used up). */
typedef struct bytes {
  const uint8_t *p;
  size_t n;
} bytes;

static unsigned take(bytes *b) {
  if (!b->n) return 0;
  b->n--;
  return *b->p++;
}

static int64_t take_int(bytes *b) {
  switch (take(b) % 8) {
    case 0: return INT64_MAX;
    case 1: return INT64_MIN;
    case 2: return -(int64_t)take(b);
    case 3: return (int64_t)take(b) << 24;
    default: return take(b) % 70;
  }
}

static const tkb_dtype dtypes[] = {TKB_FLOAT32, TKB_BFLOAT16, TKB_FLOAT16, TKB_FLOAT64,
                                   TKB_INT32, TKB_INT8, TKB_BOOL, TKB_INT64};
static const char *const strings[] = {"", "none", "mean", "sum", "layer", "rms", "xla",
                                      "triton", "bhtd", "btnh", "\xff"};

/* One change to value v of parameter p. */
static void mutate(bytes *b, const tkb_param *p, tkb_value *v) {
  const unsigned what = take(b) % 6;
  if (v->tag == TKB_VALUE_ABSTRACT) {
    tkb_spec *s = &v->spec;
    if (what == 0 && s->rank > 0) s->shape[take(b) % s->rank] = take(b) % 20;
    else if (what == 1) s->dtype = dtypes[take(b) % 8];
    else if (what == 2 && s->rank < TKB_MAX_RANK) s->shape[s->rank++] = 1 + take(b) % 4;
    else if (what == 3 && s->rank > 0) s->rank--;
    else if (what == 4 && p->default_value.tag == TKB_VALUE_NONE) *v = (tkb_value){.tag = TKB_VALUE_NONE};
    else if (s->rank > 0) s->shape[take(b) % s->rank] += 1;
  } else if (v->tag == TKB_VALUE_INT) {
    v->i = take_int(b);
  } else if (v->tag == TKB_VALUE_FLOAT) {
    const double f[] = {0, -1, 1e-30, 1e30, 0.5, -0.0, INFINITY, NAN};
    v->f = f[take(b) % 8];
  } else if (v->tag == TKB_VALUE_BOOL) {
    v->b = !v->b;
  } else if (v->tag == TKB_VALUE_STRING) {
    v->s = strings[take(b) % (sizeof strings / sizeof *strings)];
  } else if (v->tag == TKB_VALUE_NONE && p->kind == TKB_KIND_ARRAY) {
    *v = (tkb_value){.tag = TKB_VALUE_ABSTRACT, .spec = {.dtype = TKB_FLOAT32, .rank = 1, .shape = {4}}};
  }
}

/* Bytes an f_std would hold: its inputs (the abstract arguments), outputs and residuals. */
static size_t footprint(const tkb_std_fn *f, const tkb_value *args, size_t na, const tkb_kwarg *kw,
                        size_t nk) {
  size_t total = 0, b;
  for (size_t k = 0; k < na + nk; k++) {
    const tkb_value *v = k < na ? &args[k] : &kw[k - na].value;
    if (v->tag == TKB_VALUE_ABSTRACT && tkb_spec_nbytes(&v->spec, &b) == TKB_OK) total += b;
  }
  for (int i = 0; i < f->shapes.n_outputs; i++)
    if (tkb_spec_nbytes(&f->shapes.outputs[i], &b) == TKB_OK) total += b;
  for (int i = 0; i < f->shapes.n_residuals; i++)
    if (tkb_spec_nbytes(&f->shapes.residuals[i], &b) == TKB_OK) total += b;
  return total;
}

static size_t *entries, n_entries;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (tkb_register_builtin_ops() != TKB_OK) abort();
  tkb_set_num_threads(1);
  entries = malloc(tkb_registry_count() * sizeof *entries);
  for (size_t i = 0; i < tkb_registry_count(); i++)
    if (tkb_registry_has_tag(i, "cpu") && strcmp(tkb_registry_get(i)->device_kind, "cpu") == 0)
      entries[n_entries++] = i;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bytes b = {data, size};
  if (size < 2 || !n_entries) return 0;
  const tkb_benchmark_def *d = tkb_registry_get(entries[(take(&b) << 8 | take(&b)) % n_entries]);
  const tkb_value *args0 = d->args;
  const tkb_kwarg *kw0 = d->kwargs;
  size_t na = d->n_args, nk = d->n_kwargs;
  if (d->factory && d->factory(d->user, &args0, &na, &kw0, &nk) != TKB_OK) return 0;
  tkb_value args[16];
  tkb_kwarg kwargs[16];
  if (na > 16 || nk > 16) return 0;
  if (na) memcpy(args, args0, na * sizeof *args);
  if (nk) memcpy(kwargs, kw0, nk * sizeof *kwargs);
  const tkb_fn *fn = d->fn;
  for (unsigned changes = take(&b) % 4; changes > 0; changes--) {
    size_t k = take(&b) % (na + nk ? na + nk : 1);
    if (k < na && k < fn->n_params) mutate(&b, &fn->params[k], &args[k]);
    else if (k >= na && k - na < nk) {
      const tkb_param *p = &fn->params[0];
      for (size_t i = 0; i < fn->n_params; i++)
        if (kwargs[k - na].name && !strcmp(fn->params[i].name, kwargs[k - na].name)) p = &fn->params[i];
      mutate(&b, p, &kwargs[k - na].value);
    }
  }
  tkb_std_opts o = {.mode = take(&b) % 2 ? d->mode : (tkb_mode)(take(&b) % 4), .seed = take(&b),
                    .no_init = true};
  if (getenv("FUZZ_VERBOSE")) { /* what an input stands for, to read a finding */
    fprintf(stderr, "%s_%s mode %s:", d->name, d->impl_name, tkb_mode_name(o.mode));
    for (size_t k = 0; k < na + nk; k++) {
      const tkb_value *v = k < na ? &args[k] : &kwargs[k - na].value;
      char text[128] = "";
      if (v->tag == TKB_VALUE_ABSTRACT) tkb_spec_format(&v->spec, text, sizeof text);
      else if (v->tag == TKB_VALUE_INT) snprintf(text, sizeof text, "%lld", (long long)v->i);
      else if (v->tag == TKB_VALUE_FLOAT) snprintf(text, sizeof text, "%g", v->f);
      else snprintf(text, sizeof text, "tag %d", (int)v->tag);
      fprintf(stderr, " %s=%s", k < na ? fn->params[k].name : kwargs[k - na].name, text);
    }
    fputc('\n', stderr);
  }
  tkb_std_fn *f = NULL;
  tkb_arrays *a = NULL;
  if (tkb_standardize_function(fn, args, na, kwargs, nk, &o, &f, &a) == TKB_OK) {
    const bool small = footprint(f, args, na, kwargs, nk) <= ((size_t)64 << 10);
    tkb_std_fn_free(f);
    tkb_arrays_free(a);
    f = NULL;
    a = NULL;
    o.no_init = false;
    if (small && tkb_standardize_function(fn, args, na, kwargs, nk, &o, &f, &a) == TKB_OK) {
      tkb_arrays *outs = NULL; /* borrowed from f */
      tkb_std_fn_call(f, a, &outs);
    }
  }
  tkb_std_fn_free(f);
  tkb_arrays_free(a);
  return 0;
}
