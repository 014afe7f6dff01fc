/*
 * bench_ab_libs.c - two builds of the library in one process, each registry entry that
 * matches a regex called through both, alternately, and the time of the second build as
 * a fraction of the first's:
 *
 *   bench_ab_libs OLD/libtkbench.so NEW/libtkbench.so REGEX [CALLS]
 *
 * For a kernel change whose effect (a few %) is below what a ratio to a baseline
 * resolves on a machine whose speed moves by 5-15 % within minutes: both builds see the
 * same moments, so the moves cancel. Each build is loaded with RTLD_LOCAL (its own
 * registry, workspaces and thread team), each entry standardized in both (the same seed)
 * and called twice in each before timing; then CALLS rounds (default 300), each one call
 * of each build, the order swapped every round. Prints per entry both medians, NEW/OLD of
 * the medians and of the first and third quartiles. The cpu kernels' path is
 * TKB_CPU_ISA's, as for any program; OpenBLAS is loaded once and shared.
 */
#include <dlfcn.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The library's entry points this program calls, by name (the builds' headers are the
 * same; only their code differs). */
typedef struct build {
  const char *path;
  void *handle;
  int (*register_builtin_ops)(void);
  size_t (*registry_count)(void);
  const char *(*registry_full_name)(size_t);
  int (*registry_standardize)(size_t, const char *, uint64_t, void **, void **);
  int (*std_fn_call)(void *, const void *, void **);
} build;

static void *symbol(const build *b, const char *name) {
  void *s = dlsym(b->handle, name);
  if (!s) {
    fprintf(stderr, "bench_ab_libs: %s has no symbol %s\n", b->path, name);
    exit(2);
  }
  return s;
}

static void load(build *b, const char *path) {
  b->path = path;
  b->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!b->handle) {
    fprintf(stderr, "bench_ab_libs: cannot load %s: %s\n", path, dlerror());
    exit(2);
  }
  *(void **)&b->register_builtin_ops = symbol(b, "tkb_register_builtin_ops");
  *(void **)&b->registry_count = symbol(b, "tkb_registry_count");
  *(void **)&b->registry_full_name = symbol(b, "tkb_registry_full_name");
  *(void **)&b->registry_standardize = symbol(b, "tkb_registry_standardize");
  *(void **)&b->std_fn_call = symbol(b, "tkb_std_fn_call");
  if (b->register_builtin_ops()) {
    fprintf(stderr, "bench_ab_libs: %s: registering the ops failed\n", path);
    exit(2);
  }
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: bench_ab_libs OLD/libtkbench.so NEW/libtkbench.so REGEX [CALLS]\n");
    return 2;
  }
  const int calls = argc == 5 ? atoi(argv[4]) : 300;
  if (calls < 4 || calls > 1000000) {
    fprintf(stderr, "bench_ab_libs: CALLS must be 4..1000000, got %s\n", argv[4]);
    return 2;
  }
  regex_t re;
  if (regcomp(&re, argv[3], REG_EXTENDED | REG_NOSUB)) {
    fprintf(stderr, "bench_ab_libs: REGEX %s is not a POSIX extended regex\n", argv[3]);
    return 2;
  }
  build b[2];
  load(&b[0], argv[1]);
  load(&b[1], argv[2]);
  double *t[2] = {malloc((size_t)calls * sizeof(double)), malloc((size_t)calls * sizeof(double))};
  if (!t[0] || !t[1]) return 2;
  printf("NEW %s / OLD %s, %d alternating calls each, TKB_CPU_ISA=%s\n", argv[2], argv[1], calls,
         getenv("TKB_CPU_ISA") ? getenv("TKB_CPU_ISA") : "(best)");
  int matched = 0;
  for (size_t i = 0; i < b[0].registry_count(); i++) {
    const char *name = b[0].registry_full_name(i);
    if (regexec(&re, name, 0, NULL, 0)) continue;
    if (i >= b[1].registry_count() || strcmp(name, b[1].registry_full_name(i))) {
      fprintf(stderr, "bench_ab_libs: the builds' registries differ at %s\n", name);
      return 2;
    }
    void *f[2], *args[2], *outs;
    for (int k = 0; k < 2; k++)
      if (b[k].registry_standardize(i, NULL, 0, &f[k], &args[k]) ||
          b[k].std_fn_call(f[k], args[k], &outs) || b[k].std_fn_call(f[k], args[k], &outs)) {
        fprintf(stderr, "bench_ab_libs: %s fails in %s\n", name, b[k].path);
        return 2;
      }
    for (int r = 0; r < calls; r++)
      for (int n = 0; n < 2; n++) {
        const int k = r % 2 ? 1 - n : n;
        const double s = now_s();
        b[k].std_fn_call(f[k], args[k], &outs);
        t[k][r] = now_s() - s;
      }
    qsort(t[0], (size_t)calls, sizeof(double), cmp_double);
    qsort(t[1], (size_t)calls, sizeof(double), cmp_double);
    const int q1 = calls / 4, q2 = calls / 2, q3 = 3 * calls / 4;
    printf("%s\n  OLD %.4f ms  NEW %.4f ms  NEW/OLD %.3f (quartiles %.3f, %.3f)\n", name,
           1e3 * t[0][q2], 1e3 * t[1][q2], t[1][q2] / t[0][q2], t[1][q1] / t[0][q1],
           t[1][q3] / t[0][q3]);
    matched++;
  }
  if (!matched) {
    fprintf(stderr, "bench_ab_libs: no entry matches %s\n", argv[3]);
    return 1;
  }
  return 0;
}
