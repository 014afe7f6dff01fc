/*
 * shard.c - one part of a selection, so that N processes (Slurm's array tasks or tasks,
 * a node's GPUs) each run theirs and together run the whole selection once.
 *
 * The partition must come out the same in every process that computes it, with nothing
 * passed between them but K, N and the selection's flags: it depends only on the entries'
 * names and estimated costs. Costs are whole microseconds, so a last-bit difference in a
 * double cannot reorder two entries on one machine and not on another.
 *
 * Balance is the greedy "longest processing time first" rule: entries in decreasing
 * cost (names break ties), each to the part with the least cost so far (the lowest
 * index breaks ties). Its longest part is within 4/3 of the best possible, and within
 * one entry's cost of the mean when the entries are many and small, which a suite's are.
 */
#include "runner.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- which shard: the flag or Slurm's environment ---- */

/* A whole number 0 to 1000000 written in digits only; -1 otherwise. */
static long digits(const char *s, size_t len) {
  if (len == 0 || len > 7) return -1;
  long v = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

static long env_number(tkb__getenv_fn get, const char *name, bool *set) {
  const char *v = get(name);
  *set = v && *v;
  return *set ? digits(v, strlen(v)) : -1;
}

/* From Slurm's variables: an array task, else a task of srun. count 0 when neither. */
static tkb_status shard_from_env(tkb__getenv_fn get, tkb__shard_info *s) {
  bool has_id, has_count, has_min, has_max, has_step;
  long id = env_number(get, "SLURM_ARRAY_TASK_ID", &has_id);
  if (has_id) {
    long count = env_number(get, "SLURM_ARRAY_TASK_COUNT", &has_count);
    long min = env_number(get, "SLURM_ARRAY_TASK_MIN", &has_min);
    long max = env_number(get, "SLURM_ARRAY_TASK_MAX", &has_max);
    long step = env_number(get, "SLURM_ARRAY_TASK_STEP", &has_step);
    if (!has_step) step = 1;
    if (!has_min) min = 0;
    if (!has_count && has_max && min >= 0 && max >= min && step > 0) count = (max - min) / step + 1;
    long index = id >= min && min >= 0 && step > 0 ? (id - min) / step : -1;
    if (id < 0 || count < 1 || index < 0 || index >= count || (id - min) % (step > 0 ? step : 1))
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "Slurm's array variables do not give a shard: SLURM_ARRAY_TASK_ID=%s, "
                           "SLURM_ARRAY_TASK_COUNT=%s, SLURM_ARRAY_TASK_MIN=%s, "
                           "SLURM_ARRAY_TASK_MAX=%s, SLURM_ARRAY_TASK_STEP=%s; a shard needs an "
                           "array of evenly spaced tasks (--array=0-3), or --shard K/N",
                           get("SLURM_ARRAY_TASK_ID"), has_count ? get("SLURM_ARRAY_TASK_COUNT") : "(unset)",
                           has_min ? get("SLURM_ARRAY_TASK_MIN") : "(unset)",
                           has_max ? get("SLURM_ARRAY_TASK_MAX") : "(unset)",
                           has_step ? get("SLURM_ARRAY_TASK_STEP") : "(unset)");
    s->index = (int)index;
    s->count = (int)count;
    s->source = "SLURM_ARRAY_TASK_ID";
    return TKB_OK;
  }
  bool has_proc, has_tasks;
  long proc = env_number(get, "SLURM_PROCID", &has_proc);
  long tasks = env_number(get, "SLURM_NTASKS", &has_tasks);
  if (!has_proc || !has_tasks) return TKB_OK;
  if (proc < 0 || tasks < 1 || proc >= tasks)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "Slurm's task variables do not give a shard: SLURM_PROCID=%s, "
                         "SLURM_NTASKS=%s; expected 0 <= SLURM_PROCID < SLURM_NTASKS, or --shard K/N",
                         get("SLURM_PROCID"), get("SLURM_NTASKS"));
  s->index = (int)proc;
  s->count = (int)tasks;
  s->source = "SLURM_PROCID";
  return TKB_OK;
}

static const char *process_env(const char *name) { return getenv(name); }

tkb_status tkb__shard_resolve(const char *text, tkb__getenv_fn get, tkb__shard_info *s) {
  *s = (tkb__shard_info){0};
  if (!text || strcmp(text, "auto") == 0) {
    tkb_status st = shard_from_env(get ? get : process_env, s);
    /* one task of one: the whole selection, nothing to record */
    if (!st && s->count == 1) *s = (tkb__shard_info){0};
    return st;
  }
  const char *slash = strchr(text, '/');
  long k = slash ? digits(text, (size_t)(slash - text)) : -1;
  long n = slash ? digits(slash + 1, strlen(slash + 1)) : -1;
  if (k < 0 || n < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "\"%s\" is not K/N or auto; K counts from 0 (--shard 0/4 to "
                         "--shard 3/4 are the four parts of a selection)", text);
  if (n < 1 || n > TKB__SHARDS_MAX)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\": N is %ld; expected 1 to %d",
                         text, n, TKB__SHARDS_MAX);
  if (k >= n)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "\"%s\": K is %ld; K counts from 0, so it is 0 to %ld", text, k, n - 1);
  s->index = (int)k;
  s->count = (int)n;
  s->source = "--shard";
  return TKB_OK;
}

/* ---- costs ---- */

/*
 * What an entry is expected to cost, in seconds, from its work per call: a roofline at
 * rates of the order of one cpu core's, times the calls a run makes (warm-ups included),
 * plus what every entry costs whatever its size (binding, the random inputs, compiling,
 * the stopping rule's first experiments). Only the ratios between entries matter: every
 * shard is costed the same way.
 */
#define EST_FLOPS_PER_S 1e10
#define EST_BYTES_PER_S 1e10
#define EST_CALLS 64
#define EST_FIXED_S 0.05

/* Seconds as whole microseconds (see the top). */
static int64_t micros(double s) { return s > 0 && isfinite(s) ? (int64_t)llround(s * 1e6) : 0; }

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

tkb_status tkb__shard_costs(const size_t *idx, size_t n, const tkb__shard_weights *w,
                            int64_t *cost_us, size_t *n_measured) {
  *n_measured = 0;
  int64_t *known = malloc((n ? n : 1) * sizeof *known);
  if (!known) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory costing %zu entries", n);
  size_t n_known = 0;
  for (size_t i = 0; i < n; i++) {
    tkb_counts c;
    cost_us[i] = -1;
    if (tkb_registry_counts(idx[i], &c) == TKB_OK && (c.flops > 0 || c.bytes > 0))
      cost_us[i] = micros(EST_FIXED_S + EST_CALLS * (c.flops / EST_FLOPS_PER_S + c.bytes / EST_BYTES_PER_S));
    if (cost_us[i] >= 0) known[n_known++] = cost_us[i];
  }
  /* an entry that says nothing of its work costs what the middle entry does */
  int64_t unknown = micros(EST_FIXED_S);
  if (n_known) {
    qsort(known, n_known, sizeof *known, cmp_i64);
    unknown = known[n_known / 2];
  }
  free(known);
  for (size_t i = 0; i < n; i++)
    if (cost_us[i] < 0) cost_us[i] = unknown;
  if (!w || w->n == 0) return TKB_OK;

  /* Measured times replace the estimates; the estimates of the entries the file lacks
   * are scaled by how the measured ones compare with theirs, so both are in seconds. */
  double *measured = malloc((n ? n : 1) * sizeof *measured);
  if (!measured) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory costing %zu entries", n);
  double sum_measured = 0, sum_estimated = 0;
  for (size_t i = 0; i < n; i++) {
    measured[i] = -1;
    const char *name = tkb_registry_full_name(idx[i]);
    for (size_t j = 0; j < w->n && measured[i] < 0; j++)
      if (strcmp(w->names[j], name) == 0) measured[i] = w->seconds[j];
    if (measured[i] < 0) continue;
    sum_measured += measured[i];
    sum_estimated += (double)cost_us[i];
    (*n_measured)++;
  }
  double scale = sum_measured > 0 && sum_estimated > 0 ? sum_measured * 1e6 / sum_estimated : 1;
  for (size_t i = 0; i < n; i++)
    cost_us[i] = measured[i] >= 0 ? micros(measured[i]) : (int64_t)llround((double)cost_us[i] * scale);
  free(measured);
  return TKB_OK;
}

/* ---- the partition ---- */

typedef struct order_item {
  int64_t cost;
  const char *name;
  size_t at;
} order_item;

/* Decreasing cost, then increasing name. */
static int cmp_order(const void *a, const void *b) {
  const order_item *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? 1 : -1;
  return strcmp(x->name, y->name);
}

/* A min-heap of parts by (load, index): the next entry goes to its top. */
typedef struct heap {
  int *part;
  int64_t *load;
  int n;
} heap;

static bool lighter(const heap *h, int a, int b) {
  int pa = h->part[a], pb = h->part[b];
  return h->load[pa] != h->load[pb] ? h->load[pa] < h->load[pb] : pa < pb;
}

static void sift_down(heap *h, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && lighter(h, l, m)) m = l;
    if (r < h->n && lighter(h, r, m)) m = r;
    if (m == i) return;
    int t = h->part[i];
    h->part[i] = h->part[m];
    h->part[m] = t;
    i = m;
  }
}

tkb_status tkb__shard_assign(const char *const *names, const int64_t *cost_us, size_t n, int parts,
                             int *part_of, int64_t *load_us) {
  if (parts < 1 || parts > TKB__SHARDS_MAX)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "parts is %d; expected 1 to %d", parts,
                         TKB__SHARDS_MAX);
  order_item *order = malloc((n ? n : 1) * sizeof *order);
  heap h = {.part = malloc((size_t)parts * sizeof *h.part), .load = load_us, .n = parts};
  if (!order || !h.part) {
    free(order);
    free(h.part);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory dividing %zu entries into %d parts", n, parts);
  }
  for (int p = 0; p < parts; p++) {
    load_us[p] = 0;
    h.part[p] = p; /* all zero: already a heap by index */
  }
  for (size_t i = 0; i < n; i++) order[i] = (order_item){cost_us[i] > 0 ? cost_us[i] : 0, names[i], i};
  qsort(order, n, sizeof *order, cmp_order);
  for (size_t k = 0; k < n; k++) {
    int p = h.part[0];
    part_of[order[k].at] = p;
    load_us[p] += order[k].cost;
    sift_down(&h, 0);
  }
  free(order);
  free(h.part);
  return TKB_OK;
}

tkb_status tkb__shard_select(size_t *idx, size_t *n, const tkb__shard_weights *w, tkb__shard_info *s) {
  s->n_selection = *n;
  s->n_entries = *n;
  if (s->count < 1) return TKB_OK;
  size_t m = *n;
  int64_t *cost = malloc((m ? m : 1) * sizeof *cost);
  int64_t *load = malloc((size_t)s->count * sizeof *load);
  int *part_of = malloc((m ? m : 1) * sizeof *part_of);
  const char **names = malloc((m ? m : 1) * sizeof *names);
  tkb_status st = cost && load && part_of && names
                      ? TKB_OK
                      : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory dividing %zu entries", m);
  if (!st) st = tkb__shard_costs(idx, m, w, cost, &s->n_measured);
  for (size_t i = 0; !st && i < m; i++) names[i] = tkb_registry_full_name(idx[i]);
  if (!st) st = tkb__shard_assign(names, cost, m, s->count, part_of, load);
  if (!st) {
    size_t kept = 0;
    int64_t total = 0;
    for (size_t i = 0; i < m; i++)
      if (part_of[i] == s->index) idx[kept++] = idx[i]; /* the selection's order stays */
    for (int p = 0; p < s->count; p++) total += load[p];
    *n = kept;
    s->n_entries = kept;
    s->cost_s = (double)load[s->index] / 1e6;
    s->total_cost_s = (double)total / 1e6;
  }
  free(cost);
  free(load);
  free(part_of);
  free(names);
  return st;
}
