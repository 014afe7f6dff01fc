/*
 * peaks_cache.c - a device's measured peaks (copy bandwidth; on the cpu the sgemm and
 * dgemm rates: src/bench/peaks.c), kept per machine and device with the date and load
 * they were measured at, so that every report can give each entry's throughput as a
 * percent of them without measuring again (about a second, and noisy on a busy machine):
 *
 *   $XDG_CACHE_HOME/tkbench/peaks-<host>-<device>.json   (else ~/.cache/tkbench/...)
 *
 * `run` reads them, and measures and stores them when the file is missing, unreadable or
 * of another device under the same name (its description or uuid differ); `run --peaks`
 * and `info --peaks` measure them again. The file is written whole or not at all
 * (outfile.c), so runs that start together never read half of one.
 */
#include "cli.h"
#include "jsonw.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A name for a file: letters, digits, '.', '-' and '_' kept, anything else '_'. */
static void file_safe(const char *in, char *out, size_t cap) {
  size_t n = 0;
  for (; *in && n + 1 < cap; in++) {
    const char c = *in;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
    out[n++] = ok ? c : '_';
  }
  out[n] = '\0';
}

/* $TKB_CACHE_DIR, else $XDG_CACHE_HOME/tkbench, else $HOME/.cache/tkbench; false when none
 * is set. TKB_CACHE_DIR moves tkbench's cache alone (a test tree's, say), where
 * XDG_CACHE_HOME would move every library's (PoCL's compiled kernels too). */
static bool cache_dir(char *buf, size_t cap) {
  const char *own = getenv("TKB_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int len;
  if (own && *own == '/') len = snprintf(buf, cap, "%s", own);
  else if (xdg && *xdg == '/') len = snprintf(buf, cap, "%s/tkbench", xdg);
  else if (home && *home) len = snprintf(buf, cap, "%s/.cache/tkbench", home);
  else return false;
  return len > 0 && (size_t)len < cap;
}

bool tkb__peaks_cache_path(const char *device, char *buf, size_t cap) {
  char dir[3072], host[256] = "unknown", h[256], d[128];
  if (!cache_dir(dir, sizeof dir)) return false;
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  file_safe(host, h, sizeof h);
  file_safe(device, d, sizeof d);
  const int len = snprintf(buf, cap, "%s/peaks-%s-%s.json", dir, h, d);
  return len > 0 && (size_t)len < cap;
}

static double number(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *text(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

bool tkb__peaks_cache_read(const char *path, const tkb__device_facts *d, tkb__peaks_record *out) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  char buf[8192];
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  cJSON *doc = cJSON_Parse(buf);
  bool ok = cJSON_IsObject(doc) && !strcmp(text(doc, "device_description"), d->description) &&
            !strcmp(text(doc, "device_uuid"), d->uuid) && number(doc, "copy_gbs") > 0;
  if (ok) {
    *out = (tkb__peaks_record){.peaks = {.copy_gbs = number(doc, "copy_gbs"),
                                         .sgemm_gflops = number(doc, "sgemm_gflops"),
                                         .dgemm_gflops = number(doc, "dgemm_gflops")},
                               .load_avg = number(doc, "load_avg")};
    snprintf(out->date, sizeof out->date, "%s", text(doc, "measured"));
  }
  cJSON_Delete(doc);
  return ok;
}

/* mkdir -p of path's folder. */
static bool make_folders(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return true;
  *slash = '\0';
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return false;
    *p = '/';
  }
  return mkdir(dir, 0755) == 0 || errno == EEXIST;
}

tkb_status tkb__peaks_cache_write(const char *path, const tkb__device_facts *d, const tkb__peaks_record *r) {
  if (!make_folders(path))
    return tkb_set_error(TKB_ERR_IO, "cannot make the folder of %s: %s", path, strerror(errno));
  tkb__outfile o;
  tkb_status st = tkb__outfile_open(&o, path);
  if (st) return st;
  jw w = {.f = o.f};
  jw_begin_object(&w, NULL);
  jw_string(&w, "device", d->name);
  jw_string(&w, "device_description", d->description);
  jw_string(&w, "device_uuid", d->uuid);
  jw_string(&w, "measured", r->date);
  jw_number(&w, "load_avg", r->load_avg);
  jw_number(&w, "copy_gbs", r->peaks.copy_gbs);
  jw_number(&w, "sgemm_gflops", r->peaks.sgemm_gflops);
  jw_number(&w, "dgemm_gflops", r->peaks.dgemm_gflops);
  jw_end_object(&w);
  jw_finish(&w);
  return tkb__outfile_commit(&o);
}

void tkb__peaks_store(const char *cmd, tkb__device_facts *d, bool quiet) {
  double load[3] = {NAN, NAN, NAN};
  tkb__host_loadavg(load);
  tkb__peaks_record r = {.peaks = d->peaks, .load_avg = load[0]};
  tkb__iso_date(r.date, sizeof r.date);
  snprintf(d->peaks_date, sizeof d->peaks_date, "%s", r.date);
  d->peaks_load = r.load_avg;
  char path[sizeof d->peaks_cache];
  d->peaks_cache[0] = '\0';
  if (!tkb__peaks_cache_path(d->name, path, sizeof path)) return;
  if (tkb__peaks_cache_write(path, d, &r) != TKB_OK) {
    if (!quiet) fprintf(stderr, "%s %s: warning: the peaks are not cached: %s\n", tkb__prog, cmd, tkb_last_error());
    return;
  }
  snprintf(d->peaks_cache, sizeof d->peaks_cache, "%s", path);
}

int tkb__device_peaks(const char *cmd, const char *device, const tkb_bench_opts *o, bool refresh, bool quiet,
                      bool isolate, double timeout_s, tkb__device_facts *d) {
  int rc = tkb__device_find(cmd, device, o, refresh, isolate, timeout_s, d);
  if (rc) return rc;
  if (refresh) {
    if (d->have_peaks) tkb__peaks_store(cmd, d, quiet);
    return 0;
  }
  char path[sizeof d->peaks_cache];
  tkb__peaks_record r;
  if (tkb__peaks_cache_path(d->name, path, sizeof path) && tkb__peaks_cache_read(path, d, &r)) {
    d->have_peaks = true;
    d->peaks = r.peaks;
    snprintf(d->peaks_date, sizeof d->peaks_date, "%s", r.date);
    d->peaks_load = r.load_avg;
    snprintf(d->peaks_cache, sizeof d->peaks_cache, "%s", path);
    return 0;
  }
  if (!quiet)
    fprintf(stderr, "%s %s: measuring the peaks of %s once for this machine (about a second; "
            "'%s info --peaks' measures them again)\n", tkb__prog, cmd, d->name, tkb__prog);
  tkb__device_facts measured;
  rc = tkb__device_find(cmd, device, o, true, isolate, timeout_s, &measured);
  if (rc) return rc;
  *d = measured;
  if (d->have_peaks) tkb__peaks_store(cmd, d, quiet);
  return 0;
}
