/* reporter.c - the format table (a format's names, the file endings that ask for it and
 * its reporter: a new format is one reporter file and one row here) and the calls every
 * reporter goes through, which keep the counts every format's summary needs. */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The formats' reporters, one file each; the row below is the only other place a
 * format is named. */
extern const tkb__reporter_ops tkb__console_reporter, tkb__json_reporter, tkb__csv_reporter,
    tkb__markdown_reporter, tkb__html_reporter;

static const tkb__format formats[] = {
    {"console", NULL, ".txt .log", true, &tkb__console_reporter},
    {"json", NULL, ".json", false, &tkb__json_reporter},
    {"csv", NULL, ".csv", false, &tkb__csv_reporter},
    {"markdown", "md", ".md .markdown", false, &tkb__markdown_reporter},
    {"html", NULL, ".html .htm", false, &tkb__html_reporter},
};

/* What Google Benchmark's --benchmark_format and --benchmark_out_format mean by "csv":
 * its own columns (gbench_csv.c), not tkbench's. Named csv in messages, as asked. */
extern const tkb__reporter_ops tkb__gbench_csv_reporter;
static const tkb__format gbench_csv = {"csv", NULL, ".csv", false, &tkb__gbench_csv_reporter};

const tkb__format *tkb__format_for_gbench(const tkb__format *f) {
  return f && f->ops == &tkb__csv_reporter ? &gbench_csv : f;
}

const tkb__format *tkb__formats(size_t *n) {
  *n = TKB_ARRAY_LEN(formats);
  return formats;
}

static const tkb__format *find(const char *name) {
  for (size_t i = 0; name && i < TKB_ARRAY_LEN(formats); i++)
    if (!strcmp(name, formats[i].name) || (formats[i].alias && !strcmp(name, formats[i].alias)))
      return &formats[i];
  return NULL;
}

void tkb__format_names(char *buf, size_t cap) {
  size_t len = 0, n = TKB_ARRAY_LEN(formats);
  buf[0] = '\0';
  for (size_t i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ",
                            formats[i].name);
}

void tkb__format_extensions(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < TKB_ARRAY_LEN(formats) && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", formats[i].extensions);
}

tkb_status tkb__format_parse(const char *name, const tkb__format **out) {
  const tkb__format *f = find(name);
  if (f) {
    *out = f;
    return TKB_OK;
  }
  char names[256];
  tkb__format_names(names, sizeof names);
  return tkb_set_error(TKB_ERR_NOT_FOUND, "format \"%s\" is not an output format; expected %s",
                       name ? name : "(null)", names);
}

bool tkb__path_ends_in(const char *path, const char *endings) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash : path, '.');
  const size_t n = dot ? strlen(dot) : 0;
  for (const char *p = endings; dot && *p;) {
    const size_t len = strcspn(p, " ");
    if (len == n && strncasecmp(p, dot, n) == 0) return true;
    p += len;
    p += strspn(p, " ");
  }
  return false;
}

const tkb__format *tkb__format_from_path(const char *path) {
  for (size_t i = 0; i < TKB_ARRAY_LEN(formats); i++)
    if (tkb__path_ends_in(path, formats[i].extensions)) return &formats[i];
  return find(TKB__FILE_FORMAT);
}

tkb_status tkb__reporter_begin(tkb__reporter *r, const tkb__format *fmt, FILE *f,
                               const tkb__report_ctx *ctx, bool color) {
  *r = (tkb__reporter){.format = fmt, .f = f, .ctx = ctx, .color = color};
  if (fmt->ops->state_size) {
    r->state = calloc(1, fmt->ops->state_size);
    if (!r->state)
      return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory starting the %s report", fmt->name);
  }
  tkb_status st = fmt->ops->begin(r);
  if (st) tkb__reporter_discard(r);
  else if (fflush(f) != 0) r->write_errno = errno ? errno : EIO;
  return st;
}

void tkb__reporter_entry(tkb__reporter *r, const tkb__result *res) {
  r->format->ops->entry(r, res);
  r->n_entries++;
  r->n_failed += res->bd == NULL && !res->skipped;
  r->n_skipped += res->skipped;
  if (fflush(r->f) != 0 && !r->write_errno) r->write_errno = errno ? errno : EIO;
}

tkb_status tkb__reporter_end(tkb__reporter *r, const tkb__run_summary *s) {
  tkb_status st = r->format->ops->end(r, s);
  if (fflush(r->f) != 0 && !r->write_errno) r->write_errno = errno ? errno : EIO;
  if (!st && (ferror(r->f) || r->write_errno))
    st = tkb_set_error(TKB_ERR_IO, "writing the %s report failed: %s", r->format->name,
                       strerror(r->write_errno ? r->write_errno : EIO));
  tkb__reporter_discard(r);
  return st;
}

void tkb__reporter_discard(tkb__reporter *r) {
  if (r->format && r->format->ops->release) r->format->ops->release(r);
  free(r->state);
  r->state = NULL;
}

tkb_status tkb__report_write(const tkb__format *fmt, FILE *f, const tkb__report_ctx *ctx,
                             const tkb__result *res, size_t n, const tkb__run_summary *s) {
  tkb__reporter r;
  tkb_status st = tkb__reporter_begin(&r, fmt, f, ctx, false);
  if (st) return st;
  for (size_t i = 0; i < n; i++) tkb__reporter_entry(&r, &res[i]);
  tkb__run_summary whole = {.n_selected = n};
  return tkb__reporter_end(&r, s ? s : &whole);
}
