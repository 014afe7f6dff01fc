/* spec.c - abstract arrays (dtype + shape): checks, sizes, text form. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks everything and computes numel and nbytes with overflow detection, so that a
 * size that cannot exist is an error before anything is allocated. */
static tkb_status spec_sizes(const tkb_spec *spec, const char *what, int64_t *numel,
                             size_t *nbytes) {
  if (!what) what = "spec";
  if (!spec) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s is NULL", what);
  if ((int)spec->dtype < 0 || spec->dtype >= TKB_DTYPE_COUNT)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s has dtype %d, not a dtype (0..%d)",
                         what, (int)spec->dtype, TKB_DTYPE_COUNT - 1);
  if (spec->rank < 0 || spec->rank > TKB_MAX_RANK)
    return tkb_set_error(TKB_ERR_BAD_SHAPE, "%s has rank %d; allowed ranks are 0..%d",
                         what, spec->rank, TKB_MAX_RANK);
  int64_t n = 1;
  bool overflow = false;
  for (int d = 0; d < spec->rank; d++) {
    int64_t dim = spec->shape[d];
    if (dim < 0)
      return tkb_set_error(TKB_ERR_BAD_SHAPE,
                           "%s has negative dimension %lld at axis %d; dimensions must be >= 0",
                           what, (long long)dim, d);
    if (dim != 0 && n > INT64_MAX / dim) overflow = true;
    else n *= dim;
  }
  /* A zero dimension anywhere makes the array empty even if others overflowed. */
  for (int d = 0; d < spec->rank; d++)
    if (spec->shape[d] == 0) { n = 0; overflow = false; }
  char buf[160];
  if (overflow) {
    tkb_spec_format(spec, buf, sizeof buf);
    return tkb_set_error(TKB_ERR_OVERFLOW, "%s %s has more elements than fit in int64", what, buf);
  }
  size_t esize = tkb_dtype_size(spec->dtype);
  if ((uint64_t)n > SIZE_MAX / esize || (uint64_t)n * esize > (uint64_t)INT64_MAX) {
    tkb_spec_format(spec, buf, sizeof buf);
    return tkb_set_error(TKB_ERR_OVERFLOW, "%s %s: %lld elements of %zu bytes overflow size_t",
                         what, buf, (long long)n, esize);
  }
  if (numel) *numel = n;
  if (nbytes) *nbytes = (size_t)n * esize;
  return TKB_OK;
}

tkb_status tkb_spec_check(const tkb_spec *spec, const char *what) {
  return spec_sizes(spec, what, NULL, NULL);
}

tkb_status tkb_spec_numel(const tkb_spec *spec, int64_t *numel) {
  return spec_sizes(spec, NULL, numel, NULL);
}

tkb_status tkb_spec_nbytes(const tkb_spec *spec, size_t *nbytes) {
  return spec_sizes(spec, NULL, NULL, nbytes);
}

bool tkb_spec_equal(const tkb_spec *a, const tkb_spec *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int d = 0; d < a->rank && d < TKB_MAX_RANK; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

int tkb_spec_format(const tkb_spec *spec, char *buf, size_t cap) {
  char tmp[32 + TKB_MAX_RANK * 21];
  int len = snprintf(tmp, sizeof tmp, "%s[", tkb_dtype_name(spec->dtype));
  int rank = spec->rank < 0 ? 0 : spec->rank > TKB_MAX_RANK ? TKB_MAX_RANK : spec->rank;
  for (int d = 0; d < rank; d++)
    len += snprintf(tmp + len, sizeof tmp - (size_t)len, d ? ",%lld" : "%lld",
                    (long long)spec->shape[d]);
  len += snprintf(tmp + len, sizeof tmp - (size_t)len, "]");
  if (cap > 0) snprintf(buf, cap, "%s", tmp);
  return len;
}

tkb_status tkb_spec_parse(const char *text, tkb_spec *out) {
  if (!text) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "spec text is NULL");
  const char *lb = strchr(text, '[');
  size_t n = lb ? (size_t)(lb - text) : 0;
  if (!lb || n == 0 || n >= 32 || text[strlen(text) - 1] != ']')
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "spec \"%s\" is not of the form dtype[d0,d1,...], e.g. float32[8,128]", text);
  char dname[32];
  memcpy(dname, text, n);
  dname[n] = '\0';
  tkb_spec s = {0};
  tkb_status st = tkb_dtype_parse(dname, &s.dtype);
  if (st) return st;
  const char *p = lb + 1;
  while (*p != ']') {
    if (s.rank == TKB_MAX_RANK)
      return tkb_set_error(TKB_ERR_BAD_SHAPE, "spec \"%s\" has rank > %d", text, TKB_MAX_RANK);
    char *end;
    while (isspace((unsigned char)*p)) p++;
    long long v = strtoll(p, &end, 10);
    if (end == p)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "spec \"%s\": expected a dimension at \"%s\"", text, p);
    s.shape[s.rank++] = v;
    p = end;
    while (isspace((unsigned char)*p)) p++;
    if (*p == ',') p++;
    else if (*p != ']')
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "spec \"%s\": unexpected \"%s\"", text, p);
  }
  if (p[1] != '\0')
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "spec \"%s\": trailing text after ']'", text);
  st = tkb_spec_check(&s, text);
  if (st) return st;
  *out = s;
  return TKB_OK;
}
