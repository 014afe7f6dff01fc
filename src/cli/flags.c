/* flags.c - reading flags the same way in every subcommand: "--name VALUE" and
 * "--name=VALUE", numbers checked strictly (no trailing junk, no silent wrap), and
 * messages that name the flag and the value. */
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

int tkb__flag(const char *cmd, int argc, char **argv, int *i, const char *name,
              const char **value) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (a[n] != '\0') return 0;
  if (*i + 1 >= argc) {
    tkb__usage(cmd, "%s needs a value", name);
    return -1;
  }
  *value = argv[++*i];
  return 1;
}

int tkb__switch(const char *cmd, char **argv, int i, const char *name, bool *on) {
  const char *a = argv[i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '\0') {
    *on = true;
    return 1;
  }
  if (a[n] != '=') return 0;
  const char *v = a + n + 1;
  if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes")) *on = true;
  else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no")) *on = false;
  else {
    tkb__usage(cmd, "%s takes no value or true/false, not '%s'", name, v);
    return -1;
  }
  return 1;
}

int tkb__parse_count(const char *cmd, const char *flag, const char *s, int *out) {
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

int tkb__parse_ms(const char *cmd, const char *flag, const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || !isfinite(v))
    return tkb__usage(cmd, "%s '%s' is not a number; expected milliseconds >= 0", flag, s);
  if (v < 0) return tkb__usage(cmd, "%s %s is negative; expected milliseconds >= 0", flag, s);
  *out = v;
  return 0;
}

int tkb__parse_u64(const char *cmd, const char *flag, const char *s, uint64_t *out) {
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

int tkb__load_plugins(const char *cmd, const tkb__strlist *paths) {
  for (size_t i = 0; i < paths->n; i++)
    if (tkb_load_plugin(paths->items[i]) != TKB_OK)
      return tkb__usage(cmd, "--load: %s", tkb_last_error());
  return 0;
}

bool tkb__use_color(FILE *f) {
  const char *no = getenv("NO_COLOR");
  if (no && *no) return false;
  return isatty(fileno(f)) != 0;
}
