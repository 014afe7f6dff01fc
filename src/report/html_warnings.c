/* html_warnings.c - the machine's warnings on the HTML report's first screen: one line
 * that names them all, their sentences behind a <details> element. A loaded machine warns
 * of its load with every entry, and a page that opened on a box per warning pushed the
 * results below the fold; one line still says that every number is in doubt and why, and
 * the sentences (what was seen, what would help) are a click away, without a script. */
#include "html.h"

#include <cjson/cJSON.h>
#include <string.h>

/* The kinds a run writes (src/bench/environment.c), each with a short name for the line
 * and a phrase of its sentence: files written before the context carried its warnings'
 * kinds are told apart by the phrase. */
static const struct {
  const char *kind, *label, *phrase;
} known[] = {
    {"load", "load above the cores", "load average"},
    {"threads", "more OpenMP threads than free cores", "OpenMP threads"},
    {"frequency", "frequency scaling", "frequency"},
    {"cpu_isa", "cpu kernel path replaced", "TKB_CPU_ISA"},
};

enum { MAX_GROUPS = 16, MAX_TEXTS = 8 };

/* The warnings of one kind. */
typedef struct group {
  const char *kind;
  const char *label;
  const char *texts[MAX_TEXTS]; /* the context's sentences */
  int n_texts;
  int entries;                  /* entries that carried it */
  int last_entry;               /* the last of them (counted once each) */
  const char *last;             /* its sentence */
} group;

typedef struct groups {
  group v[MAX_GROUPS];
  int n;
} groups;

static const char *label_of(const char *kind) {
  for (size_t k = 0; k < TKB_ARRAY_LEN(known); k++)
    if (!strcmp(known[k].kind, kind)) return known[k].label;
  return kind; /* a kind this page has no name for: its own */
}

static const char *kind_from_text(const char *text) {
  for (size_t k = 0; k < TKB_ARRAY_LEN(known); k++)
    if (strstr(text, known[k].phrase)) return known[k].kind;
  return "other";
}

/* The group of kind, added when new; NULL when the page has as many groups as it shows. */
static group *group_of(groups *gs, const char *kind) {
  for (int i = 0; i < gs->n; i++)
    if (!strcmp(gs->v[i].kind, kind)) return &gs->v[i];
  if (gs->n == MAX_GROUPS) return NULL;
  gs->v[gs->n] = (group){.kind = kind, .label = label_of(kind), .last_entry = -1};
  return &gs->v[gs->n++];
}

static void from_context(groups *gs, const cJSON *context) {
  const cJSON *ws = cJSON_GetObjectItemCaseSensitive(context, "warnings");
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(context, "warning_kinds");
  int i = 0;
  const cJSON *w;
  cJSON_ArrayForEach(w, ws) {
    const cJSON *k = cJSON_IsArray(ks) ? cJSON_GetArrayItem(ks, i) : NULL;
    i++;
    if (!cJSON_IsString(w)) continue;
    group *g = group_of(gs, cJSON_IsString(k) ? k->valuestring : kind_from_text(w->valuestring));
    if (g && g->n_texts < MAX_TEXTS) g->texts[g->n_texts++] = w->valuestring;
  }
}

/* The machine's kinds among the entries' warnings: an entry's own (a wide interval, two
 * clusters) stay with the entry. */
static void from_entries(groups *gs, const tkb__results_file *rf) {
  for (size_t e = 0; e < rf->n_entries; e++) {
    const cJSON *tk = rf->entries[e].tkbench;
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(tk, "warnings");
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(tk, "warning_kinds");
    for (int j = 0; j < cJSON_GetArraySize(ks); j++) {
      const cJSON *k = cJSON_GetArrayItem(ks, j), *w = cJSON_GetArrayItem(ws, j);
      if (!cJSON_IsString(k) || !cJSON_IsString(w)) continue;
      const tkb_warning as_run = {.kind = k->valuestring, .text = w->valuestring};
      if (!tkb__machine_warning(&as_run)) continue;
      group *g = group_of(gs, k->valuestring);
      if (!g || g->last_entry == (int)e) continue;
      g->entries++;
      g->last_entry = (int)e;
      g->last = w->valuestring;
    }
  }
}

void tkb__html_machine_warnings(FILE *f, const tkb__results_file *rf) {
  groups gs = {.n = 0};
  from_context(&gs, rf->context);
  from_entries(&gs, rf);
  if (!gs.n) return;
  fprintf(f, "<details class=\"machine\"><summary><b>%d machine warning%s</b>: ", gs.n, gs.n == 1 ? "" : "s");
  for (int i = 0; i < gs.n; i++) {
    if (i) fputs(", ", f);
    tkb__svg_escape(f, gs.v[i].label);
  }
  fputs(" <span class=\"key\">(every number below may be off; details)</span></summary><ul class=\"warnings\">", f);
  for (int i = 0; i < gs.n; i++) {
    const group *g = &gs.v[i];
    for (int t = 0; t < g->n_texts; t++) {
      fputs("<li class=\"warn\"><b>", f);
      tkb__svg_escape(f, g->label);
      fputs("</b>: ", f);
      tkb__svg_escape(f, g->texts[t]);
      fputs("</li>", f);
    }
    if (!g->entries) continue;
    fputs("<li class=\"warn\"><b>", f);
    tkb__svg_escape(f, g->label);
    fprintf(f, "</b>: during %d of %zu entries, e.g. the last: ", g->entries, rf->n_entries);
    tkb__svg_escape(f, g->last);
    fputs("</li>", f);
  }
  fputs("</ul></details>\n", f);
}
