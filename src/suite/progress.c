/* progress.c - one rewritten status line on stderr while a run goes: which entry, how
 * long so far, about how long is left. Only on a terminal: in a log it would be noise. */
#include "runner.h"

void tkb__progress_begin(tkb__progress *p, FILE *f, bool enabled, size_t n) {
  *p = (tkb__progress){.f = f, .enabled = enabled, .t0_ns = tkb__now_ns(), .n = n};
}

double tkb__progress_elapsed(const tkb__progress *p) {
  return (double)(tkb__now_ns() - p->t0_ns) / 1e9;
}

void tkb__progress_show(tkb__progress *p, size_t k, const char *name) {
  if (!p->enabled) return;
  double elapsed = tkb__progress_elapsed(p);
  /* \r returns to the line's start, \033[K erases what a longer line left behind. */
  fprintf(p->f, "\r\033[K[%zu/%zu] %s  %.1f s elapsed", k + 1, p->n, name, elapsed);
  if (k > 0) fprintf(p->f, ", ~%.1f s left", elapsed / (double)k * (double)(p->n - k));
  fflush(p->f);
  p->showing = true;
}

void tkb__progress_clear(tkb__progress *p) {
  if (!p->enabled || !p->showing) return;
  fputs("\r\033[K", p->f);
  fflush(p->f);
  p->showing = false;
}
