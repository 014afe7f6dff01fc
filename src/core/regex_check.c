/*
 * regex_check.c - a user's regular expression checked before regcomp sees it. glibc
 * builds its automaton by copying a repeated expression once per repetition, so
 * repetitions stacked on repetitions (x++++..., ((x+)+)+, (a{100}){100}) make it grow
 * exponentially: a 25-character filter can take gigabytes and crash the process. Such
 * a pattern is refused with a message that says what to write instead. The limits are
 * far above any useful filter of entry names or kernel names.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEN 512       /* characters */
#define MAX_BOUND 255     /* the largest count in {m,n} (POSIX's RE_DUP_MAX minimum) */
#define MAX_EXPANSION 1000 /* copies of one atom that nesting may make */
#define MAX_DEPTH 32      /* nested groups */

/* How many copies a repetition makes of what it repeats ({m,n}: up to n, or m + 1 when
 * open-ended; + makes the atom and a starred copy; * and ? none). */
typedef struct repeat {
  size_t len;  /* characters the operator takes */
  long copies;
  bool bad;    /* an invalid bound: regcomp says why */
} repeat;

static repeat read_repeat(const char *p) {
  repeat r = {0};
  if (*p == '*' || *p == '?') return (repeat){1, 1, false};
  if (*p == '+') return (repeat){1, 2, false};
  if (*p != '{') return r;
  const char *q = p + 1;
  long m = 0, n = -1;
  /* {,n} is {0,n} to glibc's regcomp, as {m,n} is */
  if ((*q < '0' || *q > '9') && !(*q == ',' && q[1] >= '0' && q[1] <= '9')) return r; /* a literal brace */
  while (*q >= '0' && *q <= '9' && m <= 100000) m = m * 10 + (*q++ - '0');
  if (*q == ',') {
    q++;
    if (*q >= '0' && *q <= '9') {
      n = 0;
      while (*q >= '0' && *q <= '9' && n <= 100000) n = n * 10 + (*q++ - '0');
    }
  } else {
    n = m;
  }
  if (*q != '}') return (repeat){0, 0, true};
  r.len = (size_t)(q + 1 - p);
  r.copies = n < 0 ? m + 1 : n;
  if (m > MAX_BOUND || n > MAX_BOUND) r.copies = -1;
  return r;
}

/* The end of a bracket expression starting at p ('['): just past its ']'. */
static const char *skip_bracket(const char *p) {
  const char *q = p + 1;
  if (*q == '^') q++;
  if (*q == ']') q++; /* a leading ']' is a member */
  while (*q && *q != ']') {
    if (*q == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
      const char close[3] = {q[1], ']', '\0'};
      const char *end = strstr(q + 2, close);
      q = end ? end + 2 : q + strlen(q);
    } else {
      q++;
    }
  }
  return *q ? q + 1 : q;
}

tkb_status tkb__regex_check(const char *pattern, const char *what) {
  if (!pattern) return TKB_OK;
  size_t len = strlen(pattern);
  if (len > MAX_LEN)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "%s is %zu characters long; at most %d are allowed", what, len, MAX_LEN);
  /* the largest expansion inside each open group so far, and of the last atom */
  long group[MAX_DEPTH + 1] = {1};
  int depth = 0;
  long last = 0;         /* the last atom's expansion; 0: nothing to repeat */
  char last_op[16] = ""; /* the repetition just written, when the last token was one */
  for (const char *p = pattern; *p;) {
    const repeat r = read_repeat(p);
    if (r.bad) return TKB_OK; /* regcomp names the bad bound */
    if (r.len) {
      const long at = (long)(p - pattern) + 1;
      if (*last_op)
        return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                             "%s stacks repetitions ('%.*s' right after '%s', at character %ld): "
                             "the regex library would build an automaton that grows exponentially "
                             "with each; write one repetition",
                             what, (int)r.len, p, last_op, at);
      if (r.copies < 0)
        return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                             "%s repeats %.*s at character %ld: a count above %d is not allowed",
                             what, (int)r.len, p, at, MAX_BOUND);
      last *= r.copies > 0 ? r.copies : 1;
      if (last > MAX_EXPANSION)
        return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                             "%s nests repetitions that copy one part %ld times or more (at "
                             "character %ld, '%.*s'); at most %d: the regex library's automaton "
                             "grows with the product",
                             what, last, at, (int)r.len, p, MAX_EXPANSION);
      if (last > group[depth]) group[depth] = last;
      snprintf(last_op, sizeof last_op, "%.*s", (int)(r.len < 15 ? r.len : 15), p);
      p += r.len;
      continue;
    }
    last_op[0] = '\0';
    if (*p == '(') {
      if (depth == MAX_DEPTH)
        return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s nests groups more than %d deep", what,
                             MAX_DEPTH);
      group[++depth] = 1;
      last = 0;
      p++;
    } else if (*p == ')' && depth > 0) {
      last = group[depth--];
      if (last > group[depth]) group[depth] = last;
      p++;
    } else if (*p == '|') {
      last = 0;
      p++;
    } else if (*p == '[') {
      last = 1;
      p = skip_bracket(p);
    } else {
      last = 1;
      p += *p == '\\' && p[1] ? 2 : 1;
    }
  }
  return TKB_OK;
}

tkb_status tkb__regex_compile(regex_t *re, const char *pattern, const char *name, const char *shown) {
  char what[160];
  snprintf(what, sizeof what, "%s \"%.60s%s\"", name, shown, strlen(shown) > 60 ? "..." : "");
  tkb_status st = tkb__regex_check(pattern, what);
  if (st) return st;
  int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
  if (rc == 0) return TKB_OK;
  char why[256];
  regerror(rc, re, why, sizeof why);
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "%s \"%s\" is not a valid POSIX extended regular expression: %s", name,
                       shown, why);
}
