/*
 * journal.c - the run's journal beside --out: "<out>.partial.jsonl", JSON Lines.
 * Line 1 is {"tkbench_journal": 1, "context": {...}} (the JSON report's context as the
 * run starts); each further line is {"benchmarks": [...]}, one finished entry's rows
 * exactly as the JSON report holds them. Each line is one write() followed by fsync(),
 * so after a crash, a SIGKILL or a power cut the journal holds every entry that had
 * finished, and at worst a cut-off last line, which readers skip with a warning. The
 * final file is written from the journal (any format), and `run --resume` continues it.
 * An flock() held while a run appends keeps a second process from interleaving lines,
 * and no worker process holds the descriptor (tkb__fd_private).
 *
 * Line 1 also records what --resume must match beyond the context: the settings that
 * shape the numbers and the selection (run.c fills both), and a digest of the two,
 * "settings_id", that every entry line repeats. A line the reader cannot use is left
 * out and named, never fatal past line 1: a line that is not JSON (an entry's stray
 * write before the journal was kept from workers, a disk's garbage), an entry line whose
 * settings_id is another run's (journals appended to each other), a second entry line of
 * an entry (the first is kept). So a resumed run keeps each entry exactly once and runs
 * again those whose lines were lost.
 */
#include "jsonw.h"
#include "results.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define SUFFIX ".partial.jsonl"

char *tkb__journal_path(const char *out) {
  size_t n = strlen(out) + sizeof SUFFIX;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s%s", out, SUFFIX);
  return p;
}

static tkb_status io_error(const char *path, const char *what, int err) {
  return tkb_set_error(TKB_ERR_IO, "journal \"%s\": %s: %s", path, what, strerror(err));
}

/* Writes all of text, then syncs it to the disk. A line that could not be written whole
 * is cut away again, so the journal ends with its last complete line. */
static tkb_status write_line(tkb__journal *j, const char *text, size_t len) {
  const off_t before = lseek(j->fd, 0, SEEK_END);
  for (size_t done = 0; done < len;) {
    ssize_t n = write(j->fd, text + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      if (before >= 0 && ftruncate(j->fd, before) != 0) { /* the reader skips a cut line */ }
      return io_error(j->path, "write failed", err);
    }
    done += (size_t)n;
  }
  if (fsync(j->fd) != 0 && errno != EINVAL) return io_error(j->path, "fsync failed", errno);
  return TKB_OK;
}

/* The directory's entry for a new file must reach the disk too, or a power cut could
 * lose the file whose lines were synced. */
static void sync_dir(const char *path) {
  char *dir = tkb__strdup(path);
  if (!dir) return;
  char *slash = strrchr(dir, '/');
  if (slash) slash[slash == dir ? 1 : 0] = '\0';
  int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  free(dir);
}

/* Text written through a jw on one line, into memory. */
typedef struct line {
  tkb__textbuf text;
  jw w;
} line;

static tkb_status line_begin(line *l) {
  tkb_status st = tkb__textbuf_open(&l->text);
  l->w = (jw){.f = l->text.f, .compact = true};
  return st;
}

static tkb_status line_end(tkb__journal *j, line *l) {
  jw_finish(&l->w);
  j->n_replaced += l->w.replaced;
  tkb_status st = tkb__textbuf_close(&l->text);
  if (!st) st = write_line(j, l->text.text, l->text.len);
  tkb__textbuf_free(&l->text);
  return st;
}

static tkb_status lock(tkb__journal *j) {
  if (flock(j->fd, LOCK_EX | LOCK_NB) == 0) return TKB_OK;
  int err = errno;
  if (err == EWOULDBLOCK)
    return tkb_set_error(TKB_ERR_IO, "journal \"%s\" is in use by another tkbench process",
                         j->path);
  return io_error(j->path, "cannot lock it", err);
}

/* A cJSON value through the writer (the journal's first line holds the caller's). */
static void write_cjson(jw *w, const char *key, const cJSON *v) {
  if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
    if (cJSON_IsObject(v)) jw_begin_object(w, key);
    else jw_begin_array(w, key, true);
    for (const cJSON *c = v->child; c; c = c->next) write_cjson(w, cJSON_IsObject(v) ? c->string : NULL, c);
    if (cJSON_IsObject(v)) jw_end_object(w);
    else jw_end_array(w);
  } else if (cJSON_IsString(v)) {
    jw_string(w, key, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    jw_number(w, key, v->valuedouble);
  } else if (cJSON_IsBool(v)) {
    jw_bool(w, key, cJSON_IsTrue(v));
  } else {
    jw_null(w, key);
  }
}

/* The digest of what a run records beyond its context, as 16 hex digits (FNV-1a). */
static void settings_id(const cJSON *extra, char id[17]) {
  char *text = extra ? cJSON_PrintUnformatted(extra) : NULL;
  uint64_t h = 1469598103934665603ull;
  for (const char *p = text ? text : ""; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  free(text);
  snprintf(id, 17, "%016llx", (unsigned long long)h);
}

/* Why path cannot be made: it exists. A run still alive holds its lock; else the run
 * that wrote it was cut short, and --resume continues it. */
static tkb_status exists(const char *path, const char *out) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  const bool busy = fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  if (fd >= 0) close(fd);
  if (busy)
    return tkb_set_error(TKB_ERR_IO, "journal \"%s\" is in use: another tkbench run is writing "
                         "%s now; wait for it to end, or give this run another --out", path, out);
  return tkb_set_error(TKB_ERR_IO, "journal \"%s\" exists: a run that did not finish left it; "
                       "--resume %s continues that run, or remove the journal to start afresh",
                       path, out);
}

tkb_status tkb__journal_create(tkb__journal *j, const char *out, const char *path,
                               const tkb__report_ctx *ctx, const cJSON *extra) {
  *j = (tkb__journal){.fd = -1, .path = path ? tkb__strdup(path) : tkb__journal_path(out)};
  if (!j->path) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  j->fd = open(j->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
  tkb__fd_private(j->fd); /* no worker holds it */
  if (j->fd < 0) {
    int err = errno;
    tkb_status st = err == EEXIST ? exists(j->path, out) : io_error(j->path, "cannot create it", err);
    tkb__journal_close(j);
    return st;
  }
  settings_id(extra, j->settings_id);
  tkb_status st = lock(j);
  line l;
  if (!st) st = line_begin(&l);
  if (!st) {
    tkb__run_summary s = {0};
    jw_begin_object(&l.w, NULL);
    jw_int(&l.w, "tkbench_journal", 1);
    tkb__json_write_context(&l.w, ctx, &s);
    for (const cJSON *c = extra ? extra->child : NULL; c; c = c->next) write_cjson(&l.w, c->string, c);
    jw_string(&l.w, "settings_id", j->settings_id);
    jw_end_object(&l.w);
    st = line_end(j, &l);
  }
  if (st) {
    unlink(j->path);
    tkb__journal_close(j);
    return st;
  }
  sync_dir(j->path);
  return TKB_OK;
}

tkb_status tkb__journal_reopen(tkb__journal *j, const char *out, size_t valid_len,
                               const char *settings_id) {
  *j = (tkb__journal){.fd = -1, .path = tkb__journal_path(out)};
  if (!j->path) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  snprintf(j->settings_id, sizeof j->settings_id, "%s", settings_id ? settings_id : "");
  j->fd = open(j->path, O_WRONLY | O_APPEND | O_CLOEXEC);
  tkb__fd_private(j->fd);
  tkb_status st = j->fd < 0 ? io_error(j->path, "cannot open it to append", errno) : lock(j);
  /* a cut-off last line goes, so the next line starts on a line of its own */
  if (!st && ftruncate(j->fd, (off_t)valid_len) != 0)
    st = io_error(j->path, "cannot cut off its incomplete last line", errno);
  if (st) tkb__journal_close(j);
  return st;
}

tkb_status tkb__entry_line(const tkb__result *r, int experiments, char **text, size_t *len,
                           size_t *replaced) {
  line l;
  *text = NULL;
  *len = 0;
  tkb_status st = line_begin(&l);
  if (st) return st;
  jw_begin_object(&l.w, NULL);
  jw_begin_array(&l.w, "benchmarks", false);
  tkb__json_write_entry(&l.w, r, &tkb__canonical_rows, experiments);
  jw_end_array(&l.w);
  jw_end_object(&l.w);
  jw_finish(&l.w);
  if (replaced) *replaced = l.w.replaced;
  st = tkb__textbuf_close(&l.text);
  if (st) {
    tkb__textbuf_free(&l.text);
    return st;
  }
  *text = l.text.text;
  *len = l.text.len;
  return TKB_OK;
}

tkb_status tkb__entry_line_read(const char *text, size_t len, tkb__result *r) {
  *r = (tkb__result){0};
  cJSON *doc = cJSON_ParseWithLength(text, len);
  if (!doc)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "an entry's line is not JSON (%zu bytes)", len);
  tkb_status st = tkb__result_read(cJSON_GetObjectItemCaseSensitive(doc, "benchmarks"), r);
  cJSON_Delete(doc);
  return st;
}

tkb_status tkb__journal_append(tkb__journal *j, const tkb__result *r, int experiments) {
  char *text;
  size_t len, replaced;
  tkb_status st = tkb__entry_line(r, experiments, &text, &len, &replaced);
  if (st) return st;
  j->n_replaced += replaced;
  /* {"settings_id": "...", "benchmarks": ...}: the line says which run's it is */
  char head[48];
  const int n = snprintf(head, sizeof head, "{\"settings_id\": \"%s\", ", j->settings_id);
  char *line = len && text[0] == '{' ? malloc((size_t)n + len) : NULL;
  if (line) {
    memcpy(line, head, (size_t)n);
    memcpy(line + n, text + 1, len - 1);
    st = write_line(j, line, (size_t)n + len - 1);
  } else {
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory writing journal \"%s\"", j->path);
  }
  free(line);
  free(text);
  return st;
}

void tkb__journal_close(tkb__journal *j) {
  if (j->fd >= 0) {
    tkb__fd_private_release(j->fd);
    close(j->fd); /* drops the lock */
  }
  free(j->path);
  *j = (tkb__journal){.fd = -1};
}

/* ---- reading ---- */

static tkb_status bad_line(const char *path, size_t line_no, const char *what) {
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "journal \"%s\", line %zu: %s", path, line_no,
                       what);
}

/* A line left out, and why, for the caller to say. */
static tkb_status note(tkb__journal_contents *c, const char *path, size_t line_no, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));
static tkb_status note(tkb__journal_contents *c, const char *path, size_t line_no, const char *fmt,
                       ...) {
  char what[600], text[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(text, sizeof text, "journal \"%s\", line %zu %s: left out", path, line_no, what);
  char **n = realloc(c->skipped, (c->n_skipped + 1) * sizeof *n);
  if (!n) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading a journal");
  c->skipped = n;
  if (!(n[c->n_skipped] = tkb__strdup(text)))
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading a journal");
  c->n_skipped++;
  return TKB_OK;
}

static tkb_status add_result(tkb__journal_contents *c, const tkb__result *r, size_t line_no) {
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 16;
    tkb__result *t = realloc(c->results, cap * sizeof *t);
    size_t *l = t ? realloc(c->lines, cap * sizeof *l) : NULL;
    if (t) c->results = t;
    if (l) c->lines = l;
    if (!t || !l) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading a journal");
    c->cap = cap;
  }
  c->lines[c->n] = line_no;
  c->results[c->n++] = *r;
  return TKB_OK;
}

/* The line that already holds entry name (0: none). */
static size_t line_of(const tkb__journal_contents *c, const char *name) {
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->results[i].name, name) == 0) return c->lines[i];
  return 0;
}

/* Line 1: the header. Its context and what it records beyond it are kept. */
static tkb_status read_header(tkb__journal_contents *c, const char *path, cJSON *doc) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "tkbench_journal");
  cJSON *ctx = cJSON_DetachItemFromObjectCaseSensitive(doc, "context");
  if (!cJSON_IsNumber(v) || v->valuedouble != 1 || !cJSON_IsObject(ctx)) {
    cJSON_Delete(ctx);
    return bad_line(path, 1, "is not a tkbench journal's first line ({\"tkbench_journal\": 1, "
                             "\"context\": {...}})");
  }
  c->context = ctx;
  cJSON_DeleteItemFromObjectCaseSensitive(doc, "tkbench_journal");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(doc, "settings_id");
  if (cJSON_IsString(id)) snprintf(c->settings_id, sizeof c->settings_id, "%s", id->valuestring);
  c->recorded = cJSON_Duplicate(doc, true);
  return c->recorded ? TKB_OK : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading a journal");
}

/* One complete line (text[0..len), no newline), the line_no'th after the first. */
static tkb_status read_line(tkb__journal_contents *c, const char *path, size_t line_no,
                            const char *text, size_t len) {
  cJSON *doc = cJSON_ParseWithLength(text, len);
  if (!doc) return note(c, path, line_no, "is not JSON (an entry it held runs again)");
  tkb_status st = TKB_OK;
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(doc, "settings_id");
  if (cJSON_GetObjectItemCaseSensitive(doc, "tkbench_journal")) {
    st = note(c, path, line_no, "is another journal's first line (a journal appended to this one)");
  } else if (*c->settings_id && (!cJSON_IsString(id) || strcmp(id->valuestring, c->settings_id) != 0)) {
    st = note(c, path, line_no, "is from a run with other settings (its settings_id %s, the "
              "journal's %s; its entry runs again)", cJSON_IsString(id) ? id->valuestring : "missing",
              c->settings_id);
  } else {
    tkb__result r;
    if (tkb__result_read(cJSON_GetObjectItemCaseSensitive(doc, "benchmarks"), &r) != TKB_OK) {
      st = note(c, path, line_no, "is not an entry's line (%s; an entry it held runs again)",
                tkb_last_error());
    } else {
      const size_t first = line_of(c, r.name);
      if (first) st = note(c, path, line_no, "holds entry %s again (line %zu has it)", r.name, first);
      else if ((st = add_result(c, &r, line_no)) == TKB_OK) r = (tkb__result){0};
      tkb__result_clear(&r);
    }
  }
  cJSON_Delete(doc);
  return st;
}

tkb_status tkb__journal_parse(const char *text, size_t len, const char *path,
                              tkb__journal_contents *c) {
  *c = (tkb__journal_contents){0};
  tkb_status st = TKB_OK;
  size_t line_no = 0, pos = 0;
  while (!st && pos < len) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    line_no++;
    if (!nl) {
      /* a write cut short: what finished is in the lines before */
      c->cut = true;
      break;
    }
    size_t n = (size_t)(nl - (text + pos));
    bool blank = n == 0 || (n == 1 && text[pos] == '\r');
    if (line_no == 1) {
      cJSON *doc = cJSON_ParseWithLength(text + pos, n);
      st = doc ? read_header(c, path, doc) : bad_line(path, 1, "is not JSON");
      cJSON_Delete(doc);
    } else if (!blank) {
      st = read_line(c, path, line_no, text + pos, n);
    }
    pos += n + 1;
    if (!st) c->valid_len = pos;
  }
  if (!st && !c->context)
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "journal \"%s\" is empty%s: no run's context",
                       path, c->cut ? " but for a cut-off line" : "");
  if (st) tkb__journal_contents_free(c);
  return st;
}

tkb_status tkb__journal_load(const char *path, tkb__journal_contents *c) {
  *c = (tkb__journal_contents){0};
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return io_error(path, "cannot open it", errno);
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return tkb_set_error(TKB_ERR_IO, "journal \"%s\" is not a regular file", path);
  }
  size_t cap = (size_t)sb.st_size + 1, len = 0;
  char *text = malloc(cap);
  tkb_status st = text ? TKB_OK : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading "
                                                "journal \"%s\"", path);
  while (!st) {
    if (len + 1 >= cap) {
      char *t = realloc(text, cap * 2);
      if (!t) {
        st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading journal \"%s\"", path);
        break;
      }
      text = t;
      cap *= 2;
    }
    ssize_t n = read(fd, text + len, cap - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) st = io_error(path, "read failed", errno);
    if (n <= 0) break;
    len += (size_t)n;
  }
  close(fd);
  if (!st) st = tkb__journal_parse(text, len, path, c);
  free(text);
  return st;
}

void tkb__journal_contents_free(tkb__journal_contents *c) {
  for (size_t i = 0; i < c->n; i++) tkb__result_clear(&c->results[i]);
  free(c->results);
  free(c->lines);
  for (size_t i = 0; i < c->n_skipped; i++) free(c->skipped[i]);
  free(c->skipped);
  cJSON_Delete(c->recorded);
  cJSON_Delete(c->context);
  *c = (tkb__journal_contents){0};
}
