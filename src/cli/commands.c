/* commands.c - the command table: the one list of tkbench's commands, in the order the
 * overview shows them. A command is its own file, which defines its row's contents,
 * and one row here. */
#include "cli.h"

#include <string.h>

extern const tkb__command tkb__command_list, tkb__command_run, tkb__command_check,
    tkb__command_info, tkb__command_help, tkb__command_version;
extern const tkb__command tkb__command_compare, tkb__command_ab, tkb__command_report, tkb__command_merge,
    tkb__command_slurm, tkb__command_history;

static const tkb__command *const table[] = {
    &tkb__command_list,
    &tkb__command_run,
    &tkb__command_check,
    &tkb__command_compare,
    &tkb__command_ab,
    &tkb__command_report,
    &tkb__command_history,
    &tkb__command_merge,
    &tkb__command_slurm,
    &tkb__command_info,
    &tkb__command_help,
    &tkb__command_version,
};

const tkb__command *const *tkb__commands(size_t *n) {
  *n = TKB_ARRAY_LEN(table);
  return table;
}

const tkb__command *tkb__command_find(const char *name) {
  for (size_t i = 0; name && i < TKB_ARRAY_LEN(table); i++)
    if (strcmp(table[i]->name, name) == 0) return table[i];
  return NULL;
}

void tkb__command_names(char *buf, size_t cap) {
  size_t len = 0, n = TKB_ARRAY_LEN(table);
  buf[0] = '\0';
  for (size_t i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " and ",
                            table[i]->name);
}
