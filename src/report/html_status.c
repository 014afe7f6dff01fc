/* html_status.c - what the HTML report says of an entry's numbers: "ok" only when the
 * stopping rule converged and the median's 95% interval is within the rule's target (or
 * within TKB__HTML_WIDE when the rule has none, as the fixed rule has not), else how far
 * they fall short. A status that said "ok" of a +-900% interval would tell a reader to
 * trust a number the run itself doubts. */
#include "html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double tkb__rule_target(const char *rule) {
  /* the ci rule's text, as the run wrote it: "ci:max_noise=0.01,min_samples=10,..." */
  static const char key[] = "max_noise=";
  const char *colon = rule ? strchr(rule, ':') : NULL;
  if (!colon || strncmp(rule, "ci:", 3) != 0) return NAN;
  for (const char *p = colon + 1; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    if (strncmp(p, key, sizeof key - 1) != 0) continue;
    char *end;
    const double v = strtod(p + sizeof key - 1, &end);
    return end != p + sizeof key - 1 && v > 0 && isfinite(v) ? v : NAN;
  }
  return NAN;
}

tkb__html_status tkb__html_status_of(const char *rule, int converged, double halfwidth) {
  const double target = tkb__rule_target(rule);
  tkb__html_status s = {.halfwidth = halfwidth, .target = isfinite(target) ? target : TKB__HTML_WIDE,
                        .target_is_rule = isfinite(target)};
  /* the written interval went through "%.17g" and back: a hair over the target is on it */
  const bool within = halfwidth <= s.target * (1 + 1e-9);
  if (converged == 0) s.verdict = TKB__HTML_UNCONVERGED;
  else if (!isfinite(halfwidth)) s.verdict = TKB__HTML_NO_INTERVAL;
  else s.verdict = within ? TKB__HTML_OK : TKB__HTML_WIDE_INTERVAL;
  return s;
}

/* "±0.42%", "±12%", ">±999%" (a half-width, a fraction of the median). */
static void halfwidth_text(double h, char *buf, size_t cap) {
  if (!isfinite(h)) snprintf(buf, cap, "no interval");
  else if (h >= 9.995) snprintf(buf, cap, ">±999%%");
  else snprintf(buf, cap, h < 0.1 ? "±%.2f%%" : "±%.0f%%", 100 * h);
}

const char *tkb__html_status_class(const tkb__html_status *s) {
  static const char *const names[] = {"ok", "wide", "unconverged", "noint"};
  return names[s->verdict];
}

void tkb__html_status_text(const tkb__html_status *s, char *buf, size_t cap) {
  char h[32];
  halfwidth_text(s->halfwidth, h, sizeof h);
  switch (s->verdict) {
  case TKB__HTML_OK: snprintf(buf, cap, "ok"); break;
  case TKB__HTML_WIDE_INTERVAL: snprintf(buf, cap, "wide (%s)", h); break;
  case TKB__HTML_UNCONVERGED:
    if (isfinite(s->halfwidth)) snprintf(buf, cap, "not converged (%s)", h);
    else snprintf(buf, cap, "not converged");
    break;
  case TKB__HTML_NO_INTERVAL: snprintf(buf, cap, "no interval"); break;
  }
}

void tkb__html_status_why(const tkb__html_status *s, char *buf, size_t cap) {
  /* short: a page of thousands of entries carries one per row (the summary's key says
   * the rest once) */
  char h[32], t[64];
  halfwidth_text(s->halfwidth, h, sizeof h);
  snprintf(t, sizeof t, "±%g%% (%s)", 100 * s->target, /* as the rule was given: ±1%, ±0.5% */
           s->target_is_rule ? "the rule's" : "for a rule without one");
  switch (s->verdict) {
  case TKB__HTML_OK: snprintf(buf, cap, "converged, %s within the target %s", h, t); break;
  case TKB__HTML_WIDE_INTERVAL: snprintf(buf, cap, "%s is wider than the target %s", h, t); break;
  case TKB__HTML_UNCONVERGED: snprintf(buf, cap, "the rule stopped at %s, short of its target %s", h, t); break;
  case TKB__HTML_NO_INTERVAL: snprintf(buf, cap, "too few values for a 95%% interval"); break;
  }
}
