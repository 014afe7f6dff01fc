/*
 * private_fds.c - the descriptors a worker process must not inherit. A worker is a fork
 * of the run, so it holds every descriptor the run has open; the journal among them
 * would let an entry that writes through a stale descriptor corrupt the run's results,
 * and a helper the entry leaves behind would hold the journal's lock. The run marks such
 * descriptors here and the worker closes them before any entry runs. (O_CLOEXEC does not
 * help: a worker forks without exec.)
 */
#include "internal.h"

#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fds[16]; /* a run holds one journal; room for a program running a few */
static size_t n_fds;

void tkb__fd_private(int fd) {
  if (fd < 0) return;
  pthread_mutex_lock(&lock);
  if (n_fds < TKB_ARRAY_LEN(fds)) fds[n_fds++] = fd;
  pthread_mutex_unlock(&lock);
}

void tkb__fd_private_release(int fd) {
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < n_fds; i++)
    if (fds[i] == fd) {
      fds[i] = fds[--n_fds];
      break;
    }
  pthread_mutex_unlock(&lock);
}

void tkb__fd_private_close_all(void) {
  /* after fork only this thread exists: the lock is not taken (its holder may be gone) */
  for (size_t i = 0; i < n_fds; i++) close(fds[i]);
  n_fds = 0;
}
