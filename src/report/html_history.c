/*
 * html_history.c - the history page: one self-contained HTML file of what a results store
 * holds (`tkbench report --history DB`). First the change points as a sortable table (the
 * regressions, slower first, each linked to its entry), then a sortable, filterable index
 * of the entries, then per entry its medians over time on every machine (one colour per
 * machine, each median's 95% interval as a bar), the change points drawn between the runs
 * they fall between and listed with their commit ranges under the plot.
 *
 * Like the run's report (html_page.c) it asks nothing of the network: the style sheet and
 * the script (sorting, the name filter, #filter=REGEX in the link) are the same, inlined,
 * and every stored string (entry names, machines, branches, commits) is escaped.
 */
#include "html.h"
#include "regressions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COLOURS 8

/* What the history page adds to the report's style: a colour per machine, the lines,
 * the interval bars and the change points. */
static const char *const history_css =
    ".m0{--c:#1f5fae}.m1{--c:#d1495b}.m2{--c:#2a9d4b}.m3{--c:#8e44ad}.m4{--c:#e08a00}.m5{--c:#00838f}"
    ".m6{--c:#6d4c41}.m7{--c:#c2185b}"
    ".hl{fill:none;stroke:var(--c);stroke-width:1.2;opacity:.7}.hci{stroke:var(--c);stroke-width:1.5;opacity:.3}"
    ".hd{stroke:var(--c);stroke-width:4.5;stroke-linecap:round}"
    ".cpl{stroke:var(--c);stroke-width:1.3;stroke-dasharray:4 3}.cp.machine .cpl{stroke-dasharray:1 3}"
    ".cpt{font-size:10.5px;font-weight:600;fill:var(--c)}"
    ".sw{display:inline-block;width:11px;height:11px;border-radius:2px;background:var(--c);margin-right:5px;"
    "vertical-align:-1px}.machines{margin:4px 0 0;padding:0;list-style:none}"
    "#regressions td:nth-child(2){font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;"
    "white-space:normal;min-width:220px;word-break:break-all}#regressions td.l{white-space:normal;min-width:120px}.steps{margin:4px 0 0 0;padding-left:18px;color:#333}"
    ".wide{overflow-x:auto}td.slower,li.slower b{color:#c81e1e}td.faster,li.faster b{color:#1a7f37}";

static void esc(FILE *f, const char *s) { tkb__svg_escape(f, s ? s : ""); }

/* ---- the page's runs: every machine's, in time order ---- */

typedef struct page_run {
  double time;
  int machine;
  size_t k; /* the machine's run number */
} page_run;

static int by_time(const void *a, const void *b) {
  const page_run *x = a, *y = b;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  if (x->machine != y->machine) return x->machine - y->machine;
  return (x->k > y->k) - (x->k < y->k);
}

/* ---- entries: a name and its series on each machine ---- */

typedef struct page_entry {
  const char *name;
  int machine;
  size_t series;
} page_entry;

static int by_name(const void *a, const void *b) {
  const page_entry *x = a, *y = b;
  const int c = strcmp(x->name, y->name);
  return c ? c : x->machine - y->machine;
}

typedef struct page {
  const tkb__trend *t;
  const tkb__regressions *rs;
  page_run *runs;
  size_t n_runs;
  int **axis;          /* axis[m][k]: machine m's run k on the page's run axis */
  double *run_time;
  page_entry *entries; /* by name, then machine */
  size_t n_entries;
  size_t *first;       /* the first row of each distinct name in entries */
  size_t n_names;
} page;

static void page_free(page *p) {
  for (size_t m = 0; p->axis && m < p->t->n_machines; m++) free(p->axis[m]);
  free(p->axis);
  free(p->runs);
  free(p->run_time);
  free(p->entries);
  free(p->first);
}

static tkb_status page_make(const tkb__trend *t, const tkb__regressions *rs, page *p) {
  *p = (page){.t = t, .rs = rs};
  size_t runs = 0;
  for (size_t m = 0; m < t->n_machines; m++) runs += t->machines[m].runs.n;
  p->runs = malloc((runs ? runs : 1) * sizeof *p->runs);
  p->run_time = malloc((runs ? runs : 1) * sizeof *p->run_time);
  p->axis = calloc(t->n_machines ? t->n_machines : 1, sizeof *p->axis);
  p->entries = malloc((t->n_series ? t->n_series : 1) * sizeof *p->entries);
  p->first = malloc((t->n_series ? t->n_series : 1) * sizeof *p->first);
  if (!p->runs || !p->run_time || !p->axis || !p->entries || !p->first) goto oom;
  for (size_t m = 0; m < t->n_machines; m++) {
    const tkb__trend_machine *mc = &t->machines[m];
    if (!(p->axis[m] = malloc((mc->runs.n ? mc->runs.n : 1) * sizeof **p->axis))) goto oom;
    for (size_t k = 0; k < mc->runs.n; k++)
      p->runs[p->n_runs++] = (page_run){(double)mc->runs.items[k].time, (int)m, k};
    for (size_t i = 0; i < mc->list.n; i++)
      if (mc->series[i].selected) p->entries[p->n_entries++] = (page_entry){mc->list.items[i].name, (int)m, i};
  }
  qsort(p->runs, p->n_runs, sizeof *p->runs, by_time);
  for (size_t g = 0; g < p->n_runs; g++) {
    p->axis[p->runs[g].machine][p->runs[g].k] = (int)g;
    p->run_time[g] = p->runs[g].time;
  }
  qsort(p->entries, p->n_entries, sizeof *p->entries, by_name);
  for (size_t i = 0; i < p->n_entries; i++)
    if (!i || strcmp(p->entries[i].name, p->entries[i - 1].name)) p->first[p->n_names++] = i;
  return TKB_OK;
oom:
  page_free(p);
  return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory writing the history page");
}

/* The rows of the name that starts at entries[first[k]]: [*begin, *end). */
static void name_rows(const page *p, size_t k, size_t *begin, size_t *end) {
  *begin = p->first[k];
  *end = k + 1 < p->n_names ? p->first[k + 1] : p->n_entries;
}

/* ---- writing ---- */

static void when(FILE *f, int64_t t) {
  char b[40] = "?";
  const time_t tt = (time_t)t;
  struct tm tm;
  if (gmtime_r(&tt, &tm)) strftime(b, sizeof b, "%Y-%m-%d %H:%M", &tm);
  fputs(b, f);
}

static void value_cell(FILE *f, double v, const char *unit) {
  char b[48];
  tkb__regression_value_text(v, unit ? unit : "ns", b, sizeof b);
  fprintf(f, "<td data-v=\"%.6g\">", v);
  esc(f, b);
  fputs("</td>", f);
}

/* The anchor of an entry's section: its position among the page's names. */
static long section_of(const page *p, const char *name) {
  size_t lo = 0, hi = p->n_names;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const int c = strcmp(p->entries[p->first[mid]].name, name);
    if (!c) return (long)mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

static int machine_index(const tkb__trend *t, const tkb__trend_machine *m) { return (int)(m - t->machines); }

static void machines_list(FILE *f, const tkb__trend *t) {
  fputs("<ul class=\"machines\">", f);
  for (size_t m = 0; m < t->n_machines; m++) {
    const tkb__trend_machine *mc = &t->machines[m];
    const tkb__history_run *last = &mc->runs.items[mc->runs.n - 1];
    fprintf(f, "<li class=\"m%zu\"><span class=\"sw\"></span><code>", m % COLOURS);
    esc(f, mc->key);
    fputs("</code>: ", f);
    esc(f, last->host);
    if (last->cpu_model) {
      fputs(", ", f);
      esc(f, last->cpu_model);
    }
    if (last->device && strncmp(last->device, "cpu", 3)) {
      fputs(", ", f);
      esc(f, last->device);
      if (last->device_name) {
        fputc(' ', f);
        esc(f, last->device_name);
      }
    }
    fprintf(f, "; %zu runs, ", mc->runs.n);
    when(f, mc->runs.items[0].time);
    fputs(" to ", f);
    when(f, last->time);
    fputs(" UTC", f);
    for (size_t j = 0; j < 2; j++)
      if (mc->peaks[j].n) {
        fputs("; measured ", f);
        esc(f, mc->peaks[j].name);
        fprintf(f, " in %zu", mc->peaks[j].n);
      }
    fputs("</li>", f);
  }
  fputs("</ul>", f);
}

static void run_cell(FILE *f, const tkb__history_run *r) {
  char b[200];
  tkb__regression_run_text(r, b, sizeof b);
  fprintf(f, "<td class=\"l\" data-v=\"%lld\">", (long long)r->time);
  esc(f, b);
  fputs("</td>", f);
}

static void regressions_table(FILE *f, const page *p) {
  const tkb__regressions *rs = p->rs;
  fprintf(f, "<h2 id=\"s-regressions\">Change points</h2><p>%zu change point%s: %zu slower, %zu faster; %zu look%s "
          "like the machine's; %zu in each machine's latest %zu runs.</p>",
          rs->n, rs->n == 1 ? "" : "s", rs->n_slower, rs->n_faster, rs->n_machine, rs->n_machine == 1 ? "s" : "",
          rs->n_latest, p->t->opts.latest);
  if (!rs->n) return;
  fputs("<div class=\"wide\"><table class=\"sortable\" id=\"regressions\"><thead><tr><th class=\"l\">Step</th>"
        "<th class=\"l\">Entry</th>"
        "<th class=\"l\">Machine</th><th data-type=\"num\">Change</th><th data-type=\"num\">95% CI</th>"
        "<th data-type=\"num\">p</th><th data-type=\"num\">Before</th><th data-type=\"num\">After</th>"
        "<th class=\"l\">Last run before</th><th class=\"l\">First run after</th><th class=\"l\">Cause</th>"
        "</tr></thead><tbody>",
        f);
  for (size_t i = 0; i < rs->n; i++) {
    const tkb__regression *r = &rs->items[i];
    const tkb__trend_step *s = r->step;
    const char *dir = r->slower ? "slower" : "faster";
    char change[24], lo[24], hi[24], pv[16], cause[300];
    tkb__fmt_change(s->cp.ratio, change, sizeof change);
    tkb__fmt_change(s->cp.ratio_low, lo, sizeof lo);
    tkb__fmt_change(s->cp.ratio_high, hi, sizeof hi);
    tkb__fmt_p(s->cp.p_value, pv, sizeof pv);
    tkb__regression_cause_text(rs, r, cause, sizeof cause);
    fprintf(f, "<tr><td class=\"l %s\">%s%s</td><td class=\"l\"><a href=\"#e%ld\">", dir, dir, s->latest ? ", latest" : "",
            section_of(p, r->series->series->name));
    esc(f, r->series->series->name);
    fprintf(f, "</a></td><td class=\"l m%d\"><span class=\"sw\"></span>", machine_index(p->t, r->machine) % COLOURS);
    esc(f, r->machine->key);
    fprintf(f, "</td><td data-v=\"%.6g\">%s</td><td data-v=\"%.6g\">%s … %s</td><td data-v=\"%.6g\">%s</td>",
            s->cp.ratio, change, s->cp.ratio_low, lo, hi, s->cp.p_value, pv);
    value_cell(f, s->cp.before, tkb__regression_unit(r));
    value_cell(f, s->cp.after, tkb__regression_unit(r));
    run_cell(f, tkb__trend_run(r->machine, s->run_before));
    run_cell(f, tkb__trend_run(r->machine, s->run_after));
    fputs("<td class=\"l\">", f);
    esc(f, cause);
    fputs("</td></tr>\n", f);
  }
  fputs("</tbody></table></div>", f);
}

/* The latest usable median of a series (NaN: none). */
static double latest_median(const tkb__trend_series *s) {
  return s->n ? s->series->points[s->point[s->n - 1]].median : NAN;
}

static void summary_table(FILE *f, const page *p) {
  fputs("<h2 id=\"s-summary\">Entries</h2><table id=\"summary\" class=\"sortable\"><thead><tr><th>Entry</th>"
        "<th class=\"l\">Op</th><th class=\"l\">Impl</th><th class=\"l\">Mode</th><th data-type=\"num\">Machines</th>"
        "<th data-type=\"num\">Points</th><th data-type=\"num\">Latest median</th>"
        "<th data-type=\"num\">Change points</th></tr></thead><tbody>",
        f);
  for (size_t k = 0; k < p->n_names; k++) {
    size_t b, e, points = 0, steps = 0;
    name_rows(p, k, &b, &e);
    double latest = NAN, latest_time = -INFINITY;
    for (size_t i = b; i < e; i++) {
      const tkb__trend_series *s = &p->t->machines[p->entries[i].machine].series[p->entries[i].series];
      points += s->n;
      steps += s->n_steps;
      if (s->n && (double)s->series->points[s->point[s->n - 1]].time > latest_time) {
        latest_time = (double)s->series->points[s->point[s->n - 1]].time;
        latest = latest_median(s);
      }
    }
    const tkb__history_series *se = p->t->machines[p->entries[b].machine].list.items + p->entries[b].series;
    fprintf(f, "<tr><td><a href=\"#e%zu\">", k);
    esc(f, se->name);
    fputs("</a></td><td class=\"l\">", f);
    esc(f, se->op);
    fputs("</td><td class=\"l\">", f);
    esc(f, se->impl);
    fputs("</td><td class=\"l\">", f);
    esc(f, se->mode);
    fprintf(f, "</td><td>%zu</td><td>%zu</td>", e - b, points);
    if (isfinite(latest)) value_cell(f, latest, "ns");
    else fputs("<td data-v=\"\">-</td>", f);
    fprintf(f, "<td>%zu</td></tr>\n", steps);
  }
  fputs("</tbody></table>", f);
}

/* One entry's section: its plot over every machine and its change points listed. */
static tkb_status entry_section(FILE *f, const page *p, size_t k) {
  size_t b, e;
  name_rows(p, k, &b, &e);
  const size_t n = e - b;
  tkb__history_line *lines = calloc(n, sizeof *lines);
  int *runs = NULL;
  double *values = NULL;
  tkb__history_mark *marks = NULL;
  char (*labels)[24] = NULL, (*tips)[512] = NULL;
  size_t points = 0, steps = 0;
  for (size_t i = b; i < e; i++) {
    const tkb__trend_series *s = &p->t->machines[p->entries[i].machine].series[p->entries[i].series];
    points += s->n;
    steps += s->n_steps;
  }
  if (lines) {
    runs = malloc((points ? points : 1) * sizeof *runs);
    values = malloc(3 * (points ? points : 1) * sizeof *values);
    marks = malloc((steps ? steps : 1) * sizeof *marks);
    labels = malloc((steps ? steps : 1) * sizeof *labels);
    tips = malloc((steps ? steps : 1) * sizeof *tips);
  }
  tkb_status st = lines && runs && values && marks && labels && tips
                      ? TKB_OK
                      : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory writing the history page");
  const tkb__history_series *first = NULL;
  size_t at = 0, mk = 0;
  for (size_t i = b; !st && i < e; i++) {
    const int m = p->entries[i].machine;
    const tkb__trend_machine *mc = &p->t->machines[m];
    const tkb__trend_series *s = &mc->series[p->entries[i].series];
    if (!first) first = s->series;
    tkb__history_line *ln = &lines[i - b];
    *ln = (tkb__history_line){.colour = m % COLOURS, .run = runs + at, .median = values + at,
                              .lo = values + points + at, .hi = values + 2 * points + at, .n = (int)s->n,
                              .marks = marks + mk, .n_marks = (int)s->n_steps};
    for (size_t j = 0; j < s->n; j++) {
      const tkb__history_point *pt = &s->series->points[s->point[j]];
      runs[at + j] = p->axis[m][s->run[j]];
      values[at + j] = pt->median;
      values[points + at + j] = pt->ci_low;
      values[2 * points + at + j] = pt->ci_high;
    }
    at += s->n;
    for (size_t j = 0; j < s->n_steps; j++, mk++) {
      const tkb__trend_step *x = &s->steps[j];
      char from[200], to[200];
      tkb__fmt_change(x->cp.ratio, labels[mk], sizeof labels[mk]);
      tkb__regression_run_text(tkb__trend_run(mc, x->run_before), from, sizeof from);
      tkb__regression_run_text(tkb__trend_run(mc, x->run_after), to, sizeof to);
      snprintf(tips[mk], sizeof tips[mk], "%s on %s: %s between %s and %s; %s", s->series->name, mc->key,
               labels[mk], from, to, x->label.cause == TKB__CAUSE_MACHINE ? "the machine's" : "the code's");
      marks[mk] = (tkb__history_mark){.run_before = p->axis[m][x->run_before], .run_after = p->axis[m][x->run_after],
                                      .label = labels[mk], .tooltip = tips[mk],
                                      .cls = x->cp.ratio > 1 ? (x->label.cause == TKB__CAUSE_MACHINE ? "slower machine" : "slower code")
                                                            : (x->label.cause == TKB__CAUSE_MACHINE ? "faster machine" : "faster code")};
    }
  }
  if (!st) {
    fprintf(f, "<section class=\"entry\" id=\"e%zu\"><h3>", k);
    esc(f, first->name);
    fputs("</h3><p class=\"facts\">", f);
    const char *facts[] = {first->op, first->impl, first->mode, first->spec};
    for (size_t i = 0; i < TKB_ARRAY_LEN(facts); i++)
      if (facts[i]) {
        esc(f, facts[i]);
        fputs(" · ", f);
      }
    fprintf(f, "%zu point%s on %zu machine%s · %zu change point%s</p><div class=\"plots\">", points,
            points == 1 ? "" : "s", n, n == 1 ? "" : "s", steps, steps == 1 ? "" : "s");
    char title[160];
    snprintf(title, sizeof title, "medians over %zu runs, with their 95%% intervals", points);
    tkb__plot_history(f, lines, (int)n, p->run_time, (int)p->n_runs, title);
    fputs("</div>", f);
    if (steps) {
      fputs("<ul class=\"steps\">", f);
      for (size_t i = 0; i < mk; i++) {
        fprintf(f, "<li class=\"%s\">", strncmp(marks[i].cls, "slower", 6) ? "faster" : "slower");
        esc(f, tips[i]);
        fputs("</li>", f);
      }
      fputs("</ul>", f);
    }
    fputs("</section>\n", f);
  }
  free(lines);
  free(runs);
  free(values);
  free(marks);
  free(labels);
  free(tips);
  return st;
}

tkb_status tkb__html_history_page(FILE *f, const tkb__trend *t, const tkb__regressions *rs, const char *title) {
  page p;
  tkb_status st = page_make(t, rs, &p);
  if (st) return st;
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>tkbench history",
        f);
  if (title) {
    fputs(": ", f);
    esc(f, title);
  }
  fprintf(f, "</title><style>%s%s</style></head><body>\n<h1>tkbench history", tkb__html_css, history_css);
  if (title) {
    fputs(": <code>", f);
    esc(f, title);
    fputs("</code>", f);
  }
  fprintf(f, "</h1><p class=\"key\">%zu entr%s on %zu machine%s, %zu runs", p.n_names, p.n_names == 1 ? "y" : "ies",
          t->n_machines, t->n_machines == 1 ? "" : "s", p.n_runs);
  if (p.n_runs) {
    fputs(", ", f);
    when(f, (int64_t)p.run_time[0]);
    fputs(" to ", f);
    when(f, (int64_t)p.run_time[p.n_runs - 1]);
    fputs(" UTC", f);
  }
  fputs(" · store ", f);
  esc(f, rs->store);
  fputs("</p>", f);
  machines_list(f, t);
  char how[1200];
  tkb__regressions_describe(rs, how, sizeof how);
  fputs("<nav class=\"key\"><a href=\"#s-regressions\">change points</a> · <a href=\"#s-summary\">entries</a> · "
        "<a href=\"#s-plots\">plots</a></nav>\n",
        f);
  regressions_table(f, &p);
  fputs("<p class=\"key\">How: ", f);
  esc(f, how);
  fputs(".</p>", f);
  summary_table(f, &p);
  fputs("\n<h2 id=\"s-plots\">Over time</h2><p class=\"key\">Per entry: each run's median as a dot, its 95% interval "
        "as a bar, one colour per machine (the legend at the top); the x axis counts the runs of every machine shown "
        "in time order. A change point is a dashed line between the runs it falls between (dotted where it looks "
        "like the machine's), its size above; hover over it for the commit range, or read the list under the "
        "plot.</p>\n",
        f);
  for (size_t k = 0; !st && k < p.n_names; k++) st = entry_section(f, &p, k);
  fprintf(f, "<script>%s</script>\n</body></html>\n", tkb__html_script);
  page_free(&p);
  if (!st && ferror(f)) st = tkb_set_error(TKB_ERR_IO, "writing the history page failed");
  return st;
}
