/*
 * journal.c - the run's journal beside --out: "<out>.partial.jsonl", JSON Lines.
 * Line 1 is {"tkbench_journal": 1, "context": {...}} (the JSON report's context as the
 * run starts); each further line is {"benchmarks": [...]}, one finished entry's rows
 * exactly as the JSON report holds them. Each line is one write() followed by fsync(),
 * so after a crash, a SIGKILL or a power cut the journal holds every entry that had
 * finished, and at worst a cut-off last line, which readers skip with a warning. The
 * final file is written from the journal (any format), and `run --resume` continues it.
 * An flock() held while a run appends keeps a second process from interleaving lines.
 */
#include "jsonw.h"
#include "report.h"

#include <cjson/cJSON.h>
#include <errno.h>
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

tkb_status tkb__journal_create(tkb__journal *j, const char *out, const tkb__report_ctx *ctx) {
  *j = (tkb__journal){.fd = -1, .path = tkb__journal_path(out)};
  if (!j->path) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  j->fd = open(j->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
  tkb__fd_private(j->fd); /* no worker holds it */
  if (j->fd < 0) {
    int err = errno;
    tkb_status st = err == EEXIST
                        ? tkb_set_error(TKB_ERR_IO,
                                        "journal \"%s\" exists: a run that did not finish left "
                                        "it; --resume %s continues that run, or remove the "
                                        "journal to start afresh", j->path, out)
                        : io_error(j->path, "cannot create it", err);
    tkb__journal_close(j);
    return st;
  }
  tkb_status st = lock(j);
  line l;
  if (!st) st = line_begin(&l);
  if (!st) {
    tkb__run_summary s = {0};
    jw_begin_object(&l.w, NULL);
    jw_int(&l.w, "tkbench_journal", 1);
    tkb__json_write_context(&l.w, ctx, &s);
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

tkb_status tkb__journal_reopen(tkb__journal *j, const char *out, size_t valid_len) {
  *j = (tkb__journal){.fd = -1, .path = tkb__journal_path(out)};
  if (!j->path) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
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
  tkb__json_write_entry(&l.w, r, experiments);
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
  st = write_line(j, text, len);
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

static tkb_status add_result(tkb__journal_contents *c, const tkb__result *r) {
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 16;
    tkb__result *t = realloc(c->results, cap * sizeof *t);
    if (!t) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading a journal");
    c->results = t;
    c->cap = cap;
  }
  c->results[c->n++] = *r;
  return TKB_OK;
}

/* One complete line (text[0..len), no newline), the line_no'th. */
static tkb_status read_line(tkb__journal_contents *c, const char *path, size_t line_no,
                            const char *text, size_t len) {
  cJSON *doc = cJSON_ParseWithLength(text, len);
  if (!doc) return bad_line(path, line_no, "is not JSON");
  tkb_status st = TKB_OK;
  if (line_no == 1) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "tkbench_journal");
    cJSON *ctx = cJSON_DetachItemFromObjectCaseSensitive(doc, "context");
    if (!cJSON_IsNumber(v) || v->valuedouble != 1 || !cJSON_IsObject(ctx))
      st = bad_line(path, 1, "is not a tkbench journal's first line ({\"tkbench_journal\": 1, "
                             "\"context\": {...}})");
    if (st) cJSON_Delete(ctx);
    else c->context = ctx;
  } else {
    tkb__result r;
    st = tkb__result_read(cJSON_GetObjectItemCaseSensitive(doc, "benchmarks"), &r);
    if (st) {
      char why[700];
      snprintf(why, sizeof why, "%s", tkb_last_error());
      st = bad_line(path, line_no, why);
    } else if ((st = add_result(c, &r)) != TKB_OK) {
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
    if (!blank || line_no == 1) st = read_line(c, path, line_no, text + pos, n);
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
  cJSON_Delete(c->context);
  *c = (tkb__journal_contents){0};
}
