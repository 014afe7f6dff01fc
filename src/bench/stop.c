/*
 * stop.c - the stopping rules' table and the parser of "rule:param=value,...": the
 * measurement loop only feeds a rule samples and asks what comes next (bench.h), so a
 * new rule is its own file and one row below, and nothing else changes: the options
 * check, the CLI's --stop and the help list the rules and their parameters from here.
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One file each; the row is the only other place a rule is named. */
extern const tkb__stop_rule tkb__stop_fixed, tkb__stop_ci;
const tkb__stop_rule *const tkb__stop_rules[] = {&tkb__stop_fixed, &tkb__stop_ci, NULL};

static const tkb__stop_rule *rule_named(const char *name, size_t len) {
  for (int i = 0; tkb__stop_rules[i]; i++)
    if (strlen(tkb__stop_rules[i]->name) == len && strncmp(tkb__stop_rules[i]->name, name, len) == 0)
      return tkb__stop_rules[i];
  return NULL;
}

static void rule_names(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; tkb__stop_rules[i] && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", tkb__stop_rules[i]->name);
}

static void param_names(const tkb__stop_rule *r, char *buf, size_t cap) {
  size_t len = 0;
  snprintf(buf, cap, "none");
  for (size_t i = 0; i < r->n_params && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", r->params[i].name);
}

/* A value: a number with an optional unit: "%" divides by 100, "s" is seconds, "ms"
 * milliseconds (given in seconds). */
static bool parse_value(const char *s, size_t len, double *out) {
  char buf[64];
  if (len == 0 || len >= sizeof buf) return false;
  memcpy(buf, s, len);
  buf[len] = '\0';
  char *end;
  double v = strtod(buf, &end);
  if (end == buf || !isfinite(v)) return false;
  if (strcmp(end, "%") == 0) v /= 100;
  else if (strcmp(end, "ms") == 0) v /= 1000;
  else if (*end && strcmp(end, "s") != 0) return false;
  *out = v;
  return true;
}

static tkb_status parse_param(const tkb__stop_rule *r, const char *what, const char *p, size_t len,
                              tkb__stop_choice *out) {
  const char *eq = memchr(p, '=', len);
  size_t klen = eq ? (size_t)(eq - p) : len;
  size_t k = 0;
  while (k < r->n_params && !(strlen(r->params[k].name) == klen && strncmp(r->params[k].name, p, klen) == 0))
    k++;
  char names[256];
  param_names(r, names, sizeof names);
  if (k == r->n_params)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "%s: rule %s has no parameter \"%.*s\"; its parameters: %s", what, r->name,
                         (int)klen, p, names);
  const tkb__stop_param *prm = &r->params[k];
  double v;
  if (!eq || !parse_value(eq + 1, len - klen - 1, &v))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "%s: %s:%.*s is not name=number (e.g. %s=%g; %s)", what, r->name, (int)len, p,
                         prm->name, prm->def, prm->help);
  if (!(v >= prm->min && v <= prm->max))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: %s %s=%g is outside [%g, %g] (%s)", what,
                         r->name, prm->name, v, prm->min, prm->max, prm->help);
  out->values[k] = v;
  return TKB_OK;
}

tkb_status tkb__stop_parse(const char *text, const char *what, tkb__stop_choice *out) {
  if (!text || !*text) text = "fixed"; /* Tokamax's, the library's default */
  const char *colon = strchr(text, ':');
  size_t nlen = colon ? (size_t)(colon - text) : strlen(text);
  const tkb__stop_rule *r = rule_named(text, nlen);
  if (!r) {
    char names[256];
    rule_names(names, sizeof names);
    return tkb_set_error(TKB_ERR_NOT_FOUND, "%s: \"%.*s\" is not a stopping rule; the rules: %s", what,
                         (int)nlen, text, names);
  }
  tkb__stop_choice c = {.rule = r};
  for (size_t k = 0; k < r->n_params; k++) c.values[k] = r->params[k].def;
  for (const char *p = colon ? colon + 1 : NULL; p && *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    tkb_status st = parse_param(r, what, p, len, &c);
    if (st) return st;
    p = comma ? comma + 1 : NULL;
  }
  *out = c;
  return TKB_OK;
}

void tkb__stop_rules_help(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; tkb__stop_rules[i] && len < cap; i++) {
    const tkb__stop_rule *r = tkb__stop_rules[i];
    len += (size_t)snprintf(buf + len, cap - len, "%s%s: %s", i ? "; " : "", r->name, r->help);
    for (size_t k = 0; k < r->n_params && len < cap; k++)
      len += (size_t)snprintf(buf + len, cap - len, "%s%s=%g", k ? ", " : " (", r->params[k].name,
                              r->params[k].def);
    if (r->n_params && len < cap) len += (size_t)snprintf(buf + len, cap - len, ")");
  }
}

void tkb__stop_text(const tkb__stop_choice *c, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "%s", c->rule->name);
  for (size_t k = 0; k < c->rule->n_params && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s=%g", k ? "," : ":", c->rule->params[k].name,
                            c->values[k]);
}
