/*
 * check_item_wire.c - one checked entry (tkb__check_item) as the bytes a check worker
 * sends its parent over the worker's pipe, and back. Both ends are the same program
 * (a fork), so the plain fields travel as they are in memory; the strings the item owns
 * (its message, the result's names) follow as counted bytes, and the reader makes them
 * its own. A message that does not hold what the writer writes is refused whole.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* A growing buffer; `failed` once an allocation did not succeed. */
typedef struct wbuf {
  char *p;
  size_t len, cap;
  bool failed;
} wbuf;

static void put(wbuf *b, const void *src, size_t n) {
  if (b->failed) return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->failed = true;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, src, n);
  b->len += n;
}

/* A string as its length (SIZE_MAX for NULL) and bytes. */
static void put_text(wbuf *b, const char *s) {
  const size_t n = s ? strlen(s) : SIZE_MAX;
  put(b, &n, sizeof n);
  if (s) put(b, s, n);
}

tkb_status tkb__check_item_pack(const tkb__check_item *it, char **text, size_t *len) {
  wbuf b = {0};
  const bool has_result = it->result != NULL;
  put(&b, &it->status, sizeof it->status);
  put(&b, &it->skipped, sizeof it->skipped);
  put_text(&b, it->message);
  put(&b, &has_result, sizeof has_result);
  if (has_result) {
    const tkb_check_result *r = it->result;
    put(&b, r, sizeof *r);
    put_text(&b, r->name);
    put_text(&b, r->reference_name);
    for (int o = 0; o < r->n_outputs; o++) {
      put(&b, &r->outputs[o], sizeof r->outputs[o]);
      put_text(&b, r->outputs[o].name);
    }
  }
  if (b.failed) {
    free(b.p);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory sending a check's result");
  }
  *text = b.p;
  *len = b.len;
  return TKB_OK;
}

/* The reader's position; `bad` once the bytes ran out or held nonsense. */
typedef struct rbuf {
  const char *p;
  size_t len, at;
  bool bad;
} rbuf;

static void get(rbuf *b, void *dst, size_t n) {
  if (b->bad || b->len - b->at < n) {
    b->bad = true;
    memset(dst, 0, n);
    return;
  }
  memcpy(dst, b->p + b->at, n);
  b->at += n;
}

/* A copy of the next string (NULL for NULL or on error; `bad` says which). */
static char *get_text(rbuf *b) {
  size_t n;
  get(b, &n, sizeof n);
  if (b->bad || n == SIZE_MAX) return NULL;
  if (b->len - b->at < n) {
    b->bad = true;
    return NULL;
  }
  char *s = malloc(n + 1);
  if (!s) {
    b->bad = true;
    return NULL;
  }
  memcpy(s, b->p + b->at, n);
  s[n] = '\0';
  b->at += n;
  return s;
}

tkb_status tkb__check_item_unpack(const char *text, size_t len, size_t entry, tkb__check_item *it) {
  rbuf b = {.p = text, .len = len};
  *it = (tkb__check_item){.entry = entry};
  bool has_result = false;
  get(&b, &it->status, sizeof it->status);
  get(&b, &it->skipped, sizeof it->skipped);
  it->message = get_text(&b);
  get(&b, &has_result, sizeof has_result);
  if (has_result && !b.bad) {
    tkb_check_result *r = calloc(1, sizeof *r);
    if (!r) {
      b.bad = true;
    } else {
      get(&b, r, sizeof *r);
      /* the pointers came from the other process: none is used before it is replaced */
      r->name = r->reference_name = NULL;
      const int n = r->n_outputs;
      r->outputs = NULL;
      r->n_outputs = 0;
      it->result = r;
      r->name = get_text(&b);
      r->reference_name = get_text(&b);
      if (n < 0 || n > 4096) b.bad = true;
      if (!b.bad && !(r->outputs = calloc((size_t)(n ? n : 1), sizeof *r->outputs))) b.bad = true;
      for (int o = 0; o < n && !b.bad; o++) {
        get(&b, &r->outputs[o], sizeof r->outputs[o]);
        r->outputs[o].name = NULL;
        r->n_outputs = o + 1;
        r->outputs[o].name = get_text(&b);
      }
    }
  }
  if (!b.bad && b.at == len) return TKB_OK;
  tkb__check_item_clear(it);
  *it = (tkb__check_item){.entry = entry};
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "a check worker's result for \"%s\" is not what a worker sends (%zu bytes)",
                       tkb_registry_full_name(entry), len);
}
