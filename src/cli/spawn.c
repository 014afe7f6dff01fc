/* spawn.c - running other programs, and this one again: sbatch for `slurm`, one worker
 * per device for --device KIND:all. Children get no stdin (a batch job has none either),
 * so nothing waits on a terminal. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *tkb__self_exe(void) {
  static char path[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
  if (len <= 0) return tkb__exe;
  path[len] = '\0';
  return path;
}

pid_t tkb__spawn(char *const argv[], int out_fd, int err_fd) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa)) return -1;
  int rc = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (!rc && out_fd >= 0) rc = posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
  if (!rc && err_fd >= 0) rc = posix_spawn_file_actions_adddup2(&fa, err_fd, STDERR_FILENO);
  pid_t pid = -1;
  if (!rc) rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc) {
    errno = rc;
    return -1;
  }
  return pid;
}

int tkb__wait(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

int tkb__run_capture(char *const argv[], char **out) {
  *out = NULL;
  int fds[2];
  if (pipe(fds)) return -1;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  pid_t pid = tkb__spawn(argv, fds[1], -1);
  int saved = errno;
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    errno = saved;
    return -1;
  }
  size_t len = 0, cap = 4096;
  char *text = malloc(cap);
  for (ssize_t got; text;) {
    if (len + 1 == cap) {
      char *t = realloc(text, cap *= 2);
      if (!t) free(text);
      text = t;
      if (!text) break;
    }
    got = read(fds[0], text + len, cap - 1 - len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    len += (size_t)got;
  }
  close(fds[0]);
  if (text) text[len] = '\0';
  *out = text;
  return tkb__wait(pid);
}
