/* flags.c - reading flags the same way in every command, from its rows in the command
 * table: "--name VALUE" and "--name=VALUE", switches with an optional =true/false,
 * defaults set from the same rows help prints, numbers checked strictly (no trailing
 * junk, no silent wrap), and messages that name the flag and the value. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *tkb__prog = "tkbench";
const char *tkb__exe = "tkbench";

int tkb__usage(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s%s%s: ", tkb__prog, cmd ? " " : "", cmd ? cmd : "");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  if (cmd) fprintf(stderr, "\nRun '%s help %s' for the flags.\n", tkb__prog, cmd);
  else fprintf(stderr, "\nRun '%s --help' for the commands.\n", tkb__prog);
  return TKB_EXIT_USAGE;
}

static int parse_count(const char *cmd, const char *flag, const char *s, int *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno)
    return tkb__usage(cmd, "%s '%s' is not a number; expected a positive integer", flag, s);
  if (v < 1 || v > 100000000)
    return tkb__usage(cmd, "%s %s is out of range; expected 1 to 100000000", flag, s);
  *out = (int)v;
  return 0;
}

static int parse_ms(const char *cmd, const char *flag, const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || !isfinite(v))
    return tkb__usage(cmd, "%s '%s' is not a number; expected milliseconds >= 0", flag, s);
  if (v < 0) return tkb__usage(cmd, "%s %s is negative; expected milliseconds >= 0", flag, s);
  *out = v;
  return 0;
}

static int parse_number(const char *cmd, const char *flag, const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || !isfinite(v) || v < 0)
    return tkb__usage(cmd, "%s '%s' is not a number >= 0", flag, s);
  *out = v;
  return 0;
}

/* Google Benchmark's seconds: "0.5" or "0.5s", stored as milliseconds. */
static int parse_seconds(const char *cmd, const char *flag, const char *s, double *out_ms) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (*end == 's' && end > s) end++;
  if (!*s || *end || errno || !isfinite(v))
    return tkb__usage(cmd, "%s '%s' is not a number of seconds; expected e.g. 0.5 or 0.5s", flag, s);
  if (v < 0) return tkb__usage(cmd, "%s %s is negative; expected seconds >= 0", flag, s);
  *out_ms = v * 1e3;
  return 0;
}

static int parse_u64(const char *cmd, const char *flag, const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  /* strtoull accepts "-1" and wraps it: refuse any sign. */
  if (!*s || *end || errno || strchr(s, '-') || strchr(s, '+'))
    return tkb__usage(cmd, "%s '%s' is not a number; expected an integer 0 to 18446744073709551615",
                      flag, s);
  *out = v;
  return 0;
}

int tkb__strlist_add(tkb__strlist *l, const char *s, bool split) {
  if (l->n_storage == TKB_ARRAY_LEN(l->storage)) return -1;
  char *copy = tkb__strdup(s);
  if (!copy) return -1;
  l->storage[l->n_storage++] = copy;
  for (char *p = copy, *tok; (tok = p) != NULL;) {
    p = split ? strchr(p, ',') : NULL;
    if (p) *p++ = '\0';
    if (!*tok) continue;
    if (l->n == l->cap) {
      size_t cap = l->cap ? 2 * l->cap : 8;
      const char **t = realloc(l->items, cap * sizeof *t);
      if (!t) return -1;
      l->items = t;
      l->cap = cap;
    }
    l->items[l->n++] = tok;
  }
  return 0;
}

void tkb__strlist_free(tkb__strlist *l) {
  for (size_t i = 0; i < l->n_storage; i++) free(l->storage[i]);
  free(l->items);
  *l = (tkb__strlist){0};
}

/* The value of a switch given as argv[i] ("--quiet", "--quiet=false"). */
static int switch_value(const char *cmd, const tkb__flag *row, const char *arg, bool *on) {
  const char *v = arg[strlen(row->name)] == '=' ? arg + strlen(row->name) + 1 : NULL;
  if (!v || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes")) *on = true;
  else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no")) *on = false;
  else return tkb__usage(cmd, "%s takes no value or true/false, not '%s'", row->name, v);
  return 0;
}

/* Stores value (text) into the row's place; switches get their value in *on. */
static int store(const char *cmd, const tkb__flag *row, void *base, const char *value, bool on) {
  void *at = (char *)base + row->offset;
  int rc = 0;
  switch (row->kind) {
    case TKB__FLAG_TEXT: *(const char **)at = value; break;
    case TKB__FLAG_LIST:
    case TKB__FLAG_PATHS:
      if (tkb__strlist_add(at, value, row->kind == TKB__FLAG_LIST) != 0)
        rc = tkb__usage(cmd, "%s given too many times (at most 64)", row->name);
      break;
    case TKB__FLAG_COUNT: rc = parse_count(cmd, row->name, value, at); break;
    case TKB__FLAG_MS: rc = parse_ms(cmd, row->name, value, at); break;
    case TKB__FLAG_NUMBER: rc = parse_number(cmd, row->name, value, at); break;
    case TKB__FLAG_SECONDS: rc = parse_seconds(cmd, row->name, value, at); break;
    case TKB__FLAG_U64: rc = parse_u64(cmd, row->name, value, at); break;
    case TKB__FLAG_SWITCH: *(bool *)at = on; break;
  }
  if (!rc && row->check && value) rc = row->check(cmd, row->name, value);
  return rc;
}

/* Calls fn on every flag row the command takes, with the struct the row's offset is in;
 * stops at the first nonzero return and returns it. */
static int each_row(const tkb__command *cmd, void *args, tkb__select_args *sel,
                    int (*fn)(const tkb__flag *row, void *base, void *ctx), void *ctx) {
  int rc = 0;
  for (const tkb__flag *r = tkb__selection_flags; !rc && (r->name || r->heading); r++)
    if (r->name && (cmd->selection & r->selection)) rc = fn(r, sel, ctx);
  for (const tkb__flag *r = cmd->flags; !rc && r && (r->name || r->heading); r++)
    if (r->name) rc = fn(r, args, ctx);
  return rc;
}

static int set_default(const tkb__flag *row, void *base, void *cmd) {
  if (!row->value) return 0;
  return store(((const tkb__command *)cmd)->name, row, base, row->value, false);
}

static int free_list(const tkb__flag *row, void *base, void *unused) {
  (void)unused;
  if (row->kind == TKB__FLAG_LIST || row->kind == TKB__FLAG_PATHS)
    tkb__strlist_free((tkb__strlist *)((char *)base + row->offset));
  return 0;
}

/* The row argv's word names ("--name" or "--name=..."): found->row, found->base. */
typedef struct found {
  const char *arg;
  const tkb__flag *row;
  void *base;
} found;

static int match(const tkb__flag *row, void *base, void *ctx) {
  found *f = ctx;
  size_t n = strlen(row->name);
  if (strncmp(f->arg, row->name, n) != 0 || (f->arg[n] != '\0' && f->arg[n] != '=')) return 0;
  f->row = row;
  f->base = base;
  return 1;
}

/* Google Benchmark's flags that the command takes, as its tools spell them. */
typedef struct gb_names {
  char text[512];
  size_t len;
} gb_names;

static int gb_name(const tkb__flag *row, void *base, void *ctx) {
  (void)base;
  gb_names *g = ctx;
  if (strncmp(row->name, "--benchmark_", 12) == 0 && g->len < sizeof g->text)
    g->len += (size_t)snprintf(g->text + g->len, sizeof g->text - g->len, "%s%s%s",
                               g->len ? ", " : "", row->name,
                               row->kind == TKB__FLAG_SWITCH ? "" : "=");
  return 0;
}

/* The command's flag names, for "did you mean". */
typedef struct flag_names {
  const char *names[160];
  size_t n;
} flag_names;

static int flag_name(const tkb__flag *row, void *base, void *ctx) {
  (void)base;
  flag_names *f = ctx;
  if (!row->hidden && f->n < TKB_ARRAY_LEN(f->names)) f->names[f->n++] = row->name;
  return 0;
}

/* A word that is no flag of the command. */
static int unknown(const tkb__command *cmd, const char *arg, void *args, tkb__select_args *sel) {
  gb_names gb = {.len = 0};
  each_row(cmd, args, sel, gb_name, &gb);
  if (gb.len && strncmp(arg, "--benchmark_", 12) == 0)
    return tkb__usage(cmd->name, "Google Benchmark flag '%s' is not supported; tkbench takes %s",
                      arg, gb.text);
  if (arg[0] == '-') {
    flag_names f = {.n = 0};
    each_row(cmd, args, sel, flag_name, &f);
    const char *near = tkb__nearest(arg, f.names, f.n);
    if (near) return tkb__usage(cmd->name, "unknown flag '%s'; did you mean '%s'?", arg, near);
    return tkb__usage(cmd->name, "unknown flag '%s'", arg);
  }
  return tkb__usage(cmd->name, "unexpected argument '%s'%s", arg,
                    cmd->positional ? cmd->positional : "");
}

int tkb__flags_parse(const tkb__command *cmd, int argc, char **argv, void *args,
                     tkb__select_args *sel) {
  int rc = each_row(cmd, args, sel, set_default, (void *)cmd);
  bool operands_only = false; /* after "--" */
  for (int i = 1; !rc && i < argc; i++) {
    const char *arg = argv[i];
    if (cmd->operand && (operands_only || arg[0] != '-' || !strcmp(arg, "-"))) {
      rc = cmd->operand(args, arg);
      continue;
    }
    if (cmd->operand && !strcmp(arg, "--")) {
      operands_only = true;
      continue;
    }
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      tkb__help_command(stdout, cmd);
      return TKB_EXIT_OK;
    }
    found f = {.arg = arg};
    if (!each_row(cmd, args, sel, match, &f)) return unknown(cmd, arg, args, sel);
    const char *name = f.row->name, *value = NULL;
    bool on = false;
    if (f.row->kind == TKB__FLAG_SWITCH) {
      rc = switch_value(cmd->name, f.row, arg, &on);
    } else if (arg[strlen(name)] == '=') {
      value = arg + strlen(name) + 1;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      rc = tkb__usage(cmd->name, "%s needs a value", name);
    }
    if (!rc) rc = store(cmd->name, f.row, f.base, value, on);
  }
  return rc ? rc : TKB__PARSED;
}

void tkb__flags_free(const tkb__command *cmd, void *args, tkb__select_args *sel) {
  each_row(cmd, args, sel, free_list, NULL);
}

bool tkb__use_color(FILE *f) {
  const char *no = getenv("NO_COLOR");
  if (no && *no) return false;
  return isatty(fileno(f)) != 0;
}
