/* outfile.c - output files that are either complete or absent: the report is collected
 * in memory while the run goes, then written to a temporary name in the target's
 * directory (so rename() stays on one filesystem and is atomic) and renamed over the
 * target once it is fully written and synced. Nothing touches the disk before the run
 * ends, so a run killed midway leaves no temporary behind. */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Opens the temporary with O_EXCL so a stale or hostile file of that name is never
 * followed or reused. */
static tkb_status open_temp(const char *path, const char *tmp, int *fd) {
  const char *slash = strrchr(path, '/');
  if (!*path || (slash && slash[1] == '\0'))
    return tkb_set_error(TKB_ERR_IO, "cannot write output file \"%s\": the name is a directory",
                         path);
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return tkb_set_error(TKB_ERR_IO, "cannot write output file \"%s\": it is a directory", path);
  unlink(tmp); /* our own pid's leftover from an earlier crash */
  *fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
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

tkb_status tkb__outfile_check(const char *path) {
  remove_stale(path);
  char *tmp = temp_name(path);
  if (!tmp) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  int fd;
  tkb_status st = open_temp(path, tmp, &fd);
  if (!st) {
    close(fd);
    unlink(tmp);
  }
  free(tmp);
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

/* The collected text onto disk under the temporary name, synced, renamed over path. */
static tkb_status land(const char *path, const char *text, size_t len) {
  char *tmp = temp_name(path);
  if (!tmp) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  int fd;
  tkb_status st = open_temp(path, tmp, &fd);
  if (st) {
    free(tmp);
    return st;
  }
  for (size_t done = 0; !st && done < len;) {
    ssize_t n = write(fd, text + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) st = why(path, "write failed", n < 0 ? errno : EIO);
    else done += (size_t)n;
  }
  if (!st && fsync(fd) != 0 && errno != EINVAL) st = why(path, "fsync failed", errno);
  if (close(fd) != 0 && !st) st = why(path, "close failed", errno);
  if (!st && rename(tmp, path) != 0) st = why(path, "rename failed", errno);
  if (st) unlink(tmp);
  free(tmp);
  return st;
}

tkb_status tkb__outfile_commit(tkb__outfile *o) {
  tkb_status st = tkb__textbuf_close(&o->text);
  if (st) st = why(o->path, "out of memory collecting the report", ENOMEM);
  else st = land(o->path, o->text.text ? o->text.text : "", o->text.len);
  tkb__outfile_abort(o);
  return st;
}

void tkb__outfile_abort(tkb__outfile *o) {
  tkb__textbuf_free(&o->text);
  free(o->path);
  *o = (tkb__outfile){0};
}
