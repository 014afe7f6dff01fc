/* outfile.c - output files that are either complete or absent: the report is collected
 * in memory while the run goes, then written to a temporary name in the target's
 * directory (so rename() stays on one filesystem and is atomic) and renamed over the
 * target once it is fully written and synced. Nothing touches the disk before the run
 * ends, so a run killed midway leaves no temporary behind.
 *
 * Only a regular file (or a name that does not exist yet) is replaced that way. A
 * rename over anything else would destroy it: as root, `--out /dev/null` would leave a
 * regular file where the device was. So the target decides:
 *   - the process's own descriptors (/dev/stdout, /dev/stderr, /dev/fd/N,
 *     /proc/self/fd/N: Google Benchmark's --benchmark_out=/dev/stdout) are written
 *     through the descriptor itself, as the shell opened it (appending, a pipe, a file);
 *   - a character device or a FIFO is opened and written through (a FIFO's reader must
 *     come within a few seconds);
 *   - a symlink is followed: its target is what is written (atomically, when that is a
 *     regular file or does not exist yet), and the link stays;
 *   - a block device or a socket is refused.
 * A stream gets the whole text at the end in one go, as a file does. */
#define _DEFAULT_SOURCE /* realpath */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long a FIFO's reader may take to open it. */
#define FIFO_WAIT_MS 10000

/* "<dir>/.<base>.tmp.<pid>" for path "<dir>/<base>". */
static char *temp_name(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
  const char *base = slash ? slash + 1 : path;
  size_t cap = strlen(path) + 32;
  char *t = malloc(cap);
  if (t) snprintf(t, cap, "%.*s.%s.tmp.%ld", (int)dir_len, path, base, (long)getpid());
  return t;
}

static tkb_status why(const char *path, const char *what, int err) {
  return tkb_set_error(TKB_ERR_IO, "cannot write output file \"%s\": %s (%s)", path, what,
                       strerror(err));
}

/* ---- what the target is ---- */

typedef enum kind {
  REPLACE,    /* a regular file, or none yet: the temporary renamed over `file` */
  OWN_FD,     /* one of this process's descriptors: `fd` */
  THROUGH,    /* a character device or a FIFO: opened and written */
} kind;

typedef struct target {
  kind kind;
  int fd;          /* OWN_FD */
  bool fifo;       /* THROUGH */
  char *file;      /* REPLACE: the path written (a symlink's target); malloc'd */
} target;

/* /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N: N; else -1. */
static int own_descriptor(const char *path) {
  if (!strcmp(path, "/dev/stdout")) return STDOUT_FILENO;
  if (!strcmp(path, "/dev/stderr")) return STDERR_FILENO;
  const char *digits = !strncmp(path, "/dev/fd/", 8) ? path + 8
                       : !strncmp(path, "/proc/self/fd/", 14) ? path + 14 : NULL;
  if (!digits || !*digits) return -1;
  char *end;
  long n = strtol(digits, &end, 10);
  return *end || n < 0 || n > INT_MAX ? -1 : (int)n;
}

/* The file a chain of symlinks ends at, existing or not (NULL: a loop, or no memory). */
static char *follow(const char *path) {
  char *cur = tkb__strdup(path);
  for (int hops = 0; cur && hops < 40; hops++) {
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
    char link[PATH_MAX];
    const ssize_t n = readlink(cur, link, sizeof link - 1);
    if (n < 0) return cur;
    link[n] = '\0';
    char *next;
    if (link[0] == '/') {
      next = tkb__strdup(link);
    } else { /* relative to the link's own directory */
      const char *slash = strrchr(cur, '/');
      const size_t dir = slash ? (size_t)(slash - cur) + 1 : 0;
      next = malloc(dir + (size_t)n + 1);
      if (next) snprintf(next, dir + (size_t)n + 1, "%.*s%s", (int)dir, cur, link);
    }
    free(cur);
    cur = next;
  }
  free(cur);
  return NULL;
}

static tkb_status classify(const char *path, target *t) {
  *t = (target){.fd = -1};
  const char *slash = strrchr(path, '/');
  if (!*path || (slash && slash[1] == '\0'))
    return tkb_set_error(TKB_ERR_IO, "cannot write output file \"%s\": the name is a directory", path);
  const int own = own_descriptor(path);
  if (own >= 0) {
    const int flags = fcntl(own, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
      return tkb_set_error(TKB_ERR_IO, "cannot write output file \"%s\": descriptor %d is not open "
                           "for writing", path, own);
    t->kind = OWN_FD;
    t->fd = own;
    return TKB_OK;
  }
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return tkb_set_error(TKB_ERR_IO, "cannot write output file \"%s\": it is a directory", path);
    if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))
      return tkb_set_error(TKB_ERR_IO, "cannot write output file \"%s\": it is a %s; a report goes "
                           "to a regular file, a character device or a FIFO", path,
                           S_ISBLK(st.st_mode) ? "block device" : "socket");
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      t->kind = THROUGH;
      t->fifo = S_ISFIFO(st.st_mode);
      return TKB_OK;
    }
  }
  t->kind = REPLACE;
  t->file = follow(path);
  if (!t->file)
    return tkb_set_error(TKB_ERR_IO, "cannot write output file \"%s\": its symlinks do not end "
                         "(a loop)", path);
  return TKB_OK;
}

bool tkb__outfile_is_stream(const char *path) {
  target t;
  const bool stream = classify(path, &t) == TKB_OK && t.kind != REPLACE;
  free(t.file);
  return stream;
}

/* ---- a regular file: the temporary renamed over it ---- */

/* Opens the temporary with O_EXCL so a stale or hostile file of that name is never
 * followed or reused. */
static tkb_status open_temp(const char *path, const char *tmp, int *fd) {
  unlink(tmp); /* our own pid's leftover from an earlier crash */
  *fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (*fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return why(path, "its directory does not exist", err);
    if (err == EACCES || err == EPERM || err == EROFS)
      return why(path, "its directory is not writable", err);
    return why(path, "cannot create a file there", err);
  }
  return TKB_OK;
}

/* Removes "<dir>/.<base>.tmp.<pid>" files of processes that are gone (killed between
 * writing the temporary and renaming it): nothing else would ever remove them. */
static void remove_stale(const char *path) {
  const char *slash = strrchr(path, '/');
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
  const char *base = slash ? slash + 1 : path;
  DIR *d = opendir(dir);
  if (!d) return;
  const size_t blen = strlen(base);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    const char *n = e->d_name;
    if (n[0] != '.' || strncmp(n + 1, base, blen) != 0 || strncmp(n + 1 + blen, ".tmp.", 5) != 0)
      continue;
    const char *digits = n + 1 + blen + 5;
    char *end;
    long pid = strtol(digits, &end, 10);
    if (end == digits || *end || pid <= 0 || pid == (long)getpid()) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
    char full[8192];
    snprintf(full, sizeof full, "%s%s%s", dir, slash ? "" : "/", n);
    unlink(full);
  }
  closedir(d);
}

static tkb_status write_all(const char *path, int fd, const char *text, size_t len) {
  for (size_t done = 0; done < len;) {
    ssize_t n = write(fd, text + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) { /* a descriptor left non-blocking: wait for room */
      nanosleep(&(struct timespec){0, 1000000}, NULL);
      continue;
    }
    if (n <= 0) return why(path, "write failed", n < 0 ? errno : EIO);
    done += (size_t)n;
  }
  return TKB_OK;
}

/* The collected text onto disk under the temporary name, synced, renamed over file
 * (path names the target in messages). */
static tkb_status land(const char *path, const char *file, const char *text, size_t len) {
  char *tmp = temp_name(file);
  if (!tmp) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  int fd;
  tkb_status st = open_temp(path, tmp, &fd);
  if (st) {
    free(tmp);
    return st;
  }
  st = write_all(path, fd, text, len);
  if (!st && fsync(fd) != 0 && errno != EINVAL) st = why(path, "fsync failed", errno);
  if (close(fd) != 0 && !st) st = why(path, "close failed", errno);
  if (!st && rename(tmp, file) != 0) st = why(path, "rename failed", errno);
  if (st) unlink(tmp);
  free(tmp);
  return st;
}

/* ---- a stream: written through ---- */

/* Opens a character device or a FIFO for writing. A FIFO without a reader refuses a
 * non-blocking open (ENXIO): its reader gets FIFO_WAIT_MS to come, instead of a blocking
 * open that would wait for ever. */
static tkb_status open_through(const char *path, bool fifo, int *fd) {
  for (int waited = 0;; waited += 20) {
    *fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (*fd >= 0) break;
    if (errno != ENXIO || !fifo || waited >= FIFO_WAIT_MS) {
      const int err = errno;
      if (fifo && err == ENXIO)
        return tkb_set_error(TKB_ERR_IO, "cannot write output file \"%s\": it is a FIFO and no "
                             "process opened it for reading within %d s", path, FIFO_WAIT_MS / 1000);
      return why(path, "cannot open it", err);
    }
    nanosleep(&(struct timespec){0, 20000000}, NULL);
  }
  const int flags = fcntl(*fd, F_GETFL);
  if (flags >= 0) fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK); /* a slow reader is waited for */
  return TKB_OK;
}

static tkb_status land_stream(const char *path, const target *t, const char *text, size_t len) {
  if (t->kind == OWN_FD) {
    /* what stdio holds for that descriptor goes first */
    if (t->fd == STDOUT_FILENO) fflush(stdout);
    if (t->fd == STDERR_FILENO) fflush(stderr);
    return write_all(path, t->fd, text, len);
  }
  int fd;
  tkb_status st = open_through(path, t->fifo, &fd);
  if (st) return st;
  st = write_all(path, fd, text, len);
  if (close(fd) != 0 && !st && errno != EINTR) st = why(path, "close failed", errno);
  return st;
}

/* ---- the API ---- */

tkb_status tkb__outfile_check(const char *path) {
  target t;
  tkb_status st = classify(path, &t);
  if (!st && t.kind == THROUGH && access(path, W_OK) != 0)
    st = why(path, "it cannot be opened for writing", errno);
  /* a FIFO is not opened here: its reader would see the end of file at once */
  if (!st && t.kind == REPLACE) {
    remove_stale(t.file);
    char *tmp = temp_name(t.file);
    int fd;
    if (!tmp) st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
    else if (!(st = open_temp(path, tmp, &fd))) {
      close(fd);
      unlink(tmp);
    }
    free(tmp);
  }
  free(t.file);
  return st;
}

tkb_status tkb__outfile_open(tkb__outfile *o, const char *path) {
  *o = (tkb__outfile){0};
  o->path = tkb__strdup(path);
  if (!o->path || tkb__textbuf_open(&o->text) != TKB_OK) {
    tkb__outfile_abort(o);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for output file \"%s\"", path);
  }
  o->f = o->text.f;
  return TKB_OK;
}

tkb_status tkb__outfile_commit(tkb__outfile *o) {
  tkb_status st = tkb__textbuf_close(&o->text);
  target t = {0};
  if (st) st = why(o->path, "out of memory collecting the report", ENOMEM);
  else st = classify(o->path, &t);
  if (!st) {
    const char *text = o->text.text ? o->text.text : "";
    st = t.kind == REPLACE ? land(o->path, t.file, text, o->text.len)
                           : land_stream(o->path, &t, text, o->text.len);
  }
  free(t.file);
  tkb__outfile_abort(o);
  return st;
}

void tkb__outfile_abort(tkb__outfile *o) {
  tkb__textbuf_free(&o->text);
  free(o->path);
  *o = (tkb__outfile){0};
}
