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

tkb_status tkb__array_header(const tkb_spec *spec, void *data, tkb_array **out) {
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

tkb_status tkb_array_wrap(const tkb_spec *spec, void *data, tkb_array **out) {
  if (!out) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_wrap: out is NULL");
  tkb_status st = tkb_spec_check(spec, "array");
  if (st) return st;
  size_t nbytes;
  tkb_spec_nbytes(spec, &nbytes);
  if (!data && nbytes) {
    char text[160];
    tkb_spec_format(spec, text, sizeof text);
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_array_wrap: data is NULL but spec %s holds %zu bytes", text, nbytes);
  }
  return tkb__array_header(spec, data, out);
}

tkb_status tkb__copy_bytes(tkb_device *dst_dev, void *dst, tkb_device *src_dev,
                           const void *src, size_t nbytes) {
  if (!dst_dev) dst_dev = tkb__cpu_device();
  if (!src_dev) src_dev = tkb__cpu_device();
  if (nbytes == 0) return TKB_OK;
  if (dst_dev == src_dev) return dst_dev->backend->copy(dst_dev, dst, src, nbytes);
  if (src_dev->backend->host_addressable) return dst_dev->backend->upload(dst_dev, dst, src, nbytes);
  if (dst_dev->backend->host_addressable) return src_dev->backend->download(src_dev, dst, src, nbytes);
  /* two accelerators: through the host */
  void *tmp = malloc(nbytes);
  if (!tmp)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for a %zu-byte staging buffer copying "
                         "from %s to %s", nbytes, src_dev->name, dst_dev->name);
  tkb_status st = src_dev->backend->download(src_dev, tmp, src, nbytes);
  if (!st) st = dst_dev->backend->upload(dst_dev, dst, tmp, nbytes);
  free(tmp);
  return st;
}

tkb_status tkb_array_copy(const tkb_array *src, tkb_device *dev, tkb_array **out) {
  if (!src) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_copy: src is NULL");
  if (!out) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_copy: out is NULL");
  if (!dev) dev = src->device ? src->device : tkb__cpu_device();
  if (!src->data)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_array_copy: src is abstract (no data; standardized without init?)");
  tkb_array *a;
  tkb_status st = tkb_array_new(dev, &src->spec, &a);
  if (st) return st;
  st = tkb__copy_bytes(dev, a->data, src->device, src->data, src->nbytes);
  if (st) {
    tkb_array_free(a);
    return st;
  }
  *out = a;
  return TKB_OK;
}

tkb_status tkb_array_read(const tkb_array *a, void *host, size_t nbytes) {
  if (!a || (!host && nbytes))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_read: %s is NULL", !a ? "a" : "host");
  if (nbytes != a->nbytes)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_array_read: nbytes is %zu but the array holds %zu bytes", nbytes, a->nbytes);
  if (!a->data && nbytes)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_read: the array is abstract (no data)");
  return tkb__copy_bytes(tkb__cpu_device(), host, a->device, a->data, nbytes);
}

tkb_status tkb_array_write(tkb_array *a, const void *host, size_t nbytes) {
  if (!a || (!host && nbytes))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_write: %s is NULL", !a ? "a" : "host");
  if (nbytes != a->nbytes)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_array_write: nbytes is %zu but the array holds %zu bytes", nbytes, a->nbytes);
  if (!a->data && nbytes)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_write: the array is abstract (no data)");
  return tkb__copy_bytes(a->device, a->data, tkb__cpu_device(), host, nbytes);
}

tkb_status tkb_array_copy_into(tkb_array *dst, const tkb_array *src) {
  if (!dst || !src)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_copy_into: %s is NULL", !dst ? "dst" : "src");
  if (!tkb_spec_equal(&dst->spec, &src->spec)) {
    char d[160], s2[160];
    tkb_spec_format(&dst->spec, d, sizeof d);
    tkb_spec_format(&src->spec, s2, sizeof s2);
    return tkb_set_error(TKB_ERR_BAD_SHAPE, "tkb_array_copy_into: dst is %s but src is %s", d, s2);
  }
  if ((!dst->data || !src->data) && src->nbytes)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_copy_into: %s is abstract (no data)",
                         !dst->data ? "dst" : "src");
  return tkb__copy_bytes(dst->device, dst->data, src->device, src->data, src->nbytes);
}

void tkb_array_free(tkb_array *a) {
  if (!a) return;
  if (a->owns_data && a->data) tkb_device_free(a->device, a->data, a->nbytes);
  free(a);
}

/* a's bytes in host memory: a->data itself, or a malloc'd copy (*copy, to free). */
static const void *host_bytes(const tkb_array *a, void **copy) {
  *copy = NULL;
  if (tkb__host_array(a)) return a->data;
  *copy = malloc(a->nbytes);
  if (*copy && tkb_array_read(a, *copy, a->nbytes) != TKB_OK) {
    free(*copy);
    *copy = NULL;
  }
  return *copy;
}

bool tkb_array_equal(const tkb_array *a, const tkb_array *b) {
  if (!a || !b || !tkb_spec_equal(&a->spec, &b->spec)) return false;
  if (a->nbytes == 0) return true;
  if (!a->data || !b->data) return a->data == b->data;
  void *ca, *cb;
  const void *pa = host_bytes(a, &ca), *pb = host_bytes(b, &cb);
  bool eq = pa && pb && memcmp(pa, pb, a->nbytes) == 0;
  free(ca);
  free(cb);
  return eq;
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
