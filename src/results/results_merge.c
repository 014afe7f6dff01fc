/*
 * results_merge.c - result files of one run's parts (shards, a node's devices, the
 * journal a dead shard left) put back together as one file in the same schema.
 *
 * Merging is refused where the parts cannot be one run: an entry in two files (which to
 * keep would be a guess), files whose contexts differ in what the numbers mean (the
 * library's version, the timing method, the seed of the inputs, the calls per experiment,
 * the stopping rule, the warm-up, the kind of device), and Google Benchmark files mixed
 * with tkbench's (their rows mean different things). Differences that leave the numbers
 * comparable (hosts, devices of one kind, dates) are said and kept: each file's context is
 * listed under the merged context's "merged", and every row names its shard and host.
 *
 * Rows are copied as they are, but for family_index, renumbered so that the merged file's
 * families are distinct as one run's are, and for what the merged file could not hold
 * as read: bytes of a string that are not UTF-8 become U+FFFD (said), since JSON text is
 * UTF-8 and every reader of the merged file would refuse it otherwise; and a number
 * beyond double's range (1e999 reads as infinity, which JSON writes as null, which
 * compare and report refuse) is refused, naming where it is.
 */
#include "jsonw.h"
#include "results.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Context fields whose difference makes two files' numbers incomparable. A field absent
 * from both files is no difference. The device's kind is compared apart. */
static const char *const must_match[] = {"library", "library_version", "method", "seed", "iterations",
                                         "stopping_rule", "warmup"};
/* Fields worth a warning when they differ: the numbers stay comparable. */
static const char *const may_differ[] = {"host_name", "cpu_model", "device_description",
                                         "library_build_type", "experiments", "interval_ms",
                                         "interleave", "executable"};

static const char *kind_name(tkb__rf_kind k) {
  return k == TKB__RF_JOURNAL ? "journal" : k == TKB__RF_GBENCH ? "Google Benchmark" : "tkbench";
}

/* A field's value as short text ("(none)" when absent). */
static void value_text(const cJSON *ctx, const char *key, char *buf, size_t cap) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(ctx, key);
  if (!v) {
    snprintf(buf, cap, "(none)");
  } else if (cJSON_IsString(v)) {
    snprintf(buf, cap, "%s", v->valuestring);
  } else {
    char *t = cJSON_PrintUnformatted(v);
    snprintf(buf, cap, "%s", t ? t : "?");
    free(t);
  }
}

/* "cuda" for a context's device "cuda:1"; "" when it names none. */
static void device_kind(const cJSON *ctx, char *buf, size_t cap) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(ctx, "device");
  const char *s = cJSON_IsString(d) ? d->valuestring : "";
  snprintf(buf, cap, "%.*s", (int)strcspn(s, ":"), s);
}

static tkb_status no_memory(void) {
  return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory merging result files");
}

/* Google Benchmark's files merge only with each other. */
static tkb_status check_kinds(const tkb__results_file *f, size_t n) {
  for (size_t i = 1; i < n; i++) {
    bool a = f[0].kind == TKB__RF_GBENCH, b = f[i].kind == TKB__RF_GBENCH;
    if (a != b)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "\"%s\" is a %s file and \"%s\" a %s one: Google Benchmark files merge "
                           "only with each other, since their rows do not hold what tkbench's do",
                           f[0].path, kind_name(f[0].kind), f[i].path, kind_name(f[i].kind));
  }
  return TKB_OK;
}

static tkb_status check_contexts(const tkb__results_file *f, size_t n, tkb__merge_warn_fn warn, void *user) {
  char a[256], b[256];
  for (size_t i = 1; i < n; i++) {
    for (size_t k = 0; k < TKB_ARRAY_LEN(must_match); k++) {
      const char *key = must_match[k];
      const cJSON *x = cJSON_GetObjectItemCaseSensitive(f[0].context, key);
      const cJSON *y = cJSON_GetObjectItemCaseSensitive(f[i].context, key);
      if (!x && !y) continue;
      if (x && y && cJSON_Compare(x, y, true)) continue;
      value_text(f[0].context, key, a, sizeof a);
      value_text(f[i].context, key, b, sizeof b);
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "\"%s\" and \"%s\" differ in the context's \"%s\" (%s and %s): their "
                           "numbers are not comparable, so they are not one run's parts",
                           f[0].path, f[i].path, key, a, b);
    }
    device_kind(f[0].context, a, sizeof a);
    device_kind(f[i].context, b, sizeof b);
    if (strcmp(a, b) != 0)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "\"%s\" and \"%s\" ran on different kinds of device (the context's "
                           "\"device\": %s and %s): their numbers are not comparable",
                           f[0].path, f[i].path, *a ? a : "(none)", *b ? b : "(none)");
  }
  /* each benign difference once, with the first file that differs */
  for (size_t k = 0; k < TKB_ARRAY_LEN(may_differ); k++)
    for (size_t i = 1; i < n; i++) {
      const cJSON *x = cJSON_GetObjectItemCaseSensitive(f[0].context, may_differ[k]);
      const cJSON *y = cJSON_GetObjectItemCaseSensitive(f[i].context, may_differ[k]);
      if ((!x && !y) || (x && y && cJSON_Compare(x, y, true))) continue;
      char text[900];
      value_text(f[0].context, may_differ[k], a, sizeof a);
      value_text(f[i].context, may_differ[k], b, sizeof b);
      snprintf(text, sizeof text, "the files differ in the context's \"%s\" (%s in \"%s\", %s in "
               "\"%s\"): the merged context keeps the first's, and \"merged\" lists each file's",
               may_differ[k], a, f[0].path, b, f[i].path);
      warn(user, text);
      break;
    }
  return TKB_OK;
}

/* An entry in two files: refused, naming the first such entry and how many there are. */
static tkb_status check_duplicates(const tkb__results_file *f, size_t n) {
  const char *name = NULL, *first = NULL, *second = NULL;
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t e = 0; e < f[i].n_entries; e++)
      for (size_t j = 0; j < i; j++)
        if (tkb__results_file_find(&f[j], f[i].entries[e].name)) {
          if (!count++) {
            name = f[i].entries[e].name;
            first = f[j].path;
            second = f[i].path;
          }
          break;
        }
  if (!count) return TKB_OK;
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "entry \"%s\" is in both \"%s\" and \"%s\"%s: a merge takes each entry from "
                       "one file (two runs of one shard, or a shard's journal beside its file?)",
                       name, first, second,
                       count > 1 ? " (and more entries are in more than one file)" : "");
}

/* The shard a file ran: index and count, or count 0. */
static void shard_of(const tkb__results_file *f, int *index, int *count) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(f->context, "shard");
  const cJSON *i = cJSON_GetObjectItemCaseSensitive(s, "index");
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(s, "count");
  *index = cJSON_IsNumber(i) ? i->valueint : 0;
  *count = cJSON_IsNumber(c) && cJSON_IsNumber(i) ? c->valueint : 0;
}

static cJSON *copy_of(const cJSON *ctx, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(ctx, key);
  return v ? cJSON_Duplicate(v, true) : cJSON_CreateNull();
}

/* Where each file came from, for the merged context's "merged.files". */
static cJSON *file_record(const tkb__results_file *f) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  bool ok = cJSON_AddStringToObject(o, "path", f->path) &&
            cJSON_AddStringToObject(o, "kind", f->kind == TKB__RF_JOURNAL ? "journal"
                                                : f->kind == TKB__RF_GBENCH ? "gbench" : "tkbench") &&
            cJSON_AddNumberToObject(o, "entries", (double)f->n_entries);
  static const char *const keys[] = {"shard", "host_name", "device", "device_uuid", "slurm", "date",
                                     "interrupted"};
  for (size_t k = 0; ok && k < TKB_ARRAY_LEN(keys); k++) {
    cJSON *v = copy_of(f->context, keys[k]);
    ok = v && cJSON_AddItemToObject(o, keys[k], v);
    if (!ok) cJSON_Delete(v);
  }
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

/* The shards of one split that no file holds: warned, and listed in missing. */
static bool missing_shards(const tkb__results_file *f, size_t n, cJSON *missing, tkb__merge_warn_fn warn,
                           void *user) {
  int index, count, count0;
  shard_of(&f[0], &index, &count0);
  if (count0 < 1) return true;
  for (size_t i = 1; i < n; i++) {
    shard_of(&f[i], &index, &count);
    if (count != count0) return true; /* not one split: nothing to say */
  }
  char list[600] = "";
  size_t len = 0, absent = 0;
  for (int k = 0; k < count0; k++) {
    bool have = false;
    for (size_t i = 0; i < n && !have; i++) {
      shard_of(&f[i], &index, &count);
      have = index == k;
    }
    if (have) continue;
    absent++;
    if (!cJSON_AddItemToArray(missing, cJSON_CreateNumber(k))) return false;
    if (len < sizeof list) len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", len ? ", " : "", k);
  }
  if (absent) {
    char text[800];
    snprintf(text, sizeof text, "%zu of the %d shards are missing (%s): the merged file lacks their "
             "entries", absent, count0, list);
    warn(user, text);
  }
  return true;
}

/* The row's copy, with its shard and host and a family index unique in the merge. */
static cJSON *row_copy(const tkb__results_file *f, const cJSON *row, double family_base) {
  cJSON *r = cJSON_Duplicate(row, true);
  if (!r) return NULL;
  cJSON *fam = cJSON_GetObjectItemCaseSensitive(r, "family_index");
  /* in double: a file's indices may be anything up to double's range (a sum that is not
   * finite keeps the index as it was) */
  if (cJSON_IsNumber(fam) && isfinite(fam->valuedouble + family_base))
    cJSON_SetNumberValue(fam, fam->valuedouble + family_base);
  int index, count;
  shard_of(f, &index, &count);
  const cJSON *host = cJSON_GetObjectItemCaseSensitive(f->context, "host_name");
  /* tkbench's rows say it in their own object; Google Benchmark's rows at the top */
  cJSON *where = cJSON_GetObjectItemCaseSensitive(r, "tkbench");
  if (!cJSON_IsObject(where)) where = r;
  cJSON_DeleteItemFromObjectCaseSensitive(where, "shard");
  cJSON_DeleteItemFromObjectCaseSensitive(where, "host_name");
  cJSON *s = count ? cJSON_CreateNumber(index) : cJSON_CreateNull();
  cJSON *h = cJSON_IsString(host) ? cJSON_CreateString(host->valuestring) : cJSON_CreateNull();
  bool ok = s && h && cJSON_AddItemToObject(where, "shard", s);
  if (ok) s = NULL;
  ok = ok && cJSON_AddItemToObject(where, "host_name", h);
  if (ok) h = NULL;
  cJSON_Delete(s);
  cJSON_Delete(h);
  if (!ok) {
    cJSON_Delete(r);
    return NULL;
  }
  return r;
}

/* The largest family_index among a file's rows, + 1 (0 when none), in double: an int
 * would overflow at a file's INT_MAX. */
static double families(const tkb__results_file *f) {
  double top = 0;
  for (size_t e = 0; e < f->n_entries; e++)
    for (size_t k = 0; k < f->entries[e].n_rows; k++) {
      const cJSON *fam = cJSON_GetObjectItemCaseSensitive(f->entries[e].rows[k], "family_index");
      if (cJSON_IsNumber(fam) && fam->valuedouble + 1 > top) top = fam->valuedouble + 1;
    }
  return top;
}

/* The merged context: the first file's, with "shard" cleared, "interrupted" true when any
 * part was, and "merged" listing every file and (*missing) the shards none holds. */
static cJSON *merged_context(const tkb__results_file *f, size_t n, cJSON **missing) {
  cJSON *ctx = cJSON_Duplicate(f[0].context, true);
  if (!ctx) return NULL;
  bool interrupted = false;
  for (size_t i = 0; i < n; i++)
    interrupted = interrupted || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f[i].context, "interrupted")) ||
                  f[i].kind == TKB__RF_JOURNAL;
  static const char *const replaced[] = {"shard", "interrupted", "merged"};
  for (size_t k = 0; k < TKB_ARRAY_LEN(replaced); k++) cJSON_DeleteItemFromObjectCaseSensitive(ctx, replaced[k]);
  cJSON *merged = NULL, *files = NULL;
  bool ok = cJSON_AddNullToObject(ctx, "shard") && cJSON_AddBoolToObject(ctx, "interrupted", interrupted) &&
            (merged = cJSON_AddObjectToObject(ctx, "merged")) &&
            (files = cJSON_AddArrayToObject(merged, "files")) &&
            (*missing = cJSON_AddArrayToObject(merged, "missing_shards"));
  for (size_t i = 0; ok && i < n; i++) {
    cJSON *rec = file_record(&f[i]);
    ok = rec && cJSON_AddItemToArray(files, rec);
    if (!ok) cJSON_Delete(rec);
  }
  if (!ok) {
    cJSON_Delete(ctx);
    *missing = NULL;
    return NULL;
  }
  return ctx;
}

/* s with every byte that starts no UTF-8 sequence replaced by U+FFFD (malloc'd; NULL when
 * out of memory); *n counts them. */
static char *utf8_repaired(const char *s, size_t *n) {
  char *out = malloc(3 * strlen(s) + 1), *o = out;
  if (!out) return NULL;
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    const int len = jw_utf8_len(p);
    if (len == 0) {
      memcpy(o, "\xEF\xBF\xBD", 3);
      o += 3;
      p++;
      ++*n;
    } else {
      memcpy(o, p, (size_t)len);
      o += len;
      p += len;
    }
  }
  *o = '\0';
  return out;
}

static bool valid_utf8(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    const int len = jw_utf8_len(p);
    if (!len) return false;
    p += len;
  }
  return true;
}

/* Every string of v (keys too) made UTF-8; false when out of memory. */
static bool repair_strings(cJSON *v, size_t *replaced) {
  for (; v; v = v->next) {
    if (v->string && !(v->type & cJSON_StringIsConst) && !valid_utf8(v->string)) {
      char *k = utf8_repaired(v->string, replaced), *copy = k ? cJSON_malloc(strlen(k) + 1) : NULL;
      if (copy) strcpy(copy, k);
      free(k);
      if (!copy) return false;
      cJSON_free(v->string);
      v->string = copy;
    }
    if (cJSON_IsString(v) && v->valuestring && !valid_utf8(v->valuestring)) {
      char *t = utf8_repaired(v->valuestring, replaced);
      const bool ok = t && cJSON_SetValuestring(v, t);
      free(t);
      if (!ok) return false;
    }
    if (v->child && !repair_strings(v->child, replaced)) return false;
  }
  return true;
}

/* The first number in v that is not finite, its key (or "[i]") into where; false when
 * there is none. */
static bool nonfinite(const cJSON *v, char *where, size_t cap) {
  int i = 0;
  for (; v; v = v->next, i++) {
    char here[64];
    const size_t len = strlen(where);
    if (v->string) snprintf(here, sizeof here, "%s%.60s", len ? "." : "", v->string);
    else snprintf(here, sizeof here, "[%d]", i);
    if (cJSON_IsNumber(v) && !isfinite(v->valuedouble)) {
      if (len < cap) snprintf(where + len, cap - len, "%s", here);
      return true;
    }
    if (v->child) {
      if (len < cap) snprintf(where + len, cap - len, "%s", here);
      if (nonfinite(v->child, where, cap)) return true;
      where[len] = '\0';
    }
  }
  return false;
}

/* Two entries whose names differ only in bytes that are not UTF-8 would become one in the
 * merged file (both bytes become U+FFFD): refused, naming them as they would read. */
static tkb_status check_repaired_names(const tkb__results_file *f, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (size_t e = 0; e < f[i].n_entries; e++) {
      const char *name = f[i].entries[e].name;
      if (valid_utf8(name)) continue;
      size_t ignored = 0;
      char *fixed = utf8_repaired(name, &ignored);
      if (!fixed) return no_memory();
      for (size_t j = 0; j < n; j++)
        for (size_t k = 0; k < f[j].n_entries; k++) {
          const char *other = f[j].entries[k].name;
          if ((j == i && k == e) || strcmp(other, name) == 0) continue;
          char *other_fixed = valid_utf8(other) ? NULL : utf8_repaired(other, &ignored);
          const bool same = strcmp(other_fixed ? other_fixed : other, fixed) == 0;
          free(other_fixed);
          if (!same) continue;
          tkb_status st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                                        "two entries (in \"%s\" and \"%s\") have names that differ only "
                                        "in bytes that are not UTF-8; both read \"%s\" in the merged "
                                        "file, which is UTF-8: merging would make them one",
                                        f[i].path, f[j].path, fixed);
          free(fixed);
          return st;
        }
      free(fixed);
    }
  return TKB_OK;
}

/* A number the merged file could not hold: refused, naming the file and where it is. */
static tkb_status check_numbers(const tkb__results_file *f, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char where[400] = "";
    if (f[i].context && nonfinite(f[i].context->child, where, sizeof where))
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "\"%s\": the context's %s is a number beyond a double's range (it "
                           "reads as infinity, which JSON cannot hold): the merged file could not "
                           "keep it", f[i].path, where);
    for (size_t e = 0; e < f[i].n_entries; e++)
      for (size_t k = 0; k < f[i].entries[e].n_rows; k++) {
        where[0] = '\0';
        if (nonfinite(f[i].entries[e].rows[k]->child, where, sizeof where))
          return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                               "\"%s\": entry \"%s\": %s is a number beyond a double's range "
                               "(it reads as infinity, which JSON cannot hold): the merged file "
                               "could not keep it", f[i].path, f[i].entries[e].name, where);
      }
  }
  return TKB_OK;
}

tkb_status tkb__results_merge(const tkb__results_file *f, size_t n, tkb__merge_warn_fn warn, void *user,
                              cJSON **out, size_t *n_entries) {
  *out = NULL;
  *n_entries = 0;
  if (n == 0) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "no result files to merge");
  tkb_status st = check_kinds(f, n);
  if (!st) st = check_contexts(f, n, warn, user);
  if (!st) st = check_duplicates(f, n);
  if (!st) st = check_numbers(f, n);
  if (!st) st = check_repaired_names(f, n);
  if (st) return st;
  for (size_t i = 0; i < n; i++)
    for (size_t w = 0; w < f[i].n_warnings; w++) warn(user, f[i].warnings[w]);

  cJSON *missing = NULL;
  cJSON *ctx = merged_context(f, n, &missing);
  cJSON *doc = cJSON_CreateObject(), *rows = cJSON_CreateArray();
  bool ok = ctx && doc && rows && missing_shards(f, n, missing, warn, user);
  if (ok && (ok = cJSON_AddItemToObject(doc, "context", ctx))) ctx = NULL;
  if (ok && (ok = cJSON_AddItemToObject(doc, "benchmarks", rows))) rows = NULL;
  cJSON *into = cJSON_GetObjectItemCaseSensitive(doc, "benchmarks");
  double family_base = 0;
  for (size_t i = 0; ok && i < n; i++) {
    for (size_t e = 0; ok && e < f[i].n_entries; e++)
      for (size_t k = 0; ok && k < f[i].entries[e].n_rows; k++) {
        cJSON *r = row_copy(&f[i], f[i].entries[e].rows[k], family_base);
        ok = r && cJSON_AddItemToArray(into, r);
        if (!ok) cJSON_Delete(r);
      }
    if (isfinite(family_base + families(&f[i]))) family_base += families(&f[i]);
    *n_entries += f[i].n_entries;
  }
  cJSON_Delete(ctx);
  cJSON_Delete(rows);
  size_t replaced = 0;
  if (ok) ok = repair_strings(doc, &replaced);
  if (!ok) {
    cJSON_Delete(doc);
    *n_entries = 0;
    return no_memory();
  }
  if (replaced) {
    char text[200];
    snprintf(text, sizeof text, "%zu byte%s of names or messages were not UTF-8; the merged file "
             "holds U+FFFD for them", replaced, replaced == 1 ? "" : "s");
    warn(user, text);
  }
  *out = doc;
  return TKB_OK;
}
