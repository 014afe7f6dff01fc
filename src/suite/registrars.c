/* registrars.c - TKB_REGISTER: a program's registration functions, queued by
 * constructors before main() and run by tkb_main() (or tkb_run_registrars), where a
 * failure can be reported instead of lost in a constructor. */
#include "runner.h"

#include <pthread.h>

#define MAX_REGISTRARS 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tkb_registrar queue[MAX_REGISTRARS];
static size_t n_queued, n_run;
static bool overflow;

void tkb_add_registrar(tkb_registrar fn) {
  if (!fn) return;
  pthread_mutex_lock(&lock);
  if (n_queued < MAX_REGISTRARS) queue[n_queued++] = fn;
  else overflow = true;
  pthread_mutex_unlock(&lock);
}

tkb_status tkb__run_registrars(void) {
  tkb__clear_error();
  pthread_mutex_lock(&lock);
  size_t end = n_queued;
  bool over = overflow;
  pthread_mutex_unlock(&lock);
  if (over)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                         "more than %d TKB_REGISTER functions; register the rest from one of them",
                         MAX_REGISTRARS);
  for (; n_run < end; n_run++) {
    tkb_status st = queue[n_run]();
    if (st) {
      char msg[900];
      snprintf(msg, sizeof msg, "%s", tkb_last_error());
      n_run++; /* never run it twice */
      return tkb_set_error(st, "registration function %zu (TKB_REGISTER) failed with %s: %s",
                           n_run, tkb_status_name(st), msg);
    }
  }
  return TKB_OK;
}
