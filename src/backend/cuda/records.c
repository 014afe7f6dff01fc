/*
 * records.c - the record store and the attribution of records to calls (records.h).
 * Host only: compiled into libtkbench-cuda.so and into tests/test_cuda_nogpu.
 */
#include "records.h"

#include <stdlib.h>
#include <string.h>

tkb_cu_store *tkb_cu_store_new(void) {
  tkb_cu_store *s = calloc(1, sizeof *s);
  if (s) pthread_mutex_init(&s->lock, NULL);
  return s;
}

void tkb_cu_store_free(tkb_cu_store *s) {
  if (!s) return;
  pthread_mutex_destroy(&s->lock);
  free(s);
}

void tkb_cu_store_reset(tkb_cu_store *s) {
  s->n_rec = s->lost_rec = 0;
  s->n_link = s->lost_link = 0;
}

/* The C++ ABI's demangler (libstdc++; the plugin and test_cuda_nogpu link it). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static void copy_cut(char *dst, const char *src) {
  size_t len = strnlen(src, TKB_CU_NAME_LEN - 1);
  memcpy(dst, src, len);
  dst[len] = '\0';
}

static void demangled(const char *name, char *out) {
  if (name[0] == '_' && name[1] == 'Z') {
    int status = -1;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    if (status == 0 && d) {
      copy_cut(out, d);
      free(d);
      return;
    }
    free(d);
  }
  copy_cut(out, name);
}

const char *tkb_cu_intern(tkb_cu_store *s, const char *name) {
  if (!name) name = "?";
  /* names are compared as CUPTI gives them, cut to TKB_CU_NAME_LEN - 1 bytes */
  size_t len = strnlen(name, TKB_CU_NAME_LEN - 1);
  for (int i = 0; i < s->n_names; i++)
    if (strncmp(s->keys[i], name, len) == 0 && s->keys[i][len] == '\0') return s->names[i];
  if (s->n_names == TKB_CU_MAX_NAMES) return "(name table full)";
  int i = s->n_names++;
  copy_cut(s->keys[i], name);
  demangled(name, s->names[i]);
  return s->names[i];
}

void tkb_cu_add_record(tkb_cu_store *s, tkb_cu_kind kind, uint64_t start_ns, uint64_t end_ns,
                       uint32_t correlation, const char *name) {
  if (s->n_rec == TKB_CU_MAX_RECORDS) {
    s->lost_rec++;
    return;
  }
  s->rec[s->n_rec++] = (tkb_cu_record){.start_ns = start_ns, .end_ns = end_ns,
                                       .correlation = correlation, .kind = (uint8_t)kind,
                                       .name = tkb_cu_intern(s, name)};
}

void tkb_cu_add_link(tkb_cu_store *s, uint64_t external, uint32_t correlation) {
  if (s->n_link == TKB_CU_MAX_LINKS) {
    s->lost_link++;
    return;
  }
  s->link[s->n_link++] = (tkb_cu_link){external, correlation};
}

/* Heap sort of u32 (no allocation, unlike qsort's possible merge buffer). */
static void sift(uint32_t *a, size_t root, size_t n) {
  for (;;) {
    size_t c = 2 * root + 1;
    if (c >= n) return;
    if (c + 1 < n && a[c + 1] > a[c]) c++;
    if (a[root] >= a[c]) return;
    uint32_t t = a[root];
    a[root] = a[c];
    a[c] = t;
    root = c;
  }
}

static void sort_u32(uint32_t *a, size_t n) {
  for (size_t i = n / 2; i-- > 0;) sift(a, i, n);
  for (size_t end = n; end > 1; end--) {
    uint32_t t = a[0];
    a[0] = a[end - 1];
    a[end - 1] = t;
    sift(a, 0, end - 1);
  }
}

static bool has(const uint32_t *a, size_t n, uint32_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && a[lo] == x;
}

tkb_cu_attr_result tkb_cu_attribute(tkb_cu_store *s, const tkb_cu_select *sel, tkb_interval *out,
                                    size_t cap, tkb_cu_attr_info *info) {
  /* the call's correlation ids */
  size_t nc = 0;
  for (size_t i = 0; i < s->n_link; i++)
    if (s->link[i].external == sel->call) s->corr_scratch[nc++] = s->link[i].correlation;
  sort_u32(s->corr_scratch, nc);
  *info = (tkb_cu_attr_info){.by_correlation = nc > 0, .links = nc};
  size_t k = 0;
  for (size_t i = 0; i < s->n_rec; i++) {
    const tkb_cu_record *r = &s->rec[i];
    if (!(sel->kinds & TKB_CU_KIND_BIT(r->kind))) continue;
    bool linked = nc && has(s->corr_scratch, nc, r->correlation);
    bool bad = r->start_ns == 0 || r->end_ns < r->start_ns;
    bool in_window = !bad && r->start_ns >= sel->win_start && r->start_ns < sel->win_end;
    if (bad) {
      /* without links a record that cannot be placed in time may be the call's */
      if (linked || nc == 0) info->bad_time++;
      continue;
    }
    if (nc && !linked && in_window) {
      if (!info->strays++) info->stray_name = r->name;
      continue;
    }
    if (!(nc ? linked : in_window)) continue;
    if (k < cap)
      out[k] = (tkb_interval){.start_ns = (int64_t)r->start_ns, .end_ns = (int64_t)r->end_ns,
                              .name = r->name};
    k++;
  }
  info->n = k;
  if (s->lost_rec || s->lost_link) return TKB_CU_ATTR_LOST;
  if (info->bad_time) return TKB_CU_ATTR_BAD_TIME;
  if (info->strays) return TKB_CU_ATTR_STRAY;
  return k > cap ? TKB_CU_ATTR_TOO_MANY : TKB_CU_ATTR_OK;
}
