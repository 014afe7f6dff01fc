/* registry.c - the suite's entries (Tokamax's register_benchmark), and their lookup by
 * full name. Every program registers its entries at each start (the shipped ops alone
 * over 3,000), so registering one costs a hash probe and a few copies: no scan of the
 * others, no printf, no malloc of its own. */
#include "bind.h"
#include "std_fn.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
  tkb_benchmark_def def; /* its strings are copies, in the registry's chunks */
  const char *full;      /* "{name}_{mode}_{impl_name}" */
  uint64_t hash;         /* of full */
  tkb_meta *metadata;    /* def.metadata's copy (one malloc'd block with its strings), or NULL */
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The entries, in segments that never move once made: no copying as the registry grows,
 * and a reader needs no lock (an entry, once its index is published through n_entries,
 * never changes until tkb_registry_clear). */
#define SEGMENT_BITS 10
#define SEGMENT (1u << SEGMENT_BITS)
#define MAX_SEGMENTS 4096 /* 4 million entries */
static entry *segments[MAX_SEGMENTS];
static size_t n_entries;

static entry *at_index(size_t i) { return &segments[i >> SEGMENT_BITS][i & (SEGMENT - 1)]; }

/* The entries' strings, packed one after another into chunks: a malloc per entry cost
 * more than the rest of registering it, and its headers and padding spread the strings
 * over more pages to fault in. */
typedef struct chunk {
  struct chunk *next;
  size_t used, cap;
  char data[];
} chunk;
#define CHUNK_BYTES (64 * 1024)
static chunk *chunks; /* the newest first */

/* n bytes from the newest chunk (a new one when it is full). Lock held. */
static char *chunk_alloc(size_t n) {
  if (!chunks || chunks->cap - chunks->used < n) {
    const size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
    chunk *c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    *c = (chunk){.next = chunks, .used = 0, .cap = cap};
    chunks = c;
  }
  char *p = chunks->data + chunks->used;
  chunks->used += n;
  return p;
}

/*
 * The full names, hashed: registration checks a new name against every registered one,
 * and a scan per registration would make every start quadratic in the entries. Open
 * addressing with linear probing; a slot holds the entry's index + 1 (0: empty) and the
 * upper half of its hash, so a probe touches an entry only when that half matches. The
 * table doubles before its load passes 1/2, so a probe sequence stays short.
 */
typedef struct slot {
  uint32_t index; /* entry index + 1; 0: empty */
  uint32_t tag;   /* hash >> 32 */
} slot;
static slot *slots;
static size_t n_slots; /* a power of two, or 0 */

/* A multiply-xorshift over 8 bytes at a time (names run to a hundred characters, and a
 * byte-at-a-time hash's chain of multiplies was most of registering one); n is strlen(s). */
static uint64_t hash_name(const char *s, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  for (; n >= 8; s += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  memcpy(&w, s, n);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

/* The slot holding `full` (hash h), or the empty slot where it would go. Lock held. */
static slot *probe(const char *full, uint64_t h) {
  const size_t mask = n_slots - 1;
  const uint32_t tag = (uint32_t)(h >> 32);
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    slot *s = &slots[i];
    if (s->index == 0) return s;
    if (s->tag == tag && strcmp(at_index(s->index - 1)->full, full) == 0) return s;
  }
}

/* Room for one more name, and for its entry. Lock held. */
static bool grow(void) {
  if (n_entries % SEGMENT == 0) {
    if (n_entries / SEGMENT == MAX_SEGMENTS) return false;
    entry **seg = &segments[n_entries / SEGMENT];
    if (!*seg && !(*seg = malloc(SEGMENT * sizeof **seg))) return false;
  }
  if (n_slots && 2 * (n_entries + 1) <= n_slots) return true;
  size_t n = n_slots ? 2 * n_slots : 1024;
  slot *t = calloc(n, sizeof *t);
  if (!t) return false;
  free(slots);
  slots = t;
  n_slots = n;
  for (size_t i = 0; i < n_entries; i++) {
    const entry *e = at_index(i);
    *probe(e->full, e->hash) = (slot){.index = (uint32_t)(i + 1), .tag = (uint32_t)(e->hash >> 32)};
  }
  return true;
}

/* [A-Za-z0-9_.-], by a table: isalnum follows the locale (and reads it per character). */
static bool name_char[256];
static pthread_once_t name_chars_once = PTHREAD_ONCE_INIT;

static void fill_name_chars(void) {
  for (int c = 0; c < 256; c++)
    name_char[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '_' || c == '.' || c == '-';
}

static bool valid_chars(const char *s) {
  pthread_once(&name_chars_once, fill_name_chars);
  if (!*s) return false;
  for (; *s; s++)
    if (!name_char[(unsigned char)*s]) return false;
  return true;
}

/* An op registers each spec name once per mode and implementation, one after another:
 * the last name found valid (per thread) is remembered, and comparing with it costs less
 * than checking it again. */
static _Thread_local char last_valid[256];

static bool valid_name(const char *s) {
  if (!s) return false;
  if (*s && strcmp(s, last_valid) == 0) return true;
  if (!valid_chars(s)) return false;
  if (strlen(s) < sizeof last_valid) strcpy(last_valid, s);
  return true;
}

/* A copy of metadata[0..n) in one malloc'd block: the pairs, then their strings. */
static tkb_meta *copy_metadata(const tkb_meta *metadata, int n) {
  size_t size = (size_t)n * sizeof(tkb_meta);
  for (int k = 0; k < n; k++) size += strlen(metadata[k].key) + strlen(metadata[k].value) + 2;
  tkb_meta *out = malloc(size);
  if (!out) return NULL;
  char *at = (char *)(out + n);
  for (int k = 0; k < n; k++) {
    const size_t lk = strlen(metadata[k].key) + 1, lv = strlen(metadata[k].value) + 1;
    out[k].key = memcpy(at, metadata[k].key, lk);
    out[k].value = memcpy(at + lk, metadata[k].value, lv);
    at += lk + lv;
  }
  return out;
}

/* Copies s (n bytes and its NUL) to *at and moves *at past it; returns the copy. */
static const char *put(char **at, const char *s, size_t n) {
  char *copy = memcpy(*at, s, n);
  copy[n] = '\0';
  *at += n + 1;
  return copy;
}

/* s, or prev when it holds the same text: consecutive entries mostly share their spec
 * name, op, tags and device kind, and one copy of each is enough. */
static const char *shared(const char *s, const char *prev) {
  return prev && strcmp(s, prev) == 0 ? prev : NULL;
}

/* What tkb_register_benchmark refuses: a missing fn, names outside [A-Za-z0-9_.-], a mode
 * that is no tkb_mode, negative counts, metadata that is NULL where it is counted. */
static tkb_status check_def(const tkb_benchmark_def *def) {
  if (!def || !def->fn)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_register_benchmark: %s is NULL",
                         !def ? "def" : "def->fn");
  if (!valid_name(def->name) || !def->impl_name || !valid_chars(def->impl_name))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "benchmark name \"%s\" / impl_name \"%s\": names must be non-empty and use "
                         "only letters, digits, '_', '.' and '-'",
                         def->name ? def->name : "(null)", def->impl_name ? def->impl_name : "(null)");
  if ((int)def->mode < 0 || def->mode > TKB_MODE_FORWARD_AND_VJP)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "benchmark \"%s\": mode %d is not a tkb_mode",
                         def->name, (int)def->mode);
  if (def->iterations < 0 || def->n_metadata < 0 || (def->n_metadata > 0 && !def->metadata))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "benchmark \"%s\": iterations = %d, n_metadata = %d (metadata %s); "
                         "both must be >= 0, with metadata given when n_metadata > 0",
                         def->name, def->iterations, def->n_metadata, def->metadata ? "given" : "NULL");
  for (int k = 0; k < def->n_metadata; k++)
    if (!def->metadata[k].key || !def->metadata[k].value)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "benchmark \"%s\": metadata[%d] has a NULL %s", def->name, k,
                           !def->metadata[k].key ? "key" : "value");
  return TKB_OK;
}

/* The entry's texts; stop and method may be NULL (the run's). */
enum { N_TEXT = 7 };
static void entry_texts(const tkb_benchmark_def *d, const char **text) {
  const char *t[N_TEXT] = {d->op ? d->op : d->fn->name, d->name, d->impl_name, d->tags ? d->tags : "",
                           d->device_kind ? d->device_kind : "cpu", d->stop, d->method};
  memcpy(text, t, sizeof t);
}

tkb_status tkb_register_benchmark(const tkb_benchmark_def *def) {
  tkb__clear_error();
  tkb_status st = check_def(def);
  if (st) return st;
  tkb_meta *metadata = NULL;
  if (def->n_metadata > 0 && !(metadata = copy_metadata(def->metadata, def->n_metadata)))
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory registering %s", def->name);
  const char *text[N_TEXT], *prev_text[N_TEXT] = {NULL};
  entry_texts(def, text);
  const char *mode = tkb_mode_name(def->mode);
  const size_t ln = strlen(def->name), lm = strlen(mode), li = strlen(def->impl_name);
  const size_t full_len = ln + 1 + lm + 1 + li;

  pthread_mutex_lock(&lock);
  /* the previous entry's copies (texts already in the registry's own form) */
  if (n_entries) {
    const tkb_benchmark_def *p = &at_index(n_entries - 1)->def;
    const char *t[N_TEXT] = {p->op, p->name, p->impl_name, p->tags, p->device_kind, p->stop, p->method};
    memcpy(prev_text, t, sizeof t);
  }
  const char *copy[N_TEXT];
  size_t len[N_TEXT], size = full_len + 1;
  for (int k = 0; k < N_TEXT; k++) {
    copy[k] = text[k] ? shared(text[k], prev_text[k]) : NULL;
    len[k] = copy[k] || !text[k] ? 0 : strlen(text[k]);
    size += copy[k] || !text[k] ? 0 : len[k] + 1;
  }
  char *at = grow() ? chunk_alloc(size) : NULL;
  if (!at) {
    pthread_mutex_unlock(&lock);
    free(metadata);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory registering %s", def->name);
  }
  entry e = {.def = *def, .full = at, .metadata = metadata};
  e.def.metadata = metadata;
  memcpy(at, def->name, ln);
  at += ln;
  *at++ = '_';
  memcpy(at, mode, lm);
  at += lm;
  *at++ = '_';
  put(&at, def->impl_name, li);
  e.hash = hash_name(e.full, full_len);
  slot *at_slot = probe(e.full, e.hash);
  if (at_slot->index) {
    st = tkb_set_error(TKB_ERR_DUPLICATE_ARGUMENT, "benchmark \"%s\" is already registered", e.full);
    chunks->used -= size; /* the last allocation, and the lock is still held */
    free(metadata);
  } else {
    for (int k = 0; k < N_TEXT; k++)
      if (!copy[k] && text[k]) copy[k] = put(&at, text[k], len[k]);
    e.def.op = copy[0];
    e.def.name = copy[1];
    e.def.impl_name = copy[2];
    e.def.tags = copy[3];
    e.def.device_kind = copy[4];
    e.def.stop = copy[5];
    e.def.method = copy[6];
    *at_index(n_entries) = e;
    *at_slot = (slot){.index = (uint32_t)(n_entries + 1), .tag = (uint32_t)(e.hash >> 32)};
    __atomic_store_n(&n_entries, n_entries + 1, __ATOMIC_RELEASE); /* readers take no lock */
  }
  pthread_mutex_unlock(&lock);
  return st;
}

tkb_status tkb_registry_find(const char *full_name, size_t *index) {
  tkb__clear_error();
  if (!full_name || !index)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_registry_find: %s is NULL",
                         !full_name ? "full_name" : "index");
  pthread_mutex_lock(&lock);
  const slot *s = n_slots ? probe(full_name, hash_name(full_name, strlen(full_name))) : NULL;
  const size_t found = s ? s->index : 0;
  pthread_mutex_unlock(&lock);
  if (!found)
    return tkb_set_error(TKB_ERR_NOT_FOUND, "no benchmark entry is named \"%s\"", full_name);
  *index = found - 1;
  return TKB_OK;
}

size_t tkb_registry_count(void) { return __atomic_load_n(&n_entries, __ATOMIC_ACQUIRE); }

const tkb_benchmark_def *tkb_registry_get(size_t i) {
  return i < tkb_registry_count() ? &at_index(i)->def : NULL;
}

const char *tkb_registry_full_name(size_t i) {
  return i < tkb_registry_count() ? at_index(i)->full : NULL;
}

bool tkb_registry_has_tag(size_t i, const char *tag) {
  if (i >= tkb_registry_count() || !tag) return false;
  size_t n = strlen(tag);
  for (const char *p = at_index(i)->def.tags; *p;) {
    size_t len = strcspn(p, ",");
    if (len == n && strncmp(p, tag, n) == 0) return true;
    p += len;
    if (*p == ',') p++;
  }
  return false;
}

void tkb_registry_clear(void) {
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < n_entries; i++) free(at_index(i)->metadata);
  while (chunks) {
    chunk *next = chunks->next;
    free(chunks);
    chunks = next;
  }
  for (size_t k = 0; k < MAX_SEGMENTS && segments[k]; k++) {
    free(segments[k]);
    segments[k] = NULL;
  }
  free(slots);
  slots = NULL;
  __atomic_store_n(&n_entries, 0, __ATOMIC_RELEASE);
  n_slots = 0;
  pthread_mutex_unlock(&lock);
}

tkb_status tkb__entry_args(size_t i, const tkb_value **args, size_t *n_args,
                             const tkb_kwarg **kwargs, size_t *n_kwargs) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  if (!d) return tkb_set_error(TKB_ERR_NOT_FOUND, "no benchmark entry %zu (%zu registered)", i,
                               tkb_registry_count());
  if (d->factory) return d->factory(d->user, args, n_args, kwargs, n_kwargs);
  *args = d->args;
  *n_args = d->n_args;
  *kwargs = d->kwargs;
  *n_kwargs = d->n_kwargs;
  return TKB_OK;
}

tkb_status tkb_registry_standardize(size_t i, const char *device, uint64_t seed,
                                    tkb_std_fn **f_std, tkb_arrays **std_args) {
  const tkb_value *args;
  const tkb_kwarg *kwargs;
  size_t na, nk;
  tkb_status st = tkb__entry_args(i, &args, &na, &kwargs, &nk);
  if (st) return st;
  const tkb_benchmark_def *d = tkb_registry_get(i);
  tkb_std_opts o = {.mode = d->mode, .seed = seed, .device = device};
  st = tkb_standardize_function(d->fn, args, na, kwargs, nk, &o, f_std, std_args);
  if (!st) (*f_std)->entry = tkb_registry_full_name(i); /* names its profiler trace */
  return st;
}

tkb_status tkb_registry_counts(size_t i, tkb_counts *out) {
  *out = (tkb_counts){0};
  const tkb_value *args;
  const tkb_kwarg *kwargs;
  size_t na, nk;
  tkb_status st = tkb__entry_args(i, &args, &na, &kwargs, &nk);
  if (st) return st;
  const tkb_benchmark_def *d = tkb_registry_get(i);
  if (!d->counts) return TKB_OK;
  tkb_value *bound;
  st = tkb__bind(d->fn, args, na, kwargs, nk, &bound);
  if (st) return st;
  tkb_args a = {.fn = d->fn, .count = d->fn->n_params, .values = bound};
  st = d->counts(&a, d->mode, out);
  tkb__bound_free(bound, d->fn->n_params);
  return st;
}

/* The keys a Google Benchmark row has of its own (and tkbench's object): a counter of the
 * same name would write the key twice. */
static const char *const row_keys[] = {
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "aggregate_name", "aggregate_unit", "error_occurred",
    "error_message", "skipped", "skip_message", "iterations", "real_time", "cpu_time", "time_unit",
    "label", "items_per_second", "bytes_per_second", "flops_per_second", "cpu_coefficient",
    "real_coefficient", "big_o", "rms", "allocs_per_iter", "max_bytes_used",
    "total_allocated_bytes", "net_heap_growth", "tkbench"};

tkb_status tkb__counter_name_check(const char *name, const char *const *earlier, int n_earlier) {
  const size_t len = name ? strlen(name) : 0;
  bool bad = len == 0 || len > 63;
  for (size_t k = 0; k < len && !bad; k++) {
    const unsigned char c = (unsigned char)name[k];
    bad = c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == ',';
  }
  if (bad)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "counter name \"%s\" must be 1 to 63 printable ASCII characters without "
                         "'\"', '\\' or ','", name ? name : "(null)");
  for (size_t k = 0; k < TKB_ARRAY_LEN(row_keys); k++)
    if (strcmp(name, row_keys[k]) == 0)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "counter name \"%s\" is a key Google Benchmark's rows have already; "
                           "choose another", name);
  for (int k = 0; k < n_earlier; k++)
    if (strcmp(name, earlier[k]) == 0)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "counter name \"%s\" is given twice", name);
  return TKB_OK;
}

tkb_status tkb_registry_counters(size_t i, tkb_counter *out, int cap, int *n) {
  tkb__clear_error();
  if (!out || !n || cap < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_registry_counters: %s",
                         !out ? "out is NULL" : !n ? "n is NULL" : "cap is negative");
  *n = 0;
  const tkb_value *args;
  const tkb_kwarg *kwargs;
  size_t na, nk;
  tkb_status st = tkb__entry_args(i, &args, &na, &kwargs, &nk);
  if (st) return st;
  const tkb_benchmark_def *d = tkb_registry_get(i);
  if (!d->counters) return TKB_OK;
  tkb_value *bound;
  st = tkb__bind(d->fn, args, na, kwargs, nk, &bound);
  if (st) return st;
  tkb_args a = {.fn = d->fn, .count = d->fn->n_params, .values = bound};
  int got = 0;
  st = d->counters(&a, d->mode, out, cap, &got);
  tkb__bound_free(bound, d->fn->n_params);
  if (!st && (got < 0 || got > cap))
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: its counters function reported %d counters; "
                       "0 to %d fit", tkb_registry_full_name(i), got, cap);
  const char *names[TKB_MAX_COUNTERS];
  for (int k = 0; !st && k < got; k++) {
    if (tkb__counter_name_check(out[k].name, names, k < TKB_MAX_COUNTERS ? k : TKB_MAX_COUNTERS)) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", tkb_last_error());
      st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: %s", tkb_registry_full_name(i), msg);
    }
    if (k < TKB_MAX_COUNTERS) names[k] = out[k].name;
  }
  if (!st) *n = got;
  return st;
}
