/*
 * standardize.c - Tokamax's standardize_function: bind the call, infer shapes, turn
 * every array argument into one entry of a flat list (filling abstract ones from
 * Philox), bake static values in, and set up the mode's computation.
 */
#include "bind.h"
#include "std_fn.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *tkb_mode_name(tkb_mode mode) {
  switch (mode) {
    case TKB_MODE_FORWARD: return "forward";
    case TKB_MODE_FORWARD_RES: return "forward_res";
    case TKB_MODE_VJP: return "vjp";
    case TKB_MODE_FORWARD_AND_VJP: return "forward_and_vjp";
  }
  return "invalid";
}

tkb_status tkb_mode_parse(const char *name, tkb_mode *out) {
  static const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_VJP,
                                   TKB_MODE_FORWARD_AND_VJP};
  for (size_t i = 0; name && i < TKB_ARRAY_LEN(modes); i++) {
    if (strcmp(name, tkb_mode_name(modes[i])) == 0) {
      *out = modes[i];
      return TKB_OK;
    }
  }
  return tkb_set_error(TKB_ERR_NOT_FOUND,
                       "mode \"%s\" is not a mode; expected forward, forward_res, vjp or "
                       "forward_and_vjp", name ? name : "(null)");
}

static bool mode_has_vjp(tkb_mode m) { return m == TKB_MODE_VJP || m == TKB_MODE_FORWARD_AND_VJP; }

static const char *output_name(const tkb_shapes *s, int i, char *buf, size_t cap) {
  if (s->output_names[i]) return s->output_names[i];
  snprintf(buf, cap, "out%d", i);
  return buf;
}

static const char *residual_name(const tkb_shapes *s, int i, char *buf, size_t cap) {
  if (s->residual_names[i]) return s->residual_names[i];
  snprintf(buf, cap, "res%d", i);
  return buf;
}

/* "axis=-1, epsilon=1e-06, subtract_mean=true": the static values baked into f_std. */
static char *format_statics(const tkb_fn *fn, const tkb_value *v) {
  size_t cap = 64, len = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  s[0] = '\0';
  for (size_t i = 0; i < fn->n_params; i++) {
    if (fn->params[i].kind == TKB_KIND_ARRAY) continue;
    char item[512];
    const char *name = fn->params[i].name;
    switch (v[i].tag) {
      case TKB_VALUE_INT: snprintf(item, sizeof item, "%s=%lld", name, (long long)v[i].i); break;
      case TKB_VALUE_FLOAT: snprintf(item, sizeof item, "%s=%g", name, v[i].f); break;
      case TKB_VALUE_BOOL: snprintf(item, sizeof item, "%s=%s", name, v[i].b ? "true" : "false"); break;
      case TKB_VALUE_STRING: snprintf(item, sizeof item, "%s='%s'", name, v[i].s); break;
      default: snprintf(item, sizeof item, "%s=None", name); break;
    }
    size_t need = len + strlen(item) + 3;
    if (need > cap) {
      while (cap < need) cap *= 2;
      char *t = realloc(s, cap);
      if (!t) { free(s); return NULL; }
      s = t;
    }
    len += (size_t)sprintf(s + len, "%s%s", len ? ", " : "", item);
  }
  return s;
}

/* What an f_std will hold, and its largest part (what a message about memory names). */
typedef struct footprint {
  size_t total;
  size_t largest;
  const char *what, *name; /* "argument", "x" */
  tkb_spec spec;
} footprint;

/* Adds a spec's bytes, saturating. */
static void add_bytes(footprint *fp, const tkb_spec *s, const char *what, const char *name) {
  size_t b = 0;
  tkb_spec_nbytes(s, &b);
  fp->total = (fp->total > SIZE_MAX - b) ? SIZE_MAX : fp->total + b;
  if (b > fp->largest || !fp->what) {
    fp->largest = b;
    fp->what = what;
    fp->name = name ? name : "?";
    fp->spec = *s;
  }
}

void tkb_std_fn_free(tkb_std_fn *f) {
  if (!f) return;
  if (f->compiled && f->fn->release) f->fn->release(f->state);
  for (int i = 0; i < TKB_MAX_OUTPUTS; i++) {
    tkb_array_free(f->outputs[i]);
    tkb_array_free(f->residuals[i]);
  }
  if (f->grads)
    for (int i = 0; i < f->n_grad_params; i++) tkb_array_free(f->grads[i]);
  free(f->grads);
  free(f->grad_param);
  tkb_arrays_free(f->out_view);
  tkb_arrays_free(f->primals);
  if (f->std_names)
    for (size_t i = 0; i < f->n_std; i++) free(f->std_names[i]);
  free(f->std_names);
  free(f->std_specs);
  free(f->std_param);
  free(f->as_params);
  free(f->statics);
  tkb__bound_free(f->values, f->fn->n_params);
  free(f);
}

/* Records the std args' specs and names, in the order they appear in std_args. */
static tkb_status set_std_layout(tkb_std_fn *f, const tkb_arrays *std_args) {
  f->n_std = tkb_arrays_count(std_args);
  size_t n = f->n_std ? f->n_std : 1;
  f->std_specs = calloc(n, sizeof *f->std_specs);
  f->std_names = calloc(n, sizeof *f->std_names);
  if (!f->std_specs || !f->std_names)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory standardizing %s", f->fn->name);
  for (size_t k = 0; k < f->n_std; k++) {
    f->std_specs[k] = tkb_arrays_get(std_args, k)->spec;
    f->std_names[k] = tkb__strdup(tkb_arrays_name(std_args, k));
    if (!f->std_names[k])
      return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory standardizing %s", f->fn->name);
  }
  return TKB_OK;
}

/* A header-only array (no data) for no_init's specs-only std args. */
static tkb_status abstract_array(const tkb_spec *spec, tkb_device *dev, tkb_array **out) {
  tkb_status st = tkb__array_header(spec, NULL, out);
  if (!st) (*out)->device = dev;
  return st;
}

/* tkb_array_new, whose failure (the device's memory) names what the array is for. */
static tkb_status named_new(const tkb_std_fn *f, const tkb_spec *spec, const char *what,
                            const char *name, tkb_array **out) {
  tkb_status st = tkb_array_new(f->device, spec, out);
  if (!st) return TKB_OK;
  char text[160], why[700];
  tkb_spec_format(spec, text, sizeof text);
  snprintf(why, sizeof why, "%s", tkb_last_error());
  return tkb_set_error(st, "%s '%s' of %s() (%s): %s", what, name ? name : "?",
                       f->fn->name ? f->fn->name : "function", text, why);
}

/* The primal arrays, one per non-None array parameter: abstract ones allocated and
 * filled from (seed, index), concrete ones copied onto the device. */
static tkb_status make_primals(tkb_std_fn *f, tkb_arrays *list) {
  const tkb_fn *fn = f->fn;
  size_t k = 0;
  for (size_t i = 0; i < fn->n_params; i++) {
    const tkb_value *v = &f->values[i];
    if (fn->params[i].kind != TKB_KIND_ARRAY || v->tag == TKB_VALUE_NONE) continue;
    tkb_array *a = NULL;
    tkb_status st;
    if (v->tag == TKB_VALUE_ARRAY) {
      st = tkb_array_copy(v->array, f->device, &a);
    } else if (f->no_init) {
      st = abstract_array(&v->spec, f->device, &a);
    } else {
      /* on any device, a callback initializer included (tkb__fill_call runs it on a cpu
       * array and copies that over) */
      st = named_new(f, &v->spec, "argument", fn->params[i].name, &a);
      if (!st) {
        static const tkb_init default_init = {.kind = TKB_INIT_DEFAULT};
        st = tkb__fill_call(a, v->init ? v->init : &default_init, f->seed, k, &f->args);
      }
    }
    if (!st) st = tkb_arrays_push(list, a, fn->params[i].name);
    if (st) {
      tkb_array_free(a);
      return st;
    }
    f->std_param[k++] = (int)i;
  }
  return TKB_OK;
}

tkb_status tkb__std_check_specs(const tkb_std_fn *f, const tkb_arrays *args) {
  size_t n = tkb_arrays_count(args);
  if (n != f->n_std)
    return tkb_set_error(TKB_ERR_BAD_SHAPE, "%s: f_std takes %zu arrays but %zu were given",
                         f->fn->name, f->n_std, n);
  for (size_t k = 0; k < n; k++) {
    const tkb_array *a = tkb_arrays_get(args, k);
    if (!a || !tkb_spec_equal(&a->spec, &f->std_specs[k])) {
      char want[160], got[160] = "NULL";
      tkb_spec_format(&f->std_specs[k], want, sizeof want);
      if (a) tkb_spec_format(&a->spec, got, sizeof got);
      return tkb_set_error(TKB_ERR_BAD_SHAPE, "%s: argument %zu ('%s') is %s but f_std expects %s",
                           f->fn->name, k, f->std_names[k], got, want);
    }
    if (a->device != f->device)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: argument %zu ('%s') is on %s but f_std runs on %s",
                           f->fn->name, k, f->std_names[k], tkb_device_name(a->device),
                           tkb_device_name(f->device));
  }
  return TKB_OK;
}

tkb_status tkb__std_check_args(const tkb_std_fn *f, const tkb_arrays *args) {
  tkb_status st = tkb__std_check_specs(f, args);
  for (size_t k = 0; !st && k < f->n_std; k++) {
    const tkb_array *a = tkb_arrays_get(args, k);
    if (!a->data && a->nbytes)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "%s: argument %zu ('%s') has no data (standardized with no_init); "
                           "initialize it before calling f_std", f->fn->name, k, f->std_names[k]);
  }
  return st;
}

void tkb__std_bind_call(tkb_std_fn *f, const tkb_arrays *args) {
  for (size_t k = 0; k < f->n_std; k++) {
    const tkb_array *a = tkb_arrays_get(args, k);
    if (f->mode == TKB_MODE_VJP) {
      f->cotangents[k] = a;
    } else {
      f->values[f->std_param[k]].tag = TKB_VALUE_ARRAY;
      f->values[f->std_param[k]].array = a;
    }
  }
}

tkb_status tkb__std_lower(tkb_std_fn *f) {
  tkb_shapes s = {0};
  tkb_status st = f->fn->infer(&f->args, &s);
  if (st) return st;
  if (s.n_outputs != f->shapes.n_outputs || s.n_residuals != f->shapes.n_residuals)
    return tkb_set_error(TKB_ERR_INTERNAL, "%s: infer gave a different number of outputs on the "
                         "same shapes", f->fn->name);
  return TKB_OK;
}

static tkb_status alloc_list(const tkb_std_fn *f, const tkb_spec *specs, const char *const *names,
                             const char *what, int n, tkb_array **out) {
  for (int i = 0; i < n; i++) {
    if (out[i]) continue;
    tkb_status st = named_new(f, &specs[i], what, names[i], &out[i]);
    if (st) return st;
  }
  return TKB_OK;
}

/* Builds the borrowed list of what f_std returns, in the mode's order. */
static tkb_status build_out_view(tkb_std_fn *f) {
  tkb_status st = tkb__arrays_new_borrowed(&f->out_view);
  if (st) return st;
  char buf[32], name[160];
  if (f->mode != TKB_MODE_VJP)
    for (int i = 0; i < f->shapes.n_outputs && !st; i++)
      st = tkb_arrays_push(f->out_view, f->outputs[i], output_name(&f->shapes, i, buf, sizeof buf));
  if (f->mode == TKB_MODE_FORWARD_RES)
    for (int i = 0; i < f->shapes.n_residuals && !st; i++)
      st = tkb_arrays_push(f->out_view, f->residuals[i], residual_name(&f->shapes, i, buf, sizeof buf));
  if (mode_has_vjp(f->mode))
    for (int g = 0; g < f->n_grad_params && !st; g++) {
      if (!f->grads[g]) continue;
      snprintf(name, sizeof name, "d%s", f->fn->params[f->grad_param[g]].name);
      st = tkb_arrays_push(f->out_view, f->grads[g], name);
    }
  return st;
}

tkb_status tkb__std_compile(tkb_std_fn *f) {
  if (f->compiled) return TKB_OK;
  int64_t t0 = tkb__now_ns();
  size_t bytes_before = tkb_device_bytes_in_use(f->device);
  tkb_status st = TKB_OK;
  void *state = NULL;
  if (f->fn->prepare) {
    st = f->fn->prepare(&f->args, &state);
    if (st) return st;
  }
  f->state = state;
  f->compiled = true; /* from here on tkb_std_fn_free releases the state */
  st = alloc_list(f, f->shapes.outputs, f->shapes.output_names, "output", f->shapes.n_outputs,
                  f->outputs);
  if (!st && f->mode != TKB_MODE_FORWARD)
    st = alloc_list(f, f->shapes.residuals, f->shapes.residual_names, "residual",
                    f->shapes.n_residuals, f->residuals);
  if (!st && mode_has_vjp(f->mode)) {
    for (int g = 0; g < f->n_grad_params && !st; g++) {
      const tkb_value *v = &f->values[f->grad_param[g]];
      if (v->tag == TKB_VALUE_NONE) continue;
      const char *pname = f->fn->params[f->grad_param[g]].name;
      st = named_new(f, tkb_args_spec(&f->args, pname), "gradient of", pname, &f->grads[g]);
    }
  }
  if (!st && !f->out_view) st = build_out_view(f);
  f->compile_time_ms = (double)(tkb__now_ns() - t0) / 1e6;
  size_t bytes_after = tkb_device_bytes_in_use(f->device);
  f->resident_bytes += bytes_after > bytes_before ? bytes_after - bytes_before : 0;
  return st;
}

tkb_status tkb__std_invoke(tkb_std_fn *f) {
  const tkb_fn *fn = f->fn;
  switch (f->mode) {
    case TKB_MODE_FORWARD:
      return fn->forward(&f->args, f->state, f->outputs);
    case TKB_MODE_FORWARD_RES:
      return fn->forward_res(&f->args, f->state, f->outputs, f->residuals);
    case TKB_MODE_VJP:
      return fn->vjp(&f->args, f->state, (const tkb_array *const *)f->residuals, f->cotangents,
                     f->grads);
    case TKB_MODE_FORWARD_AND_VJP: {
      tkb_status st = fn->forward_res(&f->args, f->state, f->outputs, f->residuals);
      if (st) return st;
      /* Tokamax's forward_and_vjp: the forward outputs are the cotangents. */
      return fn->vjp(&f->args, f->state, (const tkb_array *const *)f->residuals,
                     (const tkb_array *const *)f->outputs, f->grads);
    }
  }
  return tkb_set_error(TKB_ERR_INTERNAL, "invalid mode %d", (int)f->mode);
}

/* vjp mode: run forward_res once on the primals (kept resident in f_std) and make the
 * cotangents the std args: the forward outputs themselves, or N(0,1) draws. */
static tkb_status setup_vjp(tkb_std_fn *f, tkb_arrays *primals, bool random_cotangents,
                            tkb_arrays *std_args) {
  f->primals = primals;
  for (size_t k = 0; k < tkb_arrays_count(primals); k++)
    f->resident_bytes += tkb_arrays_get(primals, k)->nbytes;
  for (size_t k = 0; k < tkb_arrays_count(primals); k++) {
    f->values[f->std_param[k]].tag = TKB_VALUE_ARRAY;
    f->values[f->std_param[k]].array = tkb_arrays_get(primals, k);
  }
  tkb_status st = TKB_OK;
  if (!f->no_init) { /* specs only: nothing to compile or run */
    st = tkb__std_compile(f);
    if (!st) st = f->fn->forward_res(&f->args, f->state, f->outputs, f->residuals);
    if (st) return st;
  }
  char buf[32], name[64];
  for (int i = 0; i < f->shapes.n_outputs; i++) {
    snprintf(name, sizeof name, "d%s", output_name(&f->shapes, i, buf, sizeof buf));
    tkb_array *ct = NULL;
    if (f->no_init) {
      st = abstract_array(&f->shapes.outputs[i], f->device, &ct);
    } else if (random_cotangents) {
      static const tkb_init normal = {.kind = TKB_INIT_NORMAL, .a = 0.0, .b = 1.0};
      st = tkb_array_new(f->device, &f->shapes.outputs[i], &ct);
      if (!st) st = tkb__fill_call(ct, &normal, f->seed, tkb_arrays_count(primals) + (size_t)i, NULL);
      f->resident_bytes -= f->outputs[i]->nbytes;
      tkb_array_free(f->outputs[i]); /* only the standardization's forward needed it */
      f->outputs[i] = NULL;
    } else {
      f->resident_bytes -= f->outputs[i]->nbytes;
      ct = f->outputs[i]; /* the outputs move into std_args: no copy */
      f->outputs[i] = NULL;
    }
    if (!st) st = tkb_arrays_push(std_args, ct, name);
    if (st) {
      tkb_array_free(ct);
      return st;
    }
  }
  /* From here the std args are the cotangents: std_param maps them to outputs. */
  int *primal_param = f->std_param;
  f->std_param = calloc((size_t)f->shapes.n_outputs + 1, sizeof *f->std_param);
  if (!f->std_param) {
    f->std_param = primal_param;
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory standardizing %s", f->fn->name);
  }
  free(primal_param);
  for (int i = 0; i < f->shapes.n_outputs; i++) f->std_param[i] = i;
  return set_std_layout(f, std_args);
}

/* What tkb_standardize_function refuses before it allocates anything: f without its
 * hooks, NULL out-pointers, a mode that is no tkb_mode or that f has no hook for. */
static tkb_status check_request(const tkb_fn *fn, const tkb_std_opts *o, void *f_std_out,
                                void *std_args_out) {
  if (!fn || !fn->infer || !fn->forward || (fn->n_params && !fn->params))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "f must be a tkb_fn with params, infer and forward; got %s",
                         !fn ? "NULL" : !fn->infer ? "no infer hook" : !fn->forward ? "no forward hook" : "NULL params");
  if (!f_std_out || !std_args_out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "f_std and std_args out-pointers must not be NULL");
  if ((int)o->mode < 0 || o->mode > TKB_MODE_FORWARD_AND_VJP)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "opts.mode is %d; expected a tkb_mode (0..3)", (int)o->mode);
  if ((o->mode == TKB_MODE_FORWARD_RES && !fn->forward_res) ||
      (mode_has_vjp(o->mode) && (!fn->forward_res || !fn->vjp)))
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "function '%s' does not support mode '%s': it has no %s hook",
                         fn->name ? fn->name : "function", tkb_mode_name(o->mode),
                         !fn->forward_res ? "forward_res" : "vjp");
  return TKB_OK;
}

/* Binds the arguments, infers the outputs and residuals and checks them, and allocates
 * the per-parameter tables. */
static tkb_status bind_and_infer(tkb_std_fn *f, const tkb_value *args, size_t nargs,
                                 const tkb_kwarg *kwargs, size_t nkwargs) {
  const tkb_fn *fn = f->fn;
  const char *name = fn->name ? fn->name : "function";
  tkb_status st = tkb__bind(fn, args, nargs, kwargs, nkwargs, &f->values);
  if (st) return st;
  f->args = (tkb_args){.fn = fn, .count = fn->n_params, .values = f->values, .device = f->device,
                       .mode = (int)f->mode};
  st = fn->infer(&f->args, &f->shapes);
  if (st) return st;
  if (f->shapes.n_outputs < 1 || f->shapes.n_outputs > TKB_MAX_OUTPUTS ||
      f->shapes.n_residuals < 0 || f->shapes.n_residuals > TKB_MAX_OUTPUTS)
    return tkb_set_error(TKB_ERR_INTERNAL, "%s: infer gave %d outputs and %d residuals (allowed 1..%d, 0..%d)",
                         name, f->shapes.n_outputs, f->shapes.n_residuals, TKB_MAX_OUTPUTS, TKB_MAX_OUTPUTS);
  for (int i = 0; i < f->shapes.n_outputs + f->shapes.n_residuals && !st; i++) {
    const tkb_spec *s = i < f->shapes.n_outputs ? &f->shapes.outputs[i]
                                                : &f->shapes.residuals[i - f->shapes.n_outputs];
    st = tkb_spec_check(s, i < f->shapes.n_outputs ? "an inferred output" : "an inferred residual");
  }
  if (st) return st;
  f->statics = format_statics(fn, f->values);
  f->std_param = calloc(fn->n_params + 1, sizeof *f->std_param);
  f->grad_param = calloc(fn->n_params + 1, sizeof *f->grad_param);
  f->grads = calloc(fn->n_params + 1, sizeof *f->grads);
  if (!f->statics || !f->std_param || !f->grad_param || !f->grads)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory standardizing %s", name);
  /* the parameters that get a gradient: the floating arrays, and an absent optional
   * array's slot */
  for (size_t i = 0; i < fn->n_params; i++)
    if (fn->params[i].kind == TKB_KIND_ARRAY) {
      const tkb_spec *s = tkb_args_spec(&f->args, fn->params[i].name);
      if (!s || tkb_dtype_is_float(s->dtype)) f->grad_param[f->n_grad_params++] = (int)i;
    }
  return TKB_OK;
}

/* Everything this f_std will hold, checked against the memory the process may have
 * before any of it is allocated (on the cpu; a device's allocator says so itself). */
static tkb_status check_footprint(const tkb_std_fn *f) {
  const tkb_fn *fn = f->fn;
  footprint fp = {0};
  for (size_t i = 0; i < fn->n_params; i++) {
    const tkb_spec *s = tkb_args_spec(&f->args, fn->params[i].name);
    if (fn->params[i].kind != TKB_KIND_ARRAY || !s) continue;
    if (!(f->no_init && f->values[i].tag == TKB_VALUE_ABSTRACT))
      add_bytes(&fp, s, "argument", fn->params[i].name);
    if (tkb_dtype_is_float(s->dtype) && mode_has_vjp(f->mode)) add_bytes(&fp, s, "gradient of", fn->params[i].name);
  }
  for (int i = 0; i < f->shapes.n_outputs; i++)
    add_bytes(&fp, &f->shapes.outputs[i], "output", f->shapes.output_names[i]);
  if (f->mode != TKB_MODE_FORWARD)
    for (int i = 0; i < f->shapes.n_residuals; i++)
      add_bytes(&fp, &f->shapes.residuals[i], "residual", f->shapes.residual_names[i]);
  if (f->device != tkb__cpu_device()) return TKB_OK;
  tkb__mem_limit limit;
  tkb__memory_limit(&limit);
  if (fp.total <= limit.bytes) return TKB_OK;
  char spec[128];
  tkb_spec_format(&fp.spec, spec, sizeof spec);
  return tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                       "%s in mode '%s' needs %.2f GiB (arguments, outputs%s) but %s is %.2f GiB; "
                       "the largest part is %s '%s' (%s, %.2f GiB)",
                       fn->name ? fn->name : "function", tkb_mode_name(f->mode), fp.total / 1073741824.0,
                       f->mode == TKB_MODE_FORWARD ? "" : mode_has_vjp(f->mode)
                           ? ", residuals kept resident for the vjp, gradients" : ", residuals",
                       limit.source, limit.bytes / 1073741824.0, fp.what, fp.name, spec,
                       fp.largest / 1073741824.0);
}

/* The std args: the primals (concrete copies or initialized arrays), or in vjp mode the
 * cotangents, the primals then staying in f. */
static tkb_status make_std_args(tkb_std_fn *f, bool random_cotangents, tkb_arrays **std_args) {
  tkb_arrays *primals = NULL;
  tkb_status st = tkb_arrays_new(&primals);
  if (!st) st = make_primals(f, primals);
  if (st) {
    tkb_arrays_free(primals);
    return st;
  }
  if (f->mode == TKB_MODE_VJP) {
    st = tkb_arrays_new(std_args);
    if (!st) st = setup_vjp(f, primals, random_cotangents, *std_args); /* f owns primals now */
    else tkb_arrays_free(primals);
    return st;
  }
  *std_args = primals;
  st = set_std_layout(f, *std_args);
  /* The caller's concrete arrays may die after this call: point at our copies. */
  if (!st) tkb__std_bind_call(f, *std_args);
  return st;
}

tkb_status tkb_standardize_function(const tkb_fn *fn, const tkb_value *args, size_t nargs,
                                    const tkb_kwarg *kwargs, size_t nkwargs,
                                    const tkb_std_opts *opts, tkb_std_fn **f_std_out,
                                    tkb_arrays **std_args_out) {
  tkb__clear_error();
  const tkb_std_opts o = opts ? *opts : TKB_STD_OPTS_DEFAULT;
  tkb_status st = check_request(fn, &o, f_std_out, std_args_out);
  tkb_device *dev = NULL;
  if (!st) st = tkb_device_get(o.device, &dev);
  if (st) return st;
  tkb_std_fn *f = calloc(1, sizeof *f);
  if (!f) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory standardizing %s", fn->name ? fn->name : "function");
  *f = (tkb_std_fn){.fn = fn, .mode = o.mode, .seed = o.seed, .no_init = o.no_init, .device = dev};
  tkb_arrays *std_args = NULL;
  st = bind_and_infer(f, args, nargs, kwargs, nkwargs);
  if (!st) st = check_footprint(f);
  if (!st) st = make_std_args(f, o.random_cotangents, &std_args);
  if (st) {
    tkb_arrays_free(std_args);
    tkb_std_fn_free(f);
    return st;
  }
  *f_std_out = f;
  *std_args_out = std_args;
  return TKB_OK;
}

tkb_status tkb_std_fn_call(tkb_std_fn *f, const tkb_arrays *args, tkb_arrays **outs) {
  tkb__clear_error();
  if (!f || !outs)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_std_fn_call: %s is NULL", !f ? "f_std" : "outs");
  if (f->no_init)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "%s was standardized with no_init (specs only) and cannot be called",
                         f->fn->name);
  tkb_status st = tkb__std_check_args(f, args);
  if (st) return st;
  tkb__std_bind_call(f, args);
  st = tkb__std_compile(f);
  if (st) return st;
  st = tkb__std_invoke(f);
  if (st) return st;
  *outs = f->out_view;
  return TKB_OK;
}

tkb_mode tkb_std_fn_mode(const tkb_std_fn *f) { return f->mode; }
const char *tkb_std_fn_name(const tkb_std_fn *f) { return f->fn->name ? f->fn->name : "function"; }

void tkb__std_trace_stem(const tkb_std_fn *f, char *buf, size_t cap) {
  if (f->entry) snprintf(buf, cap, "%s", f->entry);
  else snprintf(buf, cap, "%s_%s", tkb_std_fn_name(f), tkb_mode_name(f->mode));
}
tkb_device *tkb_std_fn_device(const tkb_std_fn *f) { return f->device; }
const char *tkb_std_fn_statics(const tkb_std_fn *f) { return f->statics; }

/* ---- f_std as a tkb_fn (idempotence) ---- */

static tkb_status as_fn_infer(const tkb_args *a, tkb_shapes *s) {
  tkb_std_fn *f = a->fn->ctx;
  for (size_t k = 0; k < f->n_std; k++) {
    const tkb_spec *spec = tkb_args_spec(a, f->std_names[k]);
    if (!spec || !tkb_spec_equal(spec, &f->std_specs[k])) {
      char want[160], got[160] = "None";
      tkb_spec_format(&f->std_specs[k], want, sizeof want);
      if (spec) tkb_spec_format(spec, got, sizeof got);
      return tkb_set_error(TKB_ERR_BAD_SHAPE, "standardized %s: argument '%s' is %s but must be %s",
                           f->fn->name, f->std_names[k], got, want);
    }
  }
  tkb_status st = tkb__std_compile(f);
  if (st) return st;
  *s = (tkb_shapes){0};
  s->n_outputs = (int)tkb_arrays_count(f->out_view);
  for (int i = 0; i < s->n_outputs; i++) {
    s->outputs[i] = tkb_arrays_get(f->out_view, (size_t)i)->spec;
    s->output_names[i] = tkb_arrays_name(f->out_view, (size_t)i);
  }
  return TKB_OK;
}

static tkb_status as_fn_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)state;
  tkb_std_fn *f = a->fn->ctx;
  for (size_t k = 0; k < f->n_std; k++) {
    const tkb_array *arr = a->values[k].array;
    if (f->mode == TKB_MODE_VJP) f->cotangents[k] = arr;
    else {
      f->values[f->std_param[k]].tag = TKB_VALUE_ARRAY;
      f->values[f->std_param[k]].array = arr;
    }
  }
  tkb_status st = tkb__std_invoke(f);
  if (st) return st;
  for (size_t i = 0; i < tkb_arrays_count(f->out_view); i++) {
    const tkb_array *src = tkb_arrays_get(f->out_view, i);
    st = f->device->backend->copy(f->device, outputs[i]->data, src->data, src->nbytes);
    if (st) return st;
  }
  return TKB_OK;
}

const tkb_fn *tkb_std_fn_as_fn(tkb_std_fn *f) {
  if (!f) return NULL;
  if (!f->as_params) {
    f->as_params = calloc(f->n_std + 1, sizeof *f->as_params);
    if (!f->as_params) {
      tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
      return NULL;
    }
    for (size_t k = 0; k < f->n_std; k++)
      f->as_params[k] = (tkb_param){.name = f->std_names[k], .kind = TKB_KIND_ARRAY};
    f->as_fn = (tkb_fn){.name = f->fn->name, .params = f->as_params, .n_params = f->n_std,
                        .infer = as_fn_infer, .forward = as_fn_forward, .ctx = f};
  }
  return &f->as_fn;
}
