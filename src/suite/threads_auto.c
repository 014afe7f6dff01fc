/*
 * threads_auto.c - the cpu ops' OpenMP team when the user fixed none (no --threads, no
 * OMP_NUM_THREADS): as many threads as cores are free when the entry starts.
 *
 * A parallel region ends when its slowest thread does. On a machine where another
 * process keeps a core busy, a team as large as the machine puts one of its threads on
 * that core, where it gets a share of the time; every region then waits for it (a
 * scheduler slice, milliseconds, against calls of microseconds), and the times split
 * into two clusters, fast and stalled. A team of the free cores alone has no such thread:
 * its calls are slower than an idle machine's by the cores given up, and steady.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "runner.h"

#include <sched.h>

/* The cores this process may run on (its affinity mask), else the online ones. */
static int usable_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return tkb__num_cpus();
}

int tkb__threads_auto(void) {
  tkb__load load;
  tkb__load_now(&load);
  const int usable = usable_cores();
  int team = load.others >= 0 ? usable - load.others : usable;
  if (team < 1) team = 1;
  tkb_set_num_threads(team);
  return team;
}
