/*
 * json_nonfinite.c - JSON as Google Benchmark and Python write it: a number that is not
 * finite is the bare word NaN, Infinity or -Infinity (Google Benchmark writes NaN for a
 * counter that divides 0 by 0; Python's json module writes all three). JSON has no such
 * words and cJSON refuses them, which would refuse a whole file for one counter nobody
 * compares.
 *
 * Each such word outside a string becomes a string that no file holds (a \u0001 escape,
 * the word after it) before cJSON parses the text; the parsed tree's strings of that form
 * become numbers again, NaN or an infinity. A parse failure's position is mapped back to
 * the text as given, so a message's line and column stay those of the file.
 * Whoever reads a number decides whether a non-finite one is acceptable (a time is not).
 */
#include "results.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The sentinel's prefix after cJSON decodes it: \u0001 then this tag. */
#define SENTINEL_PREFIX "\x01tkb-nonfinite:"
#define SENTINEL_ESCAPED "\"\\u0001tkb-nonfinite:"

static const struct {
  const char *word;
  double value;
} words[] = {{"-Infinity", -INFINITY}, {"Infinity", INFINITY}, {"-NaN", NAN}, {"NaN", NAN},
             {"-inf", -INFINITY},      {"inf", INFINITY},      {"-nan", NAN}, {"nan", NAN}};

/* The word at p (NULL when none), which must end where a JSON value may end. */
static int word_at(const char *p, const char *end) {
  for (size_t k = 0; k < TKB_ARRAY_LEN(words); k++) {
    const size_t n = strlen(words[k].word);
    if ((size_t)(end - p) < n || memcmp(p, words[k].word, n) != 0) continue;
    if (p + n < end && !strchr(",]} \t\r\n", p[n])) continue;
    return (int)k;
  }
  return -1;
}

/* One substitution: where it is in the new text, and where its word was. */
typedef struct shift {
  size_t new_at, new_end; /* the sentinel in the new text */
  size_t old_at, old_end; /* the word in the text as given */
} shift;

/* The new text's offset mapped back to the text as given. */
static size_t old_offset(const shift *s, size_t n, size_t new_at) {
  size_t k = n;
  while (k > 0 && s[k - 1].new_at > new_at) k--;
  if (k == 0) return new_at;
  const shift *last = &s[k - 1]; /* the last substitution at or before new_at */
  if (new_at < last->new_end) return last->old_at;
  return new_at - last->new_end + last->old_end;
}

/* Numbers again: every string of the sentinel's form in the tree. */
static size_t restore(cJSON *node) {
  size_t n = 0;
  for (; node; node = node->next) {
    if (cJSON_IsString(node) && node->valuestring &&
        strncmp(node->valuestring, SENTINEL_PREFIX, strlen(SENTINEL_PREFIX)) == 0) {
      const char *word = node->valuestring + strlen(SENTINEL_PREFIX);
      double v = NAN;
      for (size_t k = 0; k < TKB_ARRAY_LEN(words); k++)
        if (strcmp(word, words[k].word) == 0) v = words[k].value;
      cJSON_free(node->valuestring);
      node->valuestring = NULL;
      node->type = (node->type & ~0xFF) | cJSON_Number;
      node->valuedouble = v;
      /* cJSON's int view: saturated for infinities, 0 for NaN (a cast would be undefined) */
      node->valueint = isnan(v) ? 0 : v > 0 ? INT_MAX : INT_MIN;
      n++;
    }
    n += restore(node->child);
  }
  return n;
}

cJSON *tkb__json_parse_nonfinite(const char *text, size_t len, const char **at) {
  /* the words outside strings, and the length of the text with them replaced */
  size_t n_words = 0, cap = 0, grown = len;
  shift *s = NULL;
  bool in_string = false, failed = false;
  for (size_t i = 0; i < len && !failed; i++) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\') i++;
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') {
      in_string = true;
      continue;
    }
    if (ch != 'N' && ch != 'I' && ch != '-' && ch != 'n' && ch != 'i') continue;
    const int k = word_at(text + i, text + len);
    if (k < 0) continue;
    if (n_words == cap) {
      cap = cap ? 2 * cap : 8;
      shift *t = realloc(s, cap * sizeof *t);
      if (!t) {
        failed = true;
        break;
      }
      s = t;
    }
    s[n_words++] = (shift){.old_at = i};
    grown += strlen(SENTINEL_ESCAPED) + 1; /* the word stays; the quotes and tag are added */
    i += strlen(words[k].word) - 1;
  }
  if (failed) {
    free(s);
    return NULL;
  }
  if (n_words == 0) return cJSON_ParseWithLengthOpts(text, len, at, false);
  char *copy = malloc(grown + 1);
  if (!copy) {
    free(s);
    return NULL;
  }
  size_t from = 0, to = 0;
  for (size_t w = 0; w < n_words; w++) {
    memcpy(copy + to, text + from, s[w].old_at - from);
    to += s[w].old_at - from;
    s[w].new_at = to;
    const int k = word_at(text + s[w].old_at, text + len);
    const size_t wl = strlen(words[k].word);
    to += (size_t)sprintf(copy + to, "%s%s\"", SENTINEL_ESCAPED, words[k].word);
    s[w].new_end = to;
    from = s[w].old_end = s[w].old_at + wl;
  }
  memcpy(copy + to, text + from, len - from);
  to += len - from;
  copy[to] = '\0';
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(copy, to, &end, false);
  if (at) *at = end ? text + old_offset(s, n_words, (size_t)(end - copy)) : NULL;
  if (doc) restore(doc);
  free(copy);
  free(s);
  return doc;
}

/* The first non-finite number under node that is not one of the row's times. */
static size_t count_in(const cJSON *node, const char **key) {
  size_t n = 0;
  for (; node; node = node->next) {
    if (cJSON_IsNumber(node) && !isfinite(node->valuedouble)) {
      if (!*key) *key = node->string;
      n++;
    }
    n += count_in(node->child, key);
  }
  return n;
}

size_t tkb__json_count_nonfinite(const cJSON *benchmarks, const char **row_name, const char **key) {
  size_t n = 0;
  *row_name = *key = NULL;
  for (const cJSON *row = benchmarks ? benchmarks->child : NULL; row; row = row->next) {
    const char *k = NULL;
    const size_t here = count_in(row->child, &k);
    if (here && !*key) {
      const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "name");
      *row_name = cJSON_IsString(name) ? name->valuestring : "?";
      *key = k ? k : "?";
    }
    n += here;
  }
  return n;
}
