/*
 * check.h - the tests' tiny assertion kit. A failed CHECK prints file:line and the
 * expression (and values) and counts a failure; the test's main returns
 * CHECK_DONE(), which prints "N passed, N failed" and yields the exit code.
 */
#ifndef TKB_CHECK_H
#define TKB_CHECK_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed_, check_failed_;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (cond) {                                                            \
      check_passed_++;                                                     \
    } else {                                                               \
      check_failed_++;                                                     \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                      \
  } while (0)

#define CHECK_MSG(cond, ...)                                               \
  do {                                                                     \
    if (cond) {                                                            \
      check_passed_++;                                                     \
    } else {                                                               \
      check_failed_++;                                                     \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
    }                                                                      \
  } while (0)

/* A call that must succeed; on failure prints the library's message. */
#define CHECK_OK(call)                                                     \
  do {                                                                     \
    tkb_status st_ = (call);                                               \
    CHECK_MSG(st_ == TKB_OK, "%s -> %s: %s", #call, tkb_status_name(st_), tkb_last_error()); \
  } while (0)

/* A call that must fail with `status` and a message containing `needle`. */
#define CHECK_ERR(call, status, needle)                                    \
  do {                                                                     \
    tkb_status st_ = (call);                                               \
    CHECK_MSG(st_ == (status), "%s -> %s (want %s): %s", #call, tkb_status_name(st_), \
              tkb_status_name(status), tkb_last_error());                  \
    CHECK_MSG(strstr(tkb_last_error(), (needle)) != NULL,                  \
              "message \"%s\" lacks \"%s\"", tkb_last_error(), (needle));  \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                              \
  do {                                                                     \
    double a_ = (a), b_ = (b), t_ = (tol);                                 \
    CHECK_MSG(fabs(a_ - b_) <= t_, "%s = %.9g, %s = %.9g, tol %.3g", #a, a_, #b, b_, t_); \
  } while (0)

#define CHECK_DONE()                                                       \
  (printf("%d passed, %d failed\n", check_passed_, check_failed_),         \
   check_failed_ ? 1 : 0)

/* CTest runs the kernel tests once more per cpu kernel path (TKB_CPU_ISA=<path>,
 * CMakeLists.txt); a run for a path this CPU does not run (the library then takes
 * another, tkb_cpu_isa) is skipped: exit 77, which CTest reports as skipped. For a test
 * that includes tkbench.h, at the start of main. */
#define CHECK_CPU_ISA_OR_SKIP()                                                        \
  do {                                                                                 \
    const char *want_ = getenv("TKB_CPU_ISA");                                         \
    if (want_ && *want_ && strcmp(want_, "auto") != 0 && strcmp(want_, tkb_cpu_isa())) { \
      printf("SKIPPED: TKB_CPU_ISA=%s, but this CPU or build runs %s\n", want_,         \
             tkb_cpu_isa());                                                           \
      return 77;                                                                       \
    }                                                                                  \
  } while (0)

/* True when the sanitizer run asks for shorter exhaustive sweeps. */
static inline int check_quick(void) {
  const char *q = getenv("TKB_TEST_QUICK");
  return q && *q && strcmp(q, "0") != 0;
}

/* Whether this run takes case i of a long list: TKB_TEST_PART=k/n gives it every n-th case
 * from the k-th (CTest runs the n parts side by side); unset, every case. */
static inline bool check_part_takes(size_t i) {
  const char *p = getenv("TKB_TEST_PART");
  unsigned k, n;
  if (!p || sscanf(p, "%u/%u", &k, &n) != 2 || n == 0) return true;
  return i % n == k;
}

#endif
