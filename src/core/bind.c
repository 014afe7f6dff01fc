/*
 * bind.c - binding positional and keyword arguments to a signature, as Python's
 * inspect.signature(f).bind(*args, **kwargs).apply_defaults() does, and the
 * by-name accessors hooks use to read a bound call.
 */
#include "bind.h"

#include <stdlib.h>
#include <string.h>

static const char *kind_name(tkb_kind k) {
  switch (k) {
    case TKB_KIND_ARRAY: return "an array";
    case TKB_KIND_INT: return "an int";
    case TKB_KIND_FLOAT: return "a float";
    case TKB_KIND_BOOL: return "a bool";
    case TKB_KIND_STRING: return "a string";
  }
  return "a value";
}

static const char *tag_name(tkb_value_tag t) {
  switch (t) {
    case TKB_VALUE_UNSET: return "an unset value";
    case TKB_VALUE_NONE: return "None";
    case TKB_VALUE_ABSTRACT: return "an abstract array";
    case TKB_VALUE_ARRAY: return "an array";
    case TKB_VALUE_INT: return "an int";
    case TKB_VALUE_FLOAT: return "a float";
    case TKB_VALUE_BOOL: return "a bool";
    case TKB_VALUE_STRING: return "a string";
  }
  return "an invalid value";
}

static const char *fn_name(const tkb_fn *f) { return f->name ? f->name : "function"; }

/* Checks that `v` may be bound to parameter `p` and normalizes it (an int given for a
 * float parameter becomes a float; strings are copied). */
static tkb_status accept(const tkb_fn *f, const tkb_param *p, const tkb_value *v,
                         tkb_value *out) {
  *out = *v;
  /* a tag past the enum: garbage or a struct from another version; say its value */
  if ((int)v->tag < (int)TKB_VALUE_UNSET || (int)v->tag > (int)TKB_VALUE_STRING)
    return tkb_set_error(TKB_ERR_WRONG_KIND,
                         "argument '%s' of %s() has tag %d, which is no tkb_value tag (they are "
                         "TKB_VALUE_UNSET (0) to TKB_VALUE_STRING (%d)); build it with TKB_INT(), "
                         "TKB_ABSTRACT() and the like", p->name, fn_name(f), (int)v->tag,
                         (int)TKB_VALUE_STRING);
  if (v->tag == TKB_VALUE_NONE) {
    if (p->default_value.tag == TKB_VALUE_NONE) return TKB_OK;
    return tkb_set_error(TKB_ERR_WRONG_KIND,
                         "argument '%s' of %s() must be %s; got None (only parameters whose "
                         "default is None accept None)", p->name, fn_name(f), kind_name(p->kind));
  }
  switch (p->kind) {
    case TKB_KIND_ARRAY:
      if (v->tag == TKB_VALUE_ABSTRACT) {
        char what[96];
        snprintf(what, sizeof what, "argument '%s' of %s()", p->name, fn_name(f));
        return tkb_spec_check(&v->spec, what);
      }
      if (v->tag == TKB_VALUE_ARRAY) {
        if (!v->array)
          return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "argument '%s' of %s() is a NULL array",
                               p->name, fn_name(f));
        return TKB_OK;
      }
      break;
    case TKB_KIND_INT:
      if (v->tag == TKB_VALUE_INT) return TKB_OK;
      break;
    case TKB_KIND_FLOAT:
      if (v->tag == TKB_VALUE_FLOAT) return TKB_OK;
      if (v->tag == TKB_VALUE_INT) { /* Python accepts an int where a float is expected */
        out->tag = TKB_VALUE_FLOAT;
        out->f = (double)v->i;
        return TKB_OK;
      }
      break;
    case TKB_KIND_BOOL:
      if (v->tag == TKB_VALUE_BOOL) return TKB_OK;
      break;
    case TKB_KIND_STRING:
      if (v->tag == TKB_VALUE_STRING && v->s) return TKB_OK;
      if (v->tag == TKB_VALUE_STRING)
        return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                             "argument '%s' of %s() is TKB_STRING(NULL); give it a string (\"\" "
                             "for an empty one)", p->name, fn_name(f));
      break;
  }
  return tkb_set_error(TKB_ERR_WRONG_KIND, "argument '%s' of %s() must be %s; got %s", p->name,
                       fn_name(f), kind_name(p->kind), tag_name(v->tag));
}

tkb_status tkb__bind(const tkb_fn *f, const tkb_value *args, size_t nargs,
                     const tkb_kwarg *kwargs, size_t nkwargs, tkb_value **bound_out) {
  if (nargs && !args)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "args is NULL but nargs is %zu", nargs);
  if (nkwargs && !kwargs)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "kwargs is NULL but nkwargs is %zu", nkwargs);
  size_t n = f->n_params;
  for (size_t i = 0; i < n; i++)
    if (!f->params[i].name)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "parameter %zu of %s() has no name (NULL)", i,
                           fn_name(f));
  tkb_value *bound = calloc(n ? n : 1, sizeof *bound);
  if (!bound) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory binding arguments");
  tkb_status st = TKB_OK;

  /* Positionals fill the parameters that are not keyword-only, in order. */
  size_t n_positional = 0;
  for (size_t i = 0; i < n; i++) n_positional += !f->params[i].keyword_only;
  if (nargs > n_positional) {
    st = tkb_set_error(TKB_ERR_TOO_MANY_POSITIONAL,
                       "%s() takes %zu positional argument%s but %zu were given", fn_name(f),
                       n_positional, n_positional == 1 ? "" : "s", nargs);
    goto fail;
  }
  for (size_t i = 0, k = 0; k < nargs; i++) {
    if (f->params[i].keyword_only) continue;
    st = accept(f, &f->params[i], &args[k++], &bound[i]);
    if (st) goto fail;
  }
  for (size_t k = 0; k < nkwargs; k++) {
    const char *name = kwargs[k].name;
    if (!name) {
      st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "keyword argument %zu of %s() has no name (NULL); each tkb_kwarg names "
                         "its parameter", k, fn_name(f));
      goto fail;
    }
    size_t i = 0;
    while (i < n && strcmp(f->params[i].name, name) != 0) i++;
    if (i == n) {
      st = tkb_set_error(TKB_ERR_UNKNOWN_KEYWORD, "%s() got an unexpected keyword argument '%s'",
                         fn_name(f), name);
      goto fail;
    }
    if (bound[i].tag != TKB_VALUE_UNSET) {
      st = tkb_set_error(TKB_ERR_DUPLICATE_ARGUMENT, "%s() got multiple values for argument '%s'",
                         fn_name(f), name);
      goto fail;
    }
    st = accept(f, &f->params[i], &kwargs[k].value, &bound[i]);
    if (st) goto fail;
  }
  /* apply_defaults(), then report the first parameter still without a value. */
  for (size_t i = 0; i < n; i++) {
    if (bound[i].tag != TKB_VALUE_UNSET) continue;
    if (f->params[i].default_value.tag == TKB_VALUE_UNSET) {
      st = tkb_set_error(TKB_ERR_MISSING_ARGUMENT, "%s() is missing a required argument: '%s'",
                         fn_name(f), f->params[i].name);
      goto fail;
    }
    st = accept(f, &f->params[i], &f->params[i].default_value, &bound[i]);
    if (st) goto fail;
  }
  /* Own the strings: the caller's may not outlive f_std. */
  for (size_t i = 0; i < n; i++) {
    if (bound[i].tag == TKB_VALUE_STRING) {
      bound[i].s = tkb__strdup(bound[i].s);
      if (!bound[i].s) {
        st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory copying argument '%s'",
                           f->params[i].name);
        goto fail;
      }
    }
  }
  *bound_out = bound;
  return TKB_OK;
fail:
  free(bound);
  return st;
}

void tkb__bound_free(tkb_value *bound, size_t n) {
  if (!bound) return;
  for (size_t i = 0; i < n; i++)
    if (bound[i].tag == TKB_VALUE_STRING) free((char *)bound[i].s);
  free(bound);
}

/* ---- accessors ---- */

int tkb_args_index(const tkb_args *a, const char *name) {
  if (!a || !a->fn || !name) return -1;
  for (size_t i = 0; i < a->count; i++)
    if (strcmp(a->fn->params[i].name, name) == 0) return (int)i;
  return -1;
}

static const tkb_value *value_of(const tkb_args *a, const char *name) {
  int i = tkb_args_index(a, name);
  return i < 0 ? NULL : &a->values[i];
}

const tkb_spec *tkb_args_spec(const tkb_args *a, const char *name) {
  const tkb_value *v = value_of(a, name);
  if (!v) return NULL;
  if (v->tag == TKB_VALUE_ABSTRACT) return &v->spec;
  if (v->tag == TKB_VALUE_ARRAY && v->array) return &v->array->spec;
  return NULL;
}

const tkb_array *tkb_args_array(const tkb_args *a, const char *name) {
  const tkb_value *v = value_of(a, name);
  return (v && v->tag == TKB_VALUE_ARRAY) ? v->array : NULL;
}

int64_t tkb_args_int(const tkb_args *a, const char *name) {
  const tkb_value *v = value_of(a, name);
  return (v && v->tag == TKB_VALUE_INT) ? v->i : 0;
}

double tkb_args_float(const tkb_args *a, const char *name) {
  const tkb_value *v = value_of(a, name);
  if (v && v->tag == TKB_VALUE_FLOAT) return v->f;
  if (v && v->tag == TKB_VALUE_INT) return (double)v->i;
  return 0.0;
}

bool tkb_args_bool(const tkb_args *a, const char *name) {
  const tkb_value *v = value_of(a, name);
  return v && v->tag == TKB_VALUE_BOOL && v->b;
}

const char *tkb_args_string(const tkb_args *a, const char *name) {
  const tkb_value *v = value_of(a, name);
  return (v && v->tag == TKB_VALUE_STRING) ? v->s : NULL;
}
