/*
 * count.c - the instructions method: per timed call, the instructions the CPU executed
 * (and, under Callgrind, the misses of its simulated caches), counted rather than timed,
 * so that the same build gives the same number whatever else the machine runs. This
 * file picks the source and turns its readings into per-call counts; each source is a
 * file of its own:
 *
 *   callgrind   (count_callgrind.c)  the process runs under Valgrind's Callgrind, whose
 *                                    costs are zeroed before the call and dumped after;
 *                                    exact and the same on every run; 20-100x slower
 *   perf_event  (count_perf.c)       the CPU's own instruction counter (a PMU), user space,
 *                                    every thread; full speed, but machines without a
 *                                    PMU (most VMs and CI runners) have none, and a few
 *                                    instructions of the kernel's entry and exit may vary
 *
 * A process under Callgrind counts with it; any other with perf_event when a PMU answers.
 * `tkbench run` re-executes an entry's worker under Callgrind when it has to
 * (src/cli/count_exec.c); a program calling the library counts with whatever it runs on.
 *
 * What is counted besides the call (the dispatch to the function, the client requests or
 * counter reads themselves, the way to the dump) is the floor: the same path
 * is counted with the function's body replaced by an empty one, and that count is
 * subtracted from every call's, as the wall clock's reads are from a time. An empty
 * function therefore counts 0.
 */
#include "bench.h"

#include <string.h>

/* Gungraun's (iai-callgrind's) estimate: a first-level hit costs 1 cycle, a last-level
 * hit 5, memory 35. */
const char tkb__estimated_cycles_formula[] =
    "L1 hits + 5 x LL hits + 35 x RAM accesses, where L1 hits = Ir + Dr + Dw - (I1mr + D1mr + "
    "D1mw), LL hits = (I1mr + D1mr + D1mw) - (ILmr + DLmr + DLmw), RAM accesses = ILmr + DLmr + "
    "DLmw (Gungraun's estimate)";

double tkb__estimated_cycles(const tkb__events *e) {
  const double *v = e->v;
  const double accesses = v[TKB__EV_IR] + v[TKB__EV_DR] + v[TKB__EV_DW];
  const double l1_misses = v[TKB__EV_I1MR] + v[TKB__EV_D1MR] + v[TKB__EV_D1MW];
  const double ram = v[TKB__EV_ILMR] + v[TKB__EV_DLMR] + v[TKB__EV_DLMW];
  return (accesses - l1_misses) + 5 * (l1_misses - ram) + 35 * ram;
}

const tkb__count_source *tkb__count_source_here(const char **why) {
  if (tkb__count_callgrind.available()) return &tkb__count_callgrind;
  if (tkb__count_perf.available()) return &tkb__count_perf;
  *why = "the instructions method counts under Valgrind's Callgrind (run the program as "
         "valgrind --tool=callgrind PROGRAM; Debian: apt-get install "
         "valgrind; `tkbench run --method instructions` does this itself) or with the CPU's "
         "instruction counter, which this machine does not give (no PMU: a virtual machine "
         "without a virtual PMU, or kernel.perf_event_paranoid above 2)";
  return NULL;
}

tkb_status tkb__counter_open(tkb__counter *c, bool cold_cache, tkb__naming naming) {
  /* opened again after a pause (ab and interleaving pause between experiments): the
   * floor and the totals so far stay */
  const char *why = "";
  const tkb__count_source *src = tkb__count_source_here(&why);
  if (!src) return tkb_set_error(TKB_ERR_UNSUPPORTED, "%s", why);
  c->src = src;
  c->state = NULL;
  tkb_status st = src->open(c);
  if (st) {
    c->state = NULL;
    return st;
  }
  if (cold_cache && !c->cache_events) {
    tkb__counter_close(c);
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "%s: the instructions method counts with %s here, which counts "
                         "instructions alone, and a cold cache changes none of them (under "
                         "Callgrind with its cache simulation it empties the simulated caches)",
                         naming == TKB__NAME_FLAGS ? "--cold-cache" : "cold_cache", src->name);
  }
  c->cold_cache = cold_cache;
  return TKB_OK;
}

void tkb__counter_close(tkb__counter *c) {
  if (c->src && c->state) c->src->close(c);
  c->state = NULL;
}

tkb_status tkb__counter_take(tkb__counter *c, bool floor, tkb__events *out) {
  tkb_status st = c->src->read(c, out);
  if (st || floor) return st;
  for (int k = 0; k < TKB__N_EVENTS; k++) {
    double v = out->v[k] - (c->have_floor ? c->floor.v[k] : 0);
    if (v < 0) v = 0; /* a miss of the floor's that the call did not take */
    out->v[k] = v;
    c->total.v[k] += v;
    if (c->calls == 0 || v < c->min.v[k]) c->min.v[k] = v;
    if (c->calls == 0 || v > c->max.v[k]) c->max.v[k] = v;
  }
  c->calls++;
  return TKB_OK;
}
