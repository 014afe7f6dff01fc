/* history_query.c - the store's query (history.h) from the flags that every command
 * reading a history shares: run's selection flags for the entries, --branch, --since and
 * --last for the runs (the machine is each command's own matter: resolved, defaulted or
 * every one). */
#include "cli.h"
#include "history.h"

tkb__history_query tkb__history_query_of(const tkb__select_args *sel, const char *branch, const char *since,
                                         int last) {
  tkb__history_query q = {.branch = branch, .last = last > 0 ? (size_t)last : 0, .filter = sel->filter,
                          .ops = sel->ops.items, .n_ops = sel->ops.n, .modes = sel->modes.items,
                          .n_modes = sel->modes.n, .impls = sel->impls.items, .n_impls = sel->impls.n,
                          .tags = sel->tags.items, .n_tags = sel->tags.n};
  if (since) tkb__history_parse_time("--since", since, &q.since); /* checked when read */
  return q;
}

int tkb__check_since(const char *cmd, const char *flag, const char *value) {
  int64_t t;
  return tkb__history_parse_time(flag, value, &t) == TKB_OK ? 0 : tkb__usage(cmd, "%s", tkb_last_error());
}
