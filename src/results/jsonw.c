/* jsonw.c - see jsonw.h. Output follows RFC 8259; numbers use the shortest of %.15g and
 * %.17g that reads back exactly, so values survive a round trip through any parser. */
#include "jsonw.h"

#include <math.h>
#include <stdlib.h>

static void indent(jw *w) {
  if (w->compact) return;
  fputc('\n', w->f);
  for (int i = 0; i < w->depth; i++) fputs("  ", w->f);
}

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or 0 when p starts none. */
int jw_utf8_len(const unsigned char *p) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  int n;
  unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range */
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (p[1] < lo || p[1] > hi) return 0;
  for (int k = 2; k < n; k++)
    if (p[k] < 0x80 || p[k] > 0xBF) return 0;
  return n;
}

static void put_escaped(jw *w, const char *s) {
  FILE *f = w->f;
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    switch (*p) {
      case '"': fputs("\\\"", f); break;
      case '\\': fputs("\\\\", f); break;
      case '\n': fputs("\\n", f); break;
      case '\r': fputs("\\r", f); break;
      case '\t': fputs("\\t", f); break;
      default:
        if (*p < 0x20) {
          fprintf(f, "\\u%04x", *p);
        } else {
          const int n = jw_utf8_len(p);
          if (n == 0) {
            fputs("\xEF\xBF\xBD", f); /* U+FFFD as UTF-8, as it reads back */
            w->replaced++;
            p++;
          } else {
            fwrite(p, 1, (size_t)n, f);
            p += n;
          }
          continue;
        }
    }
    p++;
  }
  fputc('"', f);
}

/* Separator, newline and indentation before an element, then its key. */
static void element(jw *w, const char *key) {
  if (w->depth > 0) {
    if (!w->first[w->depth]) fputc(',', w->f);
    if (w->inline_[w->depth] || w->compact) {
      if (!w->first[w->depth]) fputc(' ', w->f);
    } else {
      indent(w);
    }
    w->first[w->depth] = false;
  }
  if (key) {
    put_escaped(w, key);
    fputs(": ", w->f);
  }
}

static void open_container(jw *w, const char *key, char c, bool on_one_line) {
  element(w, key);
  fputc(c, w->f);
  if (w->depth + 1 < JW_MAX_DEPTH) w->depth++;
  w->first[w->depth] = true;
  w->inline_[w->depth] = on_one_line || (w->depth > 1 && w->inline_[w->depth - 1]);
}

static void close_container(jw *w, char c) {
  bool empty = w->first[w->depth], was_inline = w->inline_[w->depth];
  w->depth--;
  if (!empty && !was_inline) indent(w);
  fputc(c, w->f);
}

void jw_begin_object(jw *w, const char *key) { open_container(w, key, '{', false); }
void jw_end_object(jw *w) { close_container(w, '}'); }
void jw_begin_array(jw *w, const char *key, bool on_one_line) { open_container(w, key, '[', on_one_line); }
void jw_end_array(jw *w) { close_container(w, ']'); }

void jw_string(jw *w, const char *key, const char *value) {
  element(w, key);
  if (value) put_escaped(w, value);
  else fputs("null", w->f);
}

void jw_number(jw *w, const char *key, double v) {
  element(w, key);
  if (!isfinite(v)) {
    fputs("null", w->f);
    return;
  }
  char buf[40];
  snprintf(buf, sizeof buf, "%.15g", v);
  if (strtod(buf, NULL) != v) snprintf(buf, sizeof buf, "%.17g", v);
  fputs(buf, w->f);
}

void jw_int(jw *w, const char *key, long long v) {
  element(w, key);
  fprintf(w->f, "%lld", v);
}

void jw_uint(jw *w, const char *key, uint64_t v) {
  element(w, key);
  fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_bool(jw *w, const char *key, bool v) {
  element(w, key);
  fputs(v ? "true" : "false", w->f);
}

void jw_null(jw *w, const char *key) {
  element(w, key);
  fputs("null", w->f);
}

void jw_finish(jw *w) { fputc('\n', w->f); }

void jw_begin_at(jw *w, FILE *f, int depth) {
  *w = (jw){.f = f, .depth = depth < JW_MAX_DEPTH ? depth : JW_MAX_DEPTH - 1};
  w->first[w->depth] = true;
}

void jw_splice(jw *w, const char *text, size_t len) {
  if (len == 0) return;
  fwrite(text, 1, len, w->f);
  w->first[w->depth] = false;
}
