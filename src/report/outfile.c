/* outfile.c - output files that are either complete or absent: the text goes to a
 * temporary name in the same directory (so rename() stays on one filesystem and is
 * atomic) and replaces the target only once it is fully written and synced. */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
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

tkb_status tkb__outfile_check(const char *path) {
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
  o->tmp = temp_name(path);
  if (!o->path || !o->tmp) {
    tkb__outfile_abort(o);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  }
  int fd;
  tkb_status st = open_temp(path, o->tmp, &fd);
  if (st) {
    free(o->tmp);
    o->tmp = NULL;
    tkb__outfile_abort(o);
    return st;
  }
  o->f = fdopen(fd, "w");
  if (!o->f) {
    close(fd);
    tkb__outfile_abort(o);
    return why(path, "fdopen failed", errno);
  }
  return TKB_OK;
}

tkb_status tkb__outfile_commit(tkb__outfile *o) {
  tkb_status st = TKB_OK;
  if (fflush(o->f) != 0 || ferror(o->f)) st = why(o->path, "write failed", errno);
  else if (fsync(fileno(o->f)) != 0 && errno != EINVAL) st = why(o->path, "fsync failed", errno);
  if (fclose(o->f) != 0 && !st) st = why(o->path, "close failed", errno);
  o->f = NULL;
  if (!st && rename(o->tmp, o->path) != 0) st = why(o->path, "rename failed", errno);
  if (st) unlink(o->tmp);
  free(o->tmp);
  free(o->path);
  *o = (tkb__outfile){0};
  return st;
}

void tkb__outfile_abort(tkb__outfile *o) {
  if (o->f) fclose(o->f);
  if (o->tmp) unlink(o->tmp);
  free(o->tmp);
  free(o->path);
  *o = (tkb__outfile){0};
}
