/* jsonw.h - a small streaming JSON writer: indented objects and arrays (or everything on
 * one line, for JSON Lines), escaped strings that are always valid UTF-8, numbers that
 * round-trip, and null for NaN and infinity (JSON has neither). */
#ifndef TKB_JSONW_H
#define TKB_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 16

typedef struct jw {
  FILE *f;
  bool compact;              /* the whole document on one line (set before writing) */
  size_t replaced;           /* bytes of strings that were not UTF-8, written as U+FFFD */
  int depth;
  bool first[JW_MAX_DEPTH];  /* no element written yet at this depth */
  bool inline_[JW_MAX_DEPTH];/* elements on one line ("[1, 2, 3]") */
} jw;

/* `key` names the member inside an object and must be NULL inside an array. */
void jw_begin_object(jw *w, const char *key);
void jw_end_object(jw *w);
void jw_begin_array(jw *w, const char *key, bool on_one_line);
void jw_end_array(jw *w);
/* NULL value: null. Bytes that are not UTF-8 (a non-UTF-8 file name, a plugin's Latin-1
 * message) become U+FFFD, counted in w->replaced, so every reader can parse the text. */
void jw_string(jw *w, const char *key, const char *value);
void jw_number(jw *w, const char *key, double value);      /* NaN, +-Inf: null */
void jw_int(jw *w, const char *key, long long value);
void jw_uint(jw *w, const char *key, uint64_t value);
void jw_bool(jw *w, const char *key, bool value);
void jw_null(jw *w, const char *key);
/* The length of the well-formed UTF-8 sequence at p (RFC 3629), or 0 when p starts none
 * (p must be NUL-terminated: a cut sequence meets the NUL). */
int jw_utf8_len(const unsigned char *p);
/* Ends the document with a newline. */
void jw_finish(jw *w);

/* A document's parts may become known out of order (a report's context says at its top
 * how the run ended): elements of a container can be written ahead by their own writer,
 * started on another stream at the depth the container will have, and spliced in when
 * the document reaches it. */
void jw_begin_at(jw *w, FILE *f, int depth);
/* Puts text (elements written by a jw_begin_at writer of w's depth) into w's current
 * container, which must hold no element yet. */
void jw_splice(jw *w, const char *text, size_t len);

#endif
