/*
 * count_callgrind.c - counting under Valgrind's Callgrind (count.c says when): the
 * process runs under `valgrind --tool=callgrind`, which simulates and adds up every
 * instruction of every thread. Around the call:
 *
 *   start: zero the costs of every thread             (CALLGRIND_ZERO_STATS)
 *   read:  dump the costs to a file, read its summary (CALLGRIND_DUMP_STATS_AT)
 *
 * so what ran before (the standardization, the warm-up calls, the harness) is simulated
 * (the caches stay as they would be) but zeroed away, and what the call's threads ran is
 * in the dump. Callgrind's other switch, collection (CALLGRIND_TOGGLE_COLLECT,
 * --collect-atstart=no), would leave the harness out more cheaply, but it is a switch
 * of the thread that flips it: an OpenMP or OpenBLAS thread of the call would go
 * uncounted. Callgrind offers no request that returns a count, hence the dump: it writes "<out>.<N>" for its N-th dump, <out> being the file
 * valgrind's --callgrind-out-file names (%p for the pid), which tkbench's own re-executed
 * workers pass in TKB_CALLGRIND_OUT (src/cli/count_exec.c); Callgrind's default,
 * callgrind.out.%p in the current folder, otherwise. Each dump is tagged, checked and
 * removed once read (kept with TKB_CALLGRIND_KEEP, for callgrind_annotate). The requests are Valgrind's header's (valgrind/callgrind.h): a few
 * no-op instructions outside Valgrind, so the library carries them at no cost.
 *
 * A collection left off at start (valgrind run with --collect-atstart=no) is found by a
 * first dump and switched on, for this thread: only its instructions are counted then,
 * which the description says.
 */
#include "bench.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if TKB_HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#endif

typedef struct cg_state {
  char base[PATH_MAX];       /* the output file, %p expanded: dump N is "<base>.<N>" */
  char tag[64];              /* the next dump's, made before the count starts: formatting a
                                number of more digits would count more instructions */
  char *text;                /* the last dump read */
  size_t cap;
  unsigned char *flush_buf;  /* cold_cache: twice the simulated last-level cache */
  size_t flush_bytes;
  unsigned char stamp;
  char about[700];           /* describe()'s sentence */
} cg_state;

/* TKB_CALLGRIND_KEEP set: the dumps stay, one per counted call, for callgrind_annotate
 * to say where a call's instructions went (or why two calls differ). */
static bool keep_dumps;

/* Callgrind numbers the dumps of a process from 1 (a forked child starts again). */
static int dumps_made;
static pid_t dumps_pid;
/* Collection was found off at start and switched on for the thread that found it. */
static bool thread_only;

static bool cg_available(void) {
#if TKB_HAVE_CALLGRIND_H
  return RUNNING_ON_VALGRIND > 0;
#else
  return false;
#endif
}

/* TKB_CALLGRIND_OUT (else Callgrind's default) with %p replaced by the pid. */
static tkb_status output_base(char *buf, size_t cap) {
  const char *t = getenv("TKB_CALLGRIND_OUT");
  if (!t || !*t) t = "callgrind.out.%p";
  size_t len = 0;
  for (const char *p = t; *p; p++) {
    int w;
    if (p[0] == '%' && p[1] == 'p') {
      w = snprintf(buf + len, cap - len, "%ld", (long)getpid());
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      w = snprintf(buf + len, cap - len, "%%");
      p++;
    } else if (p[0] == '%') {
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "TKB_CALLGRIND_OUT \"%s\" holds a %% other than %%p (the pid) and %%%%: "
                           "tkbench cannot tell which file Callgrind writes", t);
    } else {
      w = snprintf(buf + len, cap - len, "%c", *p);
    }
    if (w < 0 || (size_t)w >= cap - len)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "TKB_CALLGRIND_OUT \"%s\" is too long for a path", t);
    len += (size_t)w;
  }
  return TKB_OK;
}

/* Reads path whole into s->text; false with errno when it cannot. */
static bool slurp(cg_state *s, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  size_t len = 0;
  for (;;) {
    if (s->cap - len < 4096) {
      size_t cap = s->cap ? 2 * s->cap : 65536;
      char *t = realloc(s->text, cap);
      if (!t) {
        fclose(f);
        errno = ENOMEM;
        return false;
      }
      s->text = t;
      s->cap = cap;
    }
    size_t got = fread(s->text + len, 1, s->cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  const bool ok = !ferror(f);
  fclose(f);
  s->text[len] = '\0';
  return ok;
}

/* The rest of the line after "key" at a line's start in text, or NULL. */
static const char *line_after(const char *text, const char *key) {
  const size_t n = strlen(key);
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp(p, key, n) == 0) return p + n;
  return NULL;
}

static const char *const event_names[TKB__N_EVENTS] = {"Ir",   "Dr",   "Dw",   "I1mr", "D1mr",
                                                       "D1mw", "ILmr", "DLmr", "DLmw"};

/* The summary of the dump in text into out (events it lacks: 0). */
static bool parse_dump(const char *text, tkb__events *out, bool *cache) {
  memset(out, 0, sizeof *out);
  const char *names = line_after(text, "events:");
  const char *values = line_after(text, "summary:");
  if (!values) values = line_after(text, "totals:");
  if (!names || !values) return false;
  int found = 0;
  for (;;) {
    while (*names == ' ' || *names == '\t') names++;
    if (!*names || *names == '\n' || *names == '\r') break;
    const size_t len = strcspn(names, " \t\r\n");
    char *end;
    const double v = strtod(values, &end);
    const bool have = end != values;
    values = end;
    for (int k = 0; k < TKB__N_EVENTS; k++)
      if (strlen(event_names[k]) == len && strncmp(names, event_names[k], len) == 0) {
        out->v[k] = have ? v : 0;
        found |= 1 << k;
      }
    names += len;
  }
  if (cache) *cache = (found & (1 << TKB__EV_DLMW)) != 0;
  return (found & (1 << TKB__EV_IR)) != 0;
}

/* The next dump's tag into s->tag. */
static void next_tag(cg_state *s) {
  if (dumps_pid != getpid()) { /* a fork's child numbers its own dumps */
    dumps_pid = getpid();
    dumps_made = 0;
  }
  snprintf(s->tag, sizeof s->tag, "tkbench-%ld-%d", (long)getpid(), dumps_made + 1);
}

/* Dumps the costs so far under s->tag (next_tag made it) and reads them back into *out
 * (the file is removed). Nothing before the request varies from dump to dump. */
static tkb_status dump(cg_state *s, tkb__events *out, bool *cache) {
#if TKB_HAVE_CALLGRIND_H
  CALLGRIND_DUMP_STATS_AT(s->tag);
#endif
  const char *tag = s->tag;
  char path[PATH_MAX + 32];
  dumps_made++;
  snprintf(path, sizeof path, "%s.%d", s->base, dumps_made);
  if (!slurp(s, path))
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "the instructions method found no Callgrind dump at %s (%s): the process "
                         "runs under Valgrind, but not its callgrind tool, or Callgrind writes "
                         "elsewhere (valgrind's --callgrind-out-file must be the file "
                         "TKB_CALLGRIND_OUT names, %%p for the pid)", path, strerror(errno));
  if (!keep_dumps) unlink(path);
  char trigger[128];
  snprintf(trigger, sizeof trigger, "Client Request: %s\n", tag);
  if (!strstr(s->text, trigger))
    return tkb_set_error(TKB_ERR_INTERNAL,
                         "Callgrind's dump %s is not the one tkbench asked for (%s): something "
                         "else in the process dumps too (CALLGRIND_DUMP_STATS, --dump-every-bb, "
                         "--dump-before/--dump-after)", path, tag);
  if (!parse_dump(s->text, out, cache))
    return tkb_set_error(TKB_ERR_INTERNAL, "Callgrind's dump %s has no \"events:\" and "
                         "\"summary:\" lines with Ir", path);
  return TKB_OK;
}

static void cg_close(tkb__counter *c) {
  cg_state *s = c->state;
  free(s->text);
  free(s->flush_buf);
  free(s);
}

/* "I1 cache: 32768 B, 64 B, 8-way associative" -> the description's part. */
static void cache_line(const char *text, const char *key, char *buf, size_t cap) {
  const char *v = line_after(text, key);
  snprintf(buf, cap, "%.*s", v ? (int)strcspn(v, "\n") : 1, v ? v : "?");
}

/* A few instructions to count, so a collection left off shows in the probe. */
static volatile unsigned probe_sink;

static tkb_status cg_open(tkb__counter *c) {
  cg_state *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the Callgrind counter");
  c->state = s;
  tkb_status st = output_base(s->base, sizeof s->base);
  keep_dumps = getenv("TKB_CALLGRIND_KEEP") && *getenv("TKB_CALLGRIND_KEEP");
  /* the probe: the loop between the zeroing and the dump counts unless collection is off
   * (--collect-atstart=no) */
#if TKB_HAVE_CALLGRIND_H
  if (!st) CALLGRIND_ZERO_STATS;
#endif
  if (!st) next_tag(s);
  for (unsigned i = 0; !st && i < 64; i++) probe_sink += i;
  tkb__events e;
  bool cache = false;
  if (!st) st = dump(s, &e, &cache);
  if (st) {
    cg_close(c);
    c->state = NULL;
    return st;
  }
  if (e.v[TKB__EV_IR] == 0) { /* collection off: on, for this thread (it stays on) */
    thread_only = true;
#if TKB_HAVE_CALLGRIND_H
    CALLGRIND_TOGGLE_COLLECT;
#endif
  }
  const char *creator = line_after(s->text, "creator:");
  char version[64], i1[96], d1[96], ll[96];
  snprintf(version, sizeof version, "%.*s", creator ? (int)strcspn(creator, "\n") : 1,
           creator ? creator : "?");
  cache_line(s->text, "desc: I1 cache:", i1, sizeof i1);
  cache_line(s->text, "desc: D1 cache:", d1, sizeof d1);
  cache_line(s->text, "desc: LL cache:", ll, sizeof ll);
  const char *only = thread_only ? "; collection was off at start (--collect-atstart=no), so only "
                                   "the calling thread is counted, not the threads the call starts"
                                 : "";
  if (cache)
    snprintf(s->about, sizeof s->about, "%s; simulated caches I1%s, D1%s, LL%s%s", version + (*version == ' '),
             i1, d1, ll, only);
  else
    snprintf(s->about, sizeof s->about, "%s; no cache simulation (--cache-sim=no)%s", version + (*version == ' '),
             only);
  c->cache_events = cache;
  const char *llv = line_after(s->text, "desc: LL cache:");
  s->flush_bytes = 2 * (size_t)(llv ? strtoull(llv, NULL, 10) : 0);
  if (!s->flush_bytes) s->flush_bytes = (size_t)64 << 20;
  return TKB_OK;
}

/* The requests are macros of inline assembly: these stay small and constant, and the
 * floor holds them (and what runs from the call's return to the dump). */
static void cg_start(tkb__counter *c) {
  next_tag(c->state);
#if TKB_HAVE_CALLGRIND_H
  CALLGRIND_ZERO_STATS;
#endif
}

static void cg_stop(tkb__counter *c) { (void)c; }

static tkb_status cg_read(tkb__counter *c, tkb__events *out) { return dump(c->state, out, NULL); }

/* Writes twice the simulated last-level cache: every simulated level starts cold. The
 * host's own cache size (what the cpu backend's flush writes) means nothing here, and
 * writing it at Valgrind's pace would take seconds per call. */
static tkb_status cg_flush(tkb__counter *c) {
  cg_state *s = c->state;
  if (!s->flush_buf && !(s->flush_buf = malloc(s->flush_bytes)))
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "cannot allocate the %zu-byte buffer that empties "
                         "Callgrind's simulated caches (cold_cache)", s->flush_bytes);
  memset(s->flush_buf, ++s->stamp, s->flush_bytes);
  __asm__ __volatile__("" : : "r"(s->flush_buf) : "memory");
  return TKB_OK;
}

static const char *cg_describe(tkb__counter *c) { return ((cg_state *)c->state)->about; }

const tkb__count_source tkb__count_callgrind = {
    .name = "callgrind",
    .available = cg_available,
    .open = cg_open,
    .start = cg_start,
    .stop = cg_stop,
    .read = cg_read,
    .flush = cg_flush,
    .describe = cg_describe,
    .close = cg_close,
};
