/* selection.c - the flags that choose entries, shared by list, run and check (each takes
 * the ones its row names), their one set of defaults, the one default-tag rule, the one
 * "no entry matches ..." message, and the shard a run or check takes of what they chose. */
#include "cli.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define AT(field) offsetof(tkb__select_args, field)

static int check_shard(const char *cmd, const char *flag, const char *value) {
  tkb__shard_info s;
  if (tkb__shard_resolve(value, NULL, &s) != TKB_OK) return tkb__usage(cmd, "%s: %s", flag, tkb_last_error());
  return 0;
}

const tkb__flag tkb__selection_flags[] = {
    {.name = "--filter", .metavar = "REGEX", .kind = TKB__FLAG_TEXT, .offset = AT(filter),
     .selection = TKB__SELECT_FILTER, .shown = "none",
     .help = "Entries whose full name ({spec}_{mode}_{impl}) matches this POSIX extended "
             "regex; a leading '-' keeps the others."},
    {.name = "--tag", .metavar = "TAG", .kind = TKB__FLAG_LIST, .offset = AT(tags),
     .selection = TKB__SELECT_TAG, .shown = "{tag_default}",
     .help = "Entries that carry TAG (repeatable or comma-separated: all must match); "
             "--tag primary selects Tokamax's full sizes."},
    {.name = "--op", .metavar = "NAME", .kind = TKB__FLAG_LIST, .offset = AT(ops),
     .selection = TKB__SELECT_OP, .shown = "every op",
     .help = "Entries of these ops, e.g. ragged_dot,normalization (repeatable or "
             "comma-separated; '{prog} list' shows each entry's op)."},
    {.name = "--mode", .metavar = "MODE", .kind = TKB__FLAG_LIST, .offset = AT(modes),
     .selection = TKB__SELECT_MODE, .shown = "every mode",
     .help = "forward, forward_res, vjp or forward_and_vjp (repeatable or comma-separated)."},
    {.name = "--impl", .metavar = "NAME", .kind = TKB__FLAG_LIST, .offset = AT(impls),
     .selection = TKB__SELECT_IMPL, .shown = "every implementation",
     .help = "Implementations, e.g. reference, cpu (repeatable or comma-separated)."},
    {.name = "--device", .metavar = "NAME", .kind = TKB__FLAG_TEXT, .offset = AT(device),
     .selection = TKB__SELECT_DEVICE, .value = "cpu",
     .help = "cpu, cuda:N or opencl:N: the device to run on, and the entries for its kind. "
             "For run, cuda:all (or opencl:all) runs one worker process per visible device "
             "(as CUDA_VISIBLE_DEVICES leaves them), each on its own shard of the selection, "
             "and merges their results into --out."},
    {.name = "--load", .metavar = "LIB.so", .kind = TKB__FLAG_PATHS, .offset = AT(loads),
     .selection = TKB__SELECT_LOAD, .shown = "none",
     .help = "Load a plugin that registers entries (it exports tkb_plugin_init); "
             "repeatable. With --load and no --filter, --tag, --op or --impl, only the "
             "plugins' entries are chosen (and the default tag does not apply)."},
    {.name = "--shard", .metavar = "K/N", .kind = TKB__FLAG_TEXT, .offset = AT(shard),
     .selection = TKB__SELECT_SHARD, .check = check_shard,
     .shown = "auto: under Slurm, the array task's or srun task's part; else every entry",
     .help = "Only part K of N (K from 0) of the selected entries, the parts balanced by "
             "their estimated cost. Every part is the same in every process given the same "
             "flags, so N processes with K = 0 to N-1 run the selection once between them. "
             "auto takes K and N from Slurm: SLURM_ARRAY_TASK_ID and the array's size, else "
             "SLURM_PROCID and SLURM_NTASKS."},
    {.name = "--shard-weights", .metavar = "FILE", .kind = TKB__FLAG_TEXT,
     .offset = AT(shard_weights), .selection = TKB__SELECT_SHARD, .shown = "none",
     .help = "Cost each entry by its time in this earlier result file ({prog}'s JSON, a "
             "journal, or Google Benchmark's JSON) instead of by its work per call; "
             "entries the file lacks are estimated."},
    {0},
};

/* With --load and nothing else that chooses entries, the user means the plugins' own
 * entries: running the builtin suite beside them would bury what was asked for. */
static bool only_loaded(const tkb__select_args *a) {
  return a->n_loaded > 0 && !a->filter && a->tags.n == 0 && a->ops.n == 0 && a->impls.n == 0;
}

/* " --filter 'x' --tag cpu --op y --mode forward --impl c" for the message. */
static void describe(const tkb__select_args *a, const tkb__selection *sel, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  if (a->filter) len += (size_t)snprintf(buf + len, cap - len, " --filter '%s'", a->filter);
  const struct {
    const char *flag;
    const char *const *items;
    size_t n;
  } lists[] = {{"--tag", sel->tags, sel->n_tags},
               {"--op", a->ops.items, a->ops.n},
               {"--mode", a->modes.items, a->modes.n},
               {"--impl", a->impls.items, a->impls.n}};
  for (size_t l = 0; l < TKB_ARRAY_LEN(lists); l++)
    for (size_t k = 0; k < lists[l].n && len < cap; k++)
      len += (size_t)snprintf(buf + len, cap - len, " %s %s", lists[l].flag, lists[l].items[k]);
}

static int nothing_matches(const tkb__command *cmd, const tkb__select_args *a,
                           const tkb__selection *sel) {
  if (tkb_registry_count() == 0) return tkb__usage(cmd->name, "no entries are registered");
  char what[1024], other[128] = "", where[160] = "";
  describe(a, sel, what, sizeof what);
  if (sel->except_impl) snprintf(other, sizeof other, " other than a %s", sel->except_impl);
  if (sel->device_kind) snprintf(where, sizeof where, " on device %s", a->device);
  return tkb__usage(cmd->name, "no entry%s matches%s%s (%zu entries registered; '%s list' shows "
                    "them)", other, *what ? what : " (no criteria)", where, tkb_registry_count(),
                    tkb__prog);
}

/* Narrows the selection to its shard; 0, or TKB_EXIT_USAGE after printing why. */
static int take_shard(const tkb__command *cmd, const tkb__select_args *a, size_t *idx, size_t *n,
                      tkb__shard_info *s) {
  if (tkb__shard_resolve(a->shard, NULL, s) != TKB_OK)
    return tkb__usage(cmd->name, "--shard%s: %s", a->shard ? "" : " (auto, the default)", tkb_last_error());
  tkb__shard_weights w = {0};
  if (s->count && a->shard_weights) {
    if (tkb__shard_weights_load(a->shard_weights, &w) != TKB_OK)
      return tkb__usage(cmd->name, "--shard-weights: %s", tkb_last_error());
    s->weights = a->shard_weights;
  }
  tkb_status st = tkb__shard_select(idx, n, &w, s);
  tkb__shard_weights_free(&w);
  if (st) return tkb__usage(cmd->name, "--shard: %s", tkb_last_error());
  return 0;
}

void tkb__shard_note(const char *cmd, const tkb__shard_info *s) {
  if (!s->count) return;
  fprintf(stderr, "%s %s: shard %d/%d (from %s; the shards are 0 to %d): %zu of %zu entries, "
          "%.0f%% of the estimated cost%s\n", tkb__prog, cmd, s->index, s->count, s->source, s->count - 1,
          s->n_entries, s->n_selection, s->total_cost_s > 0 ? 100 * s->cost_s / s->total_cost_s : 0.0,
          s->weights ? " (costs from --shard-weights)" : "");
}

int tkb__select_entries(const tkb__command *cmd, const tkb__select_args *a,
                        const char *except_impl, size_t **idx, size_t *n, tkb__shard_info *shard) {
  *idx = NULL;
  *n = 0;
  tkb__shard_info unused;
  if (!shard) shard = &unused;
  *shard = (tkb__shard_info){0};
  unsigned modes = 0;
  for (size_t k = 0; k < a->modes.n; k++) {
    tkb_mode m;
    if (tkb_mode_parse(a->modes.items[k], &m) != TKB_OK)
      return tkb__usage(cmd->name, "--mode: %s", tkb_last_error());
    modes |= 1u << m;
  }
  if (tkb__ops_check(a->ops.items, a->ops.n) != TKB_OK)
    return tkb__usage(cmd->name, "--op: %s", tkb_last_error());
  if (tkb__tags_check(a->tags.items, a->tags.n) != TKB_OK)
    return tkb__usage(cmd->name, "--tag: %s", tkb_last_error());
  char kind[32];
  bool by_device = cmd->selection & TKB__SELECT_DEVICE;
  if (by_device) tkb__device_kind(a->device, kind, sizeof kind);
  const char *default_tag[1] = {TKB__DEFAULT_TAG};
  const bool plugins_only = only_loaded(a);
  const bool use_default = cmd->default_tag && !a->filter && a->tags.n == 0 && !plugins_only;
  tkb__selection sel = {.filter = a->filter,
                        .first_index = plugins_only ? a->first_loaded : 0,
                        .tags = use_default ? default_tag : a->tags.items,
                        .n_tags = use_default ? 1 : a->tags.n,
                        .ops = a->ops.items,
                        .n_ops = a->ops.n,
                        .impls = a->impls.items,
                        .n_impls = a->impls.n,
                        .except_impl = except_impl,
                        .modes = modes,
                        .device_kind = by_device ? kind : NULL};
  if (tkb__select(&sel, idx, n) != TKB_OK)
    return tkb__usage(cmd->name, "--filter: %s", tkb_last_error());
  if (*n == 0 && use_default) {
    sel.n_tags = 0;
    if (tkb__select(&sel, idx, n) != TKB_OK) return tkb__usage(cmd->name, "%s", tkb_last_error());
  }
  if (!*n) return nothing_matches(cmd, a, &sel);
  if (plugins_only && a->n_loaded < tkb_registry_count())
    fprintf(stderr, "%s %s: the %zu entr%s of --load (give --tag, --op, --impl or --filter to "
            "choose among all %zu registered)\n", tkb__prog, cmd->name, *n, *n == 1 ? "y" : "ies",
            tkb_registry_count());
  if (!(cmd->selection & TKB__SELECT_SHARD)) return 0;
  int rc = take_shard(cmd, a, *idx, n, shard);
  if (rc) {
    free(*idx);
    *idx = NULL;
    *n = 0;
  }
  return rc;
}
