/* intervals.c - union, filter and Chrome trace of device activity intervals
 * (intervals.h says what each promises). Device independent. */
#include "intervals.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool before(const tkb_interval *a, const tkb_interval *b) {
  return a->start_ns < b->start_ns || (a->start_ns == b->start_ns && a->end_ns < b->end_ns);
}

static void sift_down(tkb_interval *iv, size_t root, size_t n) {
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && before(&iv[child], &iv[child + 1])) child++;
    if (!before(&iv[root], &iv[child])) return;
    tkb_interval t = iv[root];
    iv[root] = iv[child];
    iv[child] = t;
    root = child;
  }
}

void tkb__intervals_sort(tkb_interval *iv, size_t n) {
  if (n < 2) return;
  for (size_t i = n / 2; i-- > 0;) sift_down(iv, i, n);
  for (size_t end = n - 1; end > 0; end--) {
    tkb_interval t = iv[0];
    iv[0] = iv[end];
    iv[end] = t;
    sift_down(iv, 0, end);
  }
}

/*
 * Sweep over the intervals sorted by start: [cs, ce) is the merged span so far; the next
 * interval extends it when it starts at or before ce (overlapping, nested or touching),
 * otherwise the span is closed and added up.
 *   union = sum over merged spans of (ce - cs)
 */
int64_t tkb__intervals_union_ns(tkb_interval *iv, size_t n) {
  tkb__intervals_sort(iv, n);
  int64_t total = 0, cs = 0, ce = 0;
  bool open = false;
  for (size_t i = 0; i < n; i++) {
    int64_t s = iv[i].start_ns, e = iv[i].end_ns;
    if (e < s) continue; /* empty */
    if (open && s <= ce) {
      if (e > ce) ce = e;
      continue;
    }
    if (open) total += ce - cs;
    cs = s;
    ce = e;
    open = true;
  }
  if (open) total += ce - cs;
  return total;
}

int64_t tkb__intervals_sum_ns(const tkb_interval *iv, size_t n) {
  int64_t total = 0;
  for (size_t i = 0; i < n; i++)
    if (iv[i].end_ns > iv[i].start_ns) total += iv[i].end_ns - iv[i].start_ns;
  return total;
}

tkb_status tkb__event_filter_init(tkb__event_filter *f, const char *pattern) {
  memset(f, 0, sizeof *f);
  if (!pattern || !*pattern) return TKB_OK;
  tkb_status st = tkb__regex_compile(&f->re, pattern, "event_filter_regex", pattern);
  if (st) return st;
  f->active = true;
  f->pattern = pattern;
  return TKB_OK;
}

bool tkb__event_filter_keeps(tkb__event_filter *f, const char *name) {
  if (!f->active) return true;
  if (!name) name = "";
  for (int i = 0; i < f->n_memo; i++)
    if (f->memo_name[i] == name) return f->memo_keep[i];
  bool keep = regexec(&f->re, name, 0, NULL, 0) == 0;
  if (f->n_memo < TKB_FILTER_MEMO) {
    f->memo_name[f->n_memo] = name;
    f->memo_keep[f->n_memo++] = keep;
  }
  return keep;
}

size_t tkb__event_filter_apply(tkb__event_filter *f, tkb_interval *iv, size_t n, bool *keep) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    bool kept = tkb__event_filter_keeps(f, iv[i].name);
    if (keep) keep[i] = kept;
    if (kept) iv[k++] = iv[i];
  }
  return k;
}

void tkb__event_filter_free(tkb__event_filter *f) {
  if (f->active) regfree(&f->re);
  f->active = false;
}

/* A JSON string literal (quotes included); control characters as \u00XX. */
static void put_json_string(FILE *o, const char *s) {
  fputc('"', o);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(o, "\\%c", *p);
    else if (*p < 0x20) fprintf(o, "\\u%04x", *p);
    else fputc(*p, o);
  }
  fputc('"', o);
}

/* A JSON number, or null when not finite (JSON has no NaN). */
static void put_json_number(FILE *o, double v) {
  if (v == v && v - v == 0) fprintf(o, "%.9g", v);
  else fputs("null", o);
}

tkb_status tkb__trace_write(const char *path, const tkb_interval *iv, size_t n, const bool *keep,
                            const tkb__trace_info *info) {
  FILE *o = fopen(path, "w");
  if (!o)
    return tkb_set_error(TKB_ERR_IO, "cannot write the trace file %s: %s", path, strerror(errno));
  int64_t t0 = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || iv[i].start_ns < t0) t0 = iv[i].start_ns;
  fputs("{\"traceEvents\": [\n", o);
  fputs("  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"args\": {\"name\": ", o);
  put_json_string(o, info->process);
  fputs("}},\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"args\": {\"name\": ", o);
  put_json_string(o, info->thread);
  fputs("}}", o);
  for (size_t i = 0; i < n; i++) {
    int64_t dur = iv[i].end_ns > iv[i].start_ns ? iv[i].end_ns - iv[i].start_ns : 0;
    fputs(",\n  {\"name\": ", o);
    put_json_string(o, iv[i].name);
    /* microseconds with ns digits, so nothing is lost to the format */
    fprintf(o, ", \"cat\": \"device\", \"ph\": \"X\", \"pid\": 0, \"tid\": 0, \"ts\": %lld.%03lld, "
            "\"dur\": %lld.%03lld", (long long)((iv[i].start_ns - t0) / 1000),
            (long long)((iv[i].start_ns - t0) % 1000), (long long)(dur / 1000), (long long)(dur % 1000));
    if (keep && !keep[i]) fputs(", \"args\": {\"kept_by_filter\": false}", o);
    fputc('}', o);
  }
  /* No displayTimeUnit: it only says how a viewer should display the times (which are
   * microseconds whatever it says), and Perfetto's importer of 2020-2021 read "ns" as the
   * unit of the values, showing every duration 1000x short. The default (ms) is right. */
  fputs("\n],\n\"otherData\": {\"generator\": \"tkbench\", \"function\": ", o);
  put_json_string(o, info->function);
  fputs(", \"entry\": ", o);
  if (info->entry) put_json_string(o, info->entry);
  else fputs("null", o);
  fputs(", \"method\": ", o);
  put_json_string(o, info->method);
  fputs(", \"event_filter_regex\": ", o);
  if (info->filter) put_json_string(o, info->filter);
  else fputs("null", o);
  fputs(", \"device_time_ms\": ", o);
  put_json_number(o, info->device_time_ms);
  fputs(", \"host_time_ms\": ", o);
  put_json_number(o, info->host_time_ms);
  fputs("}}\n", o);
  bool bad = ferror(o) != 0;
  if (fclose(o) != 0 || bad)
    return tkb_set_error(TKB_ERR_IO, "cannot write the trace file %s: %s", path, strerror(errno));
  return TKB_OK;
}
