/*
 * test_shard.c - the parts --shard divides a selection into: on the cpu suite, for many
 * part counts, every entry lands in exactly one part (disjoint, complete), the parts come
 * out the same however the selection is ordered (deterministic), and each part's
 * estimated cost is within 20% of the mean; measured weights replace the estimates; and
 * the shard a process takes from "K/N" or from Slurm's environment.
 */
#include "check.h"
#include "../src/suite/runner.h"

#include <stdint.h>

/* ---- the shard from the flag and from Slurm's variables ---- */

static const char *const *fake_env; /* NAME, VALUE, ..., NULL */

static const char *fake_getenv(const char *name) {
  for (const char *const *e = fake_env; e && *e; e += 2)
    if (strcmp(e[0], name) == 0) return e[1];
  return NULL;
}

/* The shard text and environment give index/count (count 0: none) and source. */
static void expect_shard(const char *text, const char *const *env, int index, int count, const char *source) {
  fake_env = env;
  tkb__shard_info s;
  tkb_status st = tkb__shard_resolve(text, fake_getenv, &s);
  CHECK_MSG(st == TKB_OK, "%s: %s", text ? text : "(auto)", tkb_last_error());
  CHECK_MSG(s.index == index && s.count == count, "%s: got %d/%d, want %d/%d", text ? text : "(auto)",
            s.index, s.count, index, count);
  if (source) CHECK_MSG(s.source && strcmp(s.source, source) == 0, "source %s", s.source ? s.source : "NULL");
}

static void expect_bad(const char *text, const char *const *env, const char *needle) {
  fake_env = env;
  tkb__shard_info s;
  CHECK_ERR(tkb__shard_resolve(text, fake_getenv, &s), TKB_ERR_INVALID_ARGUMENT, needle);
}

static void test_resolve(void) {
  const char *none[] = {NULL};
  expect_shard("0/4", none, 0, 4, "--shard");
  expect_shard("3/4", none, 3, 4, "--shard");
  expect_shard("0/1", none, 0, 1, "--shard");
  expect_shard(NULL, none, 0, 0, NULL);
  expect_shard("auto", none, 0, 0, NULL);
  expect_bad("4/4", none, "K is 4; K counts from 0, so it is 0 to 3");
  expect_bad("1/0", none, "N is 0; expected 1 to 100000");
  expect_bad("x", none, "\"x\" is not K/N or auto");
  expect_bad("1/", none, "is not K/N");
  expect_bad("-1/4", none, "is not K/N");
  expect_bad("1/4/2", none, "is not K/N");
  expect_bad(" 1/4", none, "is not K/N");

  /* an array task: its count, or its bounds */
  const char *arr[] = {"SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0",
                       "SLURM_ARRAY_TASK_MAX", "3", "SLURM_PROCID", "0", "SLURM_NTASKS", "1", NULL};
  expect_shard(NULL, arr, 2, 4, "SLURM_ARRAY_TASK_ID");
  expect_shard("auto", arr, 2, 4, "SLURM_ARRAY_TASK_ID");
  expect_shard("1/3", arr, 1, 3, "--shard"); /* the flag wins */
  const char *bounds[] = {"SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_MAX", "8", NULL};
  expect_shard(NULL, bounds, 4, 8, NULL);
  const char *step[] = {"SLURM_ARRAY_TASK_ID", "6", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_MAX", "6",
                        "SLURM_ARRAY_TASK_STEP", "2", NULL};
  expect_shard(NULL, step, 3, 4, NULL);
  const char *lone[] = {"SLURM_ARRAY_TASK_ID", "3", NULL};
  expect_bad(NULL, lone, "SLURM_ARRAY_TASK_COUNT=(unset)");
  const char *past[] = {"SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_COUNT", "4", NULL};
  expect_bad(NULL, past, "SLURM_ARRAY_TASK_ID=7");
  const char *word[] = {"SLURM_ARRAY_TASK_ID", "two", "SLURM_ARRAY_TASK_COUNT", "4", NULL};
  expect_bad("auto", word, "SLURM_ARRAY_TASK_ID=two");

  /* srun's tasks; a task of one is the whole selection */
  const char *tasks[] = {"SLURM_PROCID", "3", "SLURM_NTASKS", "8", NULL};
  expect_shard(NULL, tasks, 3, 8, "SLURM_PROCID");
  const char *one[] = {"SLURM_PROCID", "0", "SLURM_NTASKS", "1", NULL};
  expect_shard(NULL, one, 0, 0, NULL);
  const char *procid_only[] = {"SLURM_PROCID", "0", NULL}; /* a batch step without --ntasks */
  expect_shard(NULL, procid_only, 0, 0, NULL);
  const char *bad_tasks[] = {"SLURM_PROCID", "8", "SLURM_NTASKS", "8", NULL};
  expect_bad(NULL, bad_tasks, "SLURM_PROCID=8");
}

/* ---- the partition ---- */

/* The cpu suite as `run` selects it: tag cpu, entries for the cpu. */
static size_t *cpu_suite(size_t *n) {
  const char *tags[] = {"cpu"};
  tkb__selection sel = {.tags = tags, .n_tags = 1, .device_kind = "cpu"};
  size_t *idx = NULL;
  CHECK_OK(tkb__select(&sel, &idx, n));
  return idx;
}

/* Which part each of idx[0..n) lands in when every shard K of N is selected; -1: none,
 * -2: more than one. Returns false (after CHECKs) when something failed. */
static bool parts_of(const size_t *idx, size_t n, int parts, const tkb__shard_weights *w, int *part,
                     double *cost_s) {
  for (size_t i = 0; i < n; i++) part[i] = -1;
  for (int k = 0; k < parts; k++) {
    size_t m = n, *sub = malloc(n * sizeof *sub);
    memcpy(sub, idx, n * sizeof *sub);
    tkb__shard_info s = {.index = k, .count = parts};
    tkb_status st = tkb__shard_select(sub, &m, w, &s);
    CHECK_OK(st);
    if (st) {
      free(sub);
      return false;
    }
    cost_s[k] = s.cost_s;
    CHECK(s.n_entries == m && s.n_selection == n);
    size_t last_at = 0;
    for (size_t j = 0; j < m; j++) {
      for (size_t i = 0; i < n; i++) {
        if (idx[i] != sub[j]) continue;
        part[i] = part[i] == -1 ? k : -2;
        /* the selection's order is kept within a part */
        CHECK(j == 0 || i > last_at);
        last_at = i;
      }
    }
    free(sub);
  }
  return true;
}

static void test_partition_cpu_suite(void) {
  size_t n;
  size_t *idx = cpu_suite(&n);
  CHECK_MSG(n >= 100, "the cpu suite has %zu entries", n);
  int *part = malloc(n * sizeof *part), *again = malloc(n * sizeof *again);
  size_t *reversed = malloc(n * sizeof *reversed);
  int *part_rev = malloc(n * sizeof *part_rev);
  for (size_t i = 0; i < n; i++) reversed[i] = idx[n - 1 - i];
  const int counts[] = {1, 2, 3, 4, 5, 6, 7, 8, 16};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    int parts = counts[c];
    double cost[16], cost2[16], cost_rev[16];
    if (!parts_of(idx, n, parts, NULL, part, cost)) break;
    size_t missing = 0, twice = 0;
    for (size_t i = 0; i < n; i++) {
      missing += part[i] == -1;
      twice += part[i] == -2;
    }
    CHECK_MSG(missing == 0 && twice == 0, "%d parts: %zu entries in none, %zu in several", parts,
              missing, twice);
    /* deterministic: the same again, and the same per entry from a reversed selection */
    parts_of(idx, n, parts, NULL, again, cost2);
    parts_of(reversed, n, parts, NULL, part_rev, cost_rev);
    size_t differ = 0, differ_rev = 0;
    for (size_t i = 0; i < n; i++) {
      differ += part[i] != again[i];
      differ_rev += part[i] != part_rev[n - 1 - i];
    }
    CHECK_MSG(differ == 0 && differ_rev == 0, "%d parts: %zu entries moved on a second run, %zu with "
              "the selection reversed", parts, differ, differ_rev);
    /* balanced: each part within 20% of the mean estimated cost */
    double total = 0, lo = INFINITY, hi = 0;
    for (int k = 0; k < parts; k++) {
      total += cost[k];
      lo = fmin(lo, cost[k]);
      hi = fmax(hi, cost[k]);
    }
    double mean = total / parts;
    CHECK_MSG(hi <= 1.2 * mean && lo >= 0.8 * mean, "%d parts: costs %.3f to %.3f s around a mean of "
              "%.3f s", parts, lo, hi, mean);
    printf("%2d parts of %zu entries: estimated cost per part %.3f to %.3f s (mean %.3f s, %+.1f%% / %+.1f%%)\n",
           parts, n, lo, hi, mean, 100 * (lo / mean - 1), 100 * (hi / mean - 1));
  }
  free(part);
  free(again);
  free(reversed);
  free(part_rev);
  free(idx);
}

/* More parts than entries: the first parts get one each, the others none. */
static void test_more_parts_than_entries(void) {
  const char *names[] = {"b", "a", "c"};
  const int64_t cost[] = {5, 5, 5};
  int part[3];
  int64_t load[5];
  CHECK_OK(tkb__shard_assign(names, cost, 3, 5, part, load));
  /* equal costs: by name, a then b then c, to parts 0, 1, 2 */
  CHECK(part[1] == 0 && part[0] == 1 && part[2] == 2);
  CHECK(load[3] == 0 && load[4] == 0);
  CHECK_ERR(tkb__shard_assign(names, cost, 3, 0, part, load), TKB_ERR_INVALID_ARGUMENT, "parts is 0");
}

/* The greedy rule's guarantee on costs it cannot divide evenly: no part exceeds the mean
 * by more than the largest single cost. */
static void test_greedy_bound(void) {
  enum { N = 500, P = 7 };
  const char *names[N];
  char text[N][16];
  int64_t cost[N], load[P], biggest = 0, total = 0;
  int part[N];
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < N; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    cost[i] = (int64_t)(x % 1000000) * ((i % 50) ? 1 : 30); /* a few large ones */
    snprintf(text[i], sizeof text[i], "e%03d", i);
    names[i] = text[i];
    biggest = cost[i] > biggest ? cost[i] : biggest;
    total += cost[i];
  }
  CHECK_OK(tkb__shard_assign(names, cost, N, P, part, load));
  int64_t sum = 0;
  for (int p = 0; p < P; p++) {
    sum += load[p];
    CHECK_MSG(load[p] <= total / P + biggest, "part %d: %lld > mean %lld + largest %lld", p,
              (long long)load[p], (long long)(total / P), (long long)biggest);
  }
  CHECK(sum == total);
}

/* Measured seconds replace the estimates; the rest are scaled to match. */
static void test_weights(void) {
  size_t n;
  size_t *idx = cpu_suite(&n);
  int64_t est[4], cost[4];
  size_t measured;
  CHECK_OK(tkb__shard_costs(idx, 4, NULL, est, &measured));
  CHECK(measured == 0 && est[0] > 0);
  const char *names[] = {tkb_registry_full_name(idx[0]), tkb_registry_full_name(idx[1]), "not_in_suite"};
  double seconds[] = {2.0, 3.0, 100.0};
  tkb__shard_weights w = {.names = names, .seconds = seconds, .n = 3};
  CHECK_OK(tkb__shard_costs(idx, 4, &w, cost, &measured));
  CHECK(measured == 2);
  CHECK(cost[0] == 2000000 && cost[1] == 3000000);
  double scale = 5e6 / (double)(est[0] + est[1]);
  for (int i = 2; i < 4; i++) CHECK_NEAR((double)cost[i], (double)est[i] * scale, 1.0);
  /* weights move the partition: an entry measured far heavier than the others gets a
   * part of its own */
  const char **all = malloc(n * sizeof *all);
  double *secs = malloc(n * sizeof *secs);
  for (size_t i = 0; i < n; i++) {
    all[i] = tkb_registry_full_name(idx[i]);
    secs[i] = i == 5 ? 1000.0 : 1.0;
  }
  tkb__shard_weights hw = {.names = all, .seconds = secs, .n = n};
  int part[256];
  double part_cost[4];
  if (n <= 256 && parts_of(idx, n, 4, &hw, part, part_cost)) {
    size_t with_heavy = 0;
    for (size_t i = 0; i < n; i++) with_heavy += part[i] == part[5];
    CHECK_MSG(with_heavy == 1, "the heavy entry shares its part with %zu others", with_heavy - 1);
    CHECK(part_cost[part[5]] == 1000.0);
  }
  free(all);
  free(secs);
  free(idx);
}

int main(void) {
  CHECK_OK(tkb_register_builtin_ops());
  test_resolve();
  test_partition_cpu_suite();
  test_more_parts_than_entries();
  test_greedy_bound();
  test_weights();
  return CHECK_DONE();
}
