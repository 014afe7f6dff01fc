/* array.c - concrete arrays: device memory plus a spec, and ordered lists of them. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tkb_status tkb_array_new(tkb_device *dev, const tkb_spec *spec, tkb_array **out) {
  if (!out) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_new: out is NULL");
  if (!dev) dev = tkb__cpu_device();
  int64_t numel;
  size_t nbytes;
  tkb_status st = tkb_spec_check(spec, "array");
  if (st) return st;
  tkb_spec_numel(spec, &numel);
  tkb_spec_nbytes(spec, &nbytes);
  tkb_array *a = calloc(1, sizeof *a);
  if (!a) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for an array header");
  st = tkb_device_alloc(dev, nbytes, &a->data);
  if (st) {
    free(a);
    return st;
  }
  a->spec = *spec;
  for (int d = spec->rank; d < TKB_MAX_RANK; d++) a->spec.shape[d] = 0;
  a->nbytes = nbytes;
  a->numel = numel;
  a->device = dev;
  a->owns_data = true;
  *out = a;
  return TKB_OK;
}

tkb_status tkb_array_zeros(tkb_device *dev, const tkb_spec *spec, tkb_array **out) {
  tkb_array *a;
  tkb_status st = tkb_array_new(dev, spec, &a);
  if (st) return st;
  st = a->device->backend->memset_zero(a->device, a->data, a->nbytes);
  if (st) {
    tkb_array_free(a);
    return st;
  }
  *out = a;
  return TKB_OK;
}

tkb_status tkb_array_wrap(const tkb_spec *spec, void *data, tkb_array **out) {
  if (!out) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_wrap: out is NULL");
  tkb_status st = tkb_spec_check(spec, "array");
  if (st) return st;
  tkb_array *a = calloc(1, sizeof *a);
  if (!a) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for an array header");
  a->spec = *spec;
  tkb_spec_numel(spec, &a->numel);
  tkb_spec_nbytes(spec, &a->nbytes);
  a->data = data;
  a->device = tkb__cpu_device();
  a->owns_data = false;
  *out = a;
  return TKB_OK;
}

tkb_status tkb_array_copy(const tkb_array *src, tkb_device *dev, tkb_array **out) {
  if (!src) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_copy: src is NULL");
  if (!dev) dev = src->device;
  if (!src->data)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_array_copy: src is abstract (no data; standardized without init?)");
  if (dev != src->device)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, "copy from %s to %s is not supported yet",
                         tkb_device_name(src->device), tkb_device_name(dev));
  tkb_array *a;
  tkb_status st = tkb_array_new(dev, &src->spec, &a);
  if (st) return st;
  st = dev->backend->copy(dev, a->data, src->data, src->nbytes);
  if (st) {
    tkb_array_free(a);
    return st;
  }
  *out = a;
  return TKB_OK;
}

void tkb_array_free(tkb_array *a) {
  if (!a) return;
  if (a->owns_data && a->data) tkb_device_free(a->device, a->data, a->nbytes);
  free(a);
}

bool tkb_array_equal(const tkb_array *a, const tkb_array *b) {
  if (!a || !b || !tkb_spec_equal(&a->spec, &b->spec)) return false;
  if (a->nbytes == 0) return true;
  if (!a->data || !b->data) return a->data == b->data;
  return memcmp(a->data, b->data, a->nbytes) == 0;
}

double tkb_array_get_f64(const tkb_array *a, int64_t i) {
  const void *p = a->data;
  switch (a->spec.dtype) {
    case TKB_BOOL: return ((const uint8_t *)p)[i] ? 1.0 : 0.0;
    case TKB_INT8: return ((const int8_t *)p)[i];
    case TKB_INT16: return ((const int16_t *)p)[i];
    case TKB_INT32: return ((const int32_t *)p)[i];
    case TKB_INT64: return (double)((const int64_t *)p)[i];
    case TKB_UINT8: return ((const uint8_t *)p)[i];
    case TKB_FLOAT8_E4M3FN: return tkb_e4m3fn_to_f32(((const uint8_t *)p)[i]);
    case TKB_FLOAT8_E5M2: return tkb_e5m2_to_f32(((const uint8_t *)p)[i]);
    case TKB_FLOAT16: return tkb_f16_to_f32(((const uint16_t *)p)[i]);
    case TKB_BFLOAT16: return tkb_bf16_to_f32(((const uint16_t *)p)[i]);
    case TKB_FLOAT32: return ((const float *)p)[i];
    case TKB_FLOAT64: return ((const double *)p)[i];
    default: return NAN;
  }
}

void tkb_array_set_f64(tkb_array *a, int64_t i, double v) {
  /* One element through tkb_convert keeps rounding and saturation rules in one place. */
  if (a->spec.dtype == TKB_FLOAT64) {
    ((double *)a->data)[i] = v;
    return;
  }
  size_t es = tkb_dtype_size(a->spec.dtype);
  tkb_convert(&v, TKB_FLOAT64, (char *)a->data + (size_t)i * es, a->spec.dtype, 1);
}

/* ---- lists ---- */

struct tkb_arrays {
  size_t count, cap;
  tkb_array **items;
  char **names;
  bool owns;
};

tkb_status tkb_arrays_new(tkb_arrays **out) {
  if (!out) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_arrays_new: out is NULL");
  tkb_arrays *l = calloc(1, sizeof *l);
  if (!l) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for an array list");
  l->owns = true;
  *out = l;
  return TKB_OK;
}

/* Internal: a list that does not own its arrays (views such as f_std's outputs). */
tkb_status tkb__arrays_new_borrowed(tkb_arrays **out) {
  tkb_status st = tkb_arrays_new(out);
  if (!st) (*out)->owns = false;
  return st;
}

tkb_status tkb_arrays_push(tkb_arrays *l, tkb_array *a, const char *name) {
  if (!l) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_arrays_push: list is NULL");
  if (l->count == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 8;
    tkb_array **items = realloc(l->items, cap * sizeof *items);
    if (!items) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory growing an array list");
    l->items = items;
    char **names = realloc(l->names, cap * sizeof *names);
    if (!names) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory growing an array list");
    l->names = names;
    l->cap = cap;
  }
  char *n = tkb__strdup(name ? name : "");
  if (!n) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for an array name");
  l->items[l->count] = a;
  l->names[l->count] = n;
  l->count++;
  return TKB_OK;
}

size_t tkb_arrays_count(const tkb_arrays *l) { return l ? l->count : 0; }

tkb_array *tkb_arrays_get(const tkb_arrays *l, size_t i) {
  return (l && i < l->count) ? l->items[i] : NULL;
}

const char *tkb_arrays_name(const tkb_arrays *l, size_t i) {
  return (l && i < l->count) ? l->names[i] : "";
}

void tkb_arrays_free(tkb_arrays *l) {
  if (!l) return;
  for (size_t i = 0; i < l->count; i++) {
    if (l->owns) tkb_array_free(l->items[i]);
    free(l->names[i]);
  }
  free(l->items);
  free(l->names);
  free(l);
}
