/*
 * fuzz.h - what the libFuzzer harnesses of tests/fuzz share: the input as text, and
 * assertions that abort (a finding) with the input's meaning. Each harness is one file
 * defining LLVMFuzzerTestOneInput; CMakeLists.txt builds them with TKB_FUZZ=ON (clang),
 * `make fuzz` runs them long, `make test` briefly (see docs/DEVELOPING.md).
 */
#ifndef TKB_FUZZ_H
#define TKB_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bytes as a NUL-terminated string (an inner NUL ends it early). Free it. */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) abort();
  memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

#define FUZZ_ASSERT(cond, ...)                                   \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                              \
      fputc('\n', stderr);                                       \
      abort();                                                   \
    }                                                            \
  } while (0)

/* True when s[0..n) is well-formed UTF-8 (RFC 3629). */
static inline int fuzz_utf8(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!k || i + k > n || (k == 2 && c < 0xC2)) return 0;
    unsigned cp = k == 1 ? c : c & (0x7F >> k);
    for (size_t j = 1; j < k; j++) {
      if ((s[i + j] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + j] & 0x3F);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
    i += k;
  }
  return 1;
}

#endif
