/* error.c - status names and the thread-local last-error message (SQLite's errmsg habit). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error[1024];

const char *tkb_status_name(tkb_status status) {
  switch (status) {
    case TKB_OK: return "OK";
    case TKB_ERR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case TKB_ERR_MISSING_ARGUMENT: return "MISSING_ARGUMENT";
    case TKB_ERR_UNKNOWN_KEYWORD: return "UNKNOWN_KEYWORD";
    case TKB_ERR_DUPLICATE_ARGUMENT: return "DUPLICATE_ARGUMENT";
    case TKB_ERR_WRONG_KIND: return "WRONG_KIND";
    case TKB_ERR_TOO_MANY_POSITIONAL: return "TOO_MANY_POSITIONAL";
    case TKB_ERR_BAD_SHAPE: return "BAD_SHAPE";
    case TKB_ERR_OVERFLOW: return "OVERFLOW";
    case TKB_ERR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case TKB_ERR_UNSUPPORTED: return "UNSUPPORTED";
    case TKB_ERR_DEVICE: return "DEVICE";
    case TKB_ERR_NOT_FOUND: return "NOT_FOUND";
    case TKB_ERR_IO: return "IO";
    case TKB_ERR_NUMERICS: return "NUMERICS";
    case TKB_ERR_INTERRUPTED: return "INTERRUPTED";
    case TKB_ERR_INTERNAL: return "INTERNAL";
    case TKB_ERR_CRASHED: return "CRASHED";
    case TKB_ERR_TIMEOUT: return "TIMEOUT";
  }
  return "UNKNOWN_STATUS";
}

const char *tkb_last_error(void) { return last_error; }

void tkb__clear_error(void) { last_error[0] = '\0'; }

tkb_status tkb__set_error_v(tkb_status status, const char *fmt, va_list ap) {
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  return status;
}

tkb_status tkb_set_error(tkb_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tkb__set_error_v(status, fmt, ap);
  va_end(ap);
  return status;
}

char *tkb__strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

const char *tkb_version(void) { return TKB_VERSION_STRING; }

const char *tkb_build_type(void) {
#ifdef TKB_BUILD_TYPE
  return TKB_BUILD_TYPE;
#else
  return "unknown";
#endif
}
