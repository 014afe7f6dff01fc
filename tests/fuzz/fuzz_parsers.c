/*
 * fuzz_parsers.c - every parser of a user's text: specs, dtypes, modes, device names,
 * timing methods, output formats and file endings, regexes (the check before regcomp,
 * then regcomp and regexec themselves: a pattern the check lets through must compile
 * in bounded time and memory), stopping rules with their numbers, --timeout's seconds,
 * and journal paths. The first byte picks the parser; what parses must print back to
 * text that parses to the same value.
 */
#include "fuzz.h"

#include "bench.h"
#include "cli.h"

#include <regex.h>

static void spec(const char *s) {
  tkb_spec a, b;
  if (tkb_spec_parse(s, &a) != TKB_OK) return;
  char text[512];
  tkb_spec_format(&a, text, sizeof text);
  FUZZ_ASSERT(tkb_spec_parse(text, &b) == TKB_OK && tkb_spec_equal(&a, &b), "spec %s -> %s", s, text);
}

static void dtype(const char *s) {
  tkb_dtype d, e;
  if (tkb_dtype_parse(s, &d) != TKB_OK) return;
  FUZZ_ASSERT(tkb_dtype_parse(tkb_dtype_name(d), &e) == TKB_OK && d == e, "dtype %s", s);
}

static void mode(const char *s) {
  tkb_mode m, n;
  if (tkb_mode_parse(s, &m) != TKB_OK) return;
  FUZZ_ASSERT(tkb_mode_parse(tkb_mode_name(m), &n) == TKB_OK && m == n, "mode %s", s);
}

static void method(const char *s) {
  tkb_device *cpu;
  const tkb__method *m;
  if (tkb_device_get("cpu", &cpu) != TKB_OK) abort();
  if (tkb__method_lookup(cpu, s, &m) == TKB_OK) FUZZ_ASSERT(m && m->name, "method %s", s);
  char names[1024];
  tkb__method_names(names, sizeof names);
}

static void format(const char *s) {
  const tkb__format *f;
  if (tkb__format_parse(s, &f) == TKB_OK) FUZZ_ASSERT(f && f->ops, "format %s", s);
  FUZZ_ASSERT(tkb__format_from_path(s) != NULL, "path %s", s);
}

static void regex(const char *s) {
  if (tkb__regex_check(s, "filter") != TKB_OK) return;
  regex_t re;
  if (regcomp(&re, s, REG_EXTENDED | REG_NOSUB) != 0) return;
  regexec(&re, "cpu_96x96x64_forward_and_vjp_reference", 0, NULL, 0);
  regexec(&re, "", 0, NULL, 0);
  regfree(&re);
}

static void stop(const char *s) {
  tkb__stop_choice c, d;
  if (tkb__stop_parse(s, "--stop", &c) != TKB_OK) return;
  char text[512];
  tkb__stop_text(&c, text, sizeof text);
  FUZZ_ASSERT(tkb__stop_parse(text, "--stop", &d) == TKB_OK, "stop %s -> %s", s, text);
  char again[512];
  tkb__stop_text(&d, again, sizeof again);
  FUZZ_ASSERT(strcmp(text, again) == 0, "stop %s -> %s -> %s", s, text, again);
}

static void device(const char *s) {
  /* only the name's grammar: opening a device is no parser */
  tkb__device_name_check(s);
  char kind[32];
  tkb__device_kind(s, kind, sizeof kind);
}

static void paths(const char *s) {
  char *j = tkb__journal_path(s);
  FUZZ_ASSERT(j && strlen(j) == strlen(s) + strlen(".partial.jsonl"), "journal path of %s", s);
  free(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  char *s = fuzz_text(data + 1, size - 1);
  switch (data[0] % 9) {
    case 0: spec(s); break;
    case 1: dtype(s); break;
    case 2: mode(s); break;
    case 3: device(s); break;
    case 4: method(s); break;
    case 5: format(s); break;
    case 6: regex(s); break;
    case 7: stop(s); break;
    case 8: paths(s); break;
  }
  free(s);
  return 0;
}
