/*
 * cli_util.h - helpers for the in-process tests of the command line: call tkb_main()
 * with stdout and stderr captured into files, compare text with golden files, and
 * register small entries (toy_fn.h's axpy plus deliberately failing ones).
 *
 * Golden files live in tests/cli/golden/; TKB_UPDATE_GOLDEN=1 rewrites them.
 */
#ifndef TKB_CLI_UTIL_H
#define TKB_CLI_UTIL_H

#include "check.h"
#include "toy_fn.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static char cli_tmp[256]; /* a fresh directory per test program */

static void cli_init(void) {
  snprintf(cli_tmp, sizeof cli_tmp, "/tmp/tkb_cli_XXXXXX");
  if (!mkdtemp(cli_tmp)) {
    perror("mkdtemp");
    exit(1);
  }
}

/* Removes the temp directory and what is in it (flat). */
static void cli_cleanup(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cli_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cli_tmp);
}

/* A path in the temp directory; the text stays valid for the next 63 calls. */
static char *cli_path(const char *name) {
  static char buf[64][512];
  static int k;
  k = (k + 1) % 64;
  snprintf(buf[k], sizeof buf[k], "%s/%s", cli_tmp, name);
  return buf[k];
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = '\0';
  fclose(f);
  return s;
}

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

typedef struct cli_result {
  int rc;
  char *out, *err;
} cli_result;

static void cli_free(cli_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

/* tkb_main("tkbench", args...) with stdout and stderr captured. NULL ends the args. */
static cli_result cli_v(const char *const *args) {
  char *argv[64];
  int argc = 0;
  argv[argc++] = "tkbench";
  for (; args[argc - 1] && argc < 63; argc++) argv[argc] = (char *)args[argc - 1];
  argv[argc] = NULL;
  fflush(stdout);
  fflush(stderr);
  int save_out = dup(1), save_err = dup(2);
  char out_path[600], err_path[600];
  snprintf(out_path, sizeof out_path, "%s/stdout.txt", cli_tmp);
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", cli_tmp);
  int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fo, 1);
  dup2(fe, 2);
  close(fo);
  close(fe);
  cli_result r;
  r.rc = tkb_main(argc, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(save_out, 1);
  dup2(save_err, 2);
  close(save_out);
  close(save_err);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

#define CLI(...) cli_v((const char *const[]){__VA_ARGS__, NULL})

/* text (malloc'd, freed here) with what lies between each `start` and the next `end` on
 * the same line replaced by `placeholder`: a list a table makes (formats, methods) is
 * masked so that a golden text does not change when the table gains a row. */
static inline char *mask_between(char *text, const char *start, const char *end, const char *placeholder) {
  size_t cap = strlen(text) + 1, len = 0;
  for (const char *p = text; (p = strstr(p, start)) != NULL; p += strlen(start)) cap += strlen(placeholder);
  char *out = malloc(cap);
  for (const char *p = text; *p;) {
    const char *at = strstr(p, start), *stop = at ? strstr(at + strlen(start), end) : NULL;
    const char *nl = at ? strchr(at, '\n') : NULL;
    if (!at || !stop || (nl && nl < stop)) {
      len += (size_t)snprintf(out + len, cap - len, "%s", p);
      break;
    }
    len += (size_t)snprintf(out + len, cap - len, "%.*s%s", (int)(at + strlen(start) - p), p, placeholder);
    p = stop;
  }
  free(text);
  return out;
}

/* Compares text with tests/cli/golden/<name>, showing the first differing line. */
static void golden(const char *name, const char *actual) {
  char dir[512], path[700];
  snprintf(dir, sizeof dir, "%s", __FILE__);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else snprintf(dir, sizeof dir, ".");
  snprintf(path, sizeof path, "%s/cli/golden/%s", dir, name);
  const char *update = getenv("TKB_UPDATE_GOLDEN");
  if (update && *update && strcmp(update, "0") != 0) {
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    if (f) {
      fputs(actual, f);
      fclose(f);
    }
    return;
  }
  char *want = read_file(path);
  CHECK_MSG(want != NULL, "golden file %s is missing (TKB_UPDATE_GOLDEN=1 writes it)", path);
  if (!want) return;
  if (strcmp(want, actual) != 0) {
    int line = 1;
    const char *a = actual, *w = want;
    while (*a && *a == *w) {
      if (*a == '\n') line++;
      a++;
      w++;
    }
    const char *ae = strchr(a, '\n'), *we = strchr(w, '\n');
    CHECK_MSG(false, "%s differs at line %d:\n  want: %.*s\n  got:  %.*s", name, line,
              (int)(we ? we - w : (long)strlen(w)), w, (int)(ae ? ae - a : (long)strlen(a)), a);
  } else {
    CHECK(true);
  }
  free(want);
}

/* ---- entries ---- */

/* Writes NaN into the output: the benchmark's output check must fail the entry. */
static tkb_status nan_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  tkb_status st = toy_forward(a, state, out);
  ((float *)out[0]->data)[3] = NAN;
  return st;
}

/* Fails outright with a status and a message. */
static tkb_status failing_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a;
  (void)state;
  (void)out;
  return tkb_set_error(TKB_ERR_UNSUPPORTED, "failing_kernel: this kernel always fails (on purpose)");
}

/* Sends the process one SIGINT, the first time it runs (as a user's Ctrl-C would). */
static volatile int sigint_sent;
static tkb_status sigint_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  if (!sigint_sent) {
    sigint_sent = 1;
    kill(getpid(), SIGINT);
  }
  return toy_forward(a, state, out);
}

static const tkb_fn nan_fn = {.name = "nan_kernel", .params = toy_params, .n_params = 5,
                              .infer = toy_infer, .forward = nan_forward};
static const tkb_fn failing_fn = {.name = "failing_kernel", .params = toy_params, .n_params = 5,
                                  .infer = toy_infer, .forward = failing_forward};
static const tkb_fn sigint_fn = {.name = "sigint_kernel", .params = toy_params, .n_params = 5,
                                 .infer = toy_infer, .forward = sigint_forward};

static tkb_status toy_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out) {
  int64_t n;
  tkb_status st = tkb_spec_numel(tkb_args_spec(a, "x"), &n);
  double k = mode == TKB_MODE_FORWARD_AND_VJP ? 2 : 1;
  *out = (tkb_counts){.items = (double)n, .bytes = k * 8.0 * (double)n, .flops = k * 2.0 * (double)n};
  return st;
}

static tkb_value args_1k[1], args_4k[2];
static tkb_kwarg kwargs_alpha[1];

static void reg(const char *name, const char *impl, const tkb_fn *fn, const tkb_value *args,
                size_t n_args, tkb_mode mode, bool counts, const char *tags, const char *kind) {
  tkb_benchmark_def d = {.op = fn->name, .name = name, .impl_name = impl, .fn = fn, .args = args,
                         .n_args = n_args, .mode = mode, .counts = counts ? toy_counts : NULL,
                         .tags = tags, .device_kind = kind};
  if (fn == &toy_fn && n_args == 1) {
    d.kwargs = kwargs_alpha;
    d.n_kwargs = 1;
  }
  CHECK_OK(tkb_register_benchmark(&d));
}

/*
 * The registry the CLI tests see (8 entries):
 *   toy_1k_forward_c, toy_1k_forward_and_vjp_c   tags cpu,toy       counts
 *   toy_64x64_forward_ref                         tags cpu,toy,big   no counts
 *   toy_gpu_forward_cuda                          tags cpu,toy       device kind cuda
 *   nan_1k_forward_c                              tags bad           NaN output
 *   failing_1k_forward_c                          tags bad           error status
 *   sigint_1k_forward_c                           tags sigint        raises SIGINT once
 *   late_1k_forward_c                             tags sigint        (runs after sigint_1k)
 */
static void register_test_entries(void) {
  args_1k[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1024));
  args_4k[0] = args_4k[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64, 64));
  kwargs_alpha[0] = (tkb_kwarg){"alpha", TKB_FLOAT(0.5)};
  reg("toy_1k", "c", &toy_fn, args_1k, 1, TKB_MODE_FORWARD, true, "cpu,toy", "cpu");
  reg("toy_1k", "c", &toy_fn, args_1k, 1, TKB_MODE_FORWARD_AND_VJP, true, "cpu,toy", "cpu");
  reg("toy_64x64", "ref", &toy_fn, args_4k, 2, TKB_MODE_FORWARD, false, "cpu,toy,big", "cpu");
  reg("toy_gpu", "cuda", &toy_fn, args_1k, 1, TKB_MODE_FORWARD, true, "cpu,toy", "cuda");
  reg("nan_1k", "c", &nan_fn, args_1k, 1, TKB_MODE_FORWARD, false, "bad", "cpu");
  reg("failing_1k", "c", &failing_fn, args_1k, 1, TKB_MODE_FORWARD, false, "bad", "cpu");
  reg("sigint_1k", "c", &sigint_fn, args_1k, 1, TKB_MODE_FORWARD, false, "sigint", "cpu");
  reg("late_1k", "c", &toy_fn, args_1k, 1, TKB_MODE_FORWARD, false, "sigint", "cpu");
}

/* Lines in s (the count of '\n'). */
static int count_lines(const char *s) {
  int n = 0;
  for (; s && *s; s++) n += *s == '\n';
  return n;
}

/* Number of non-overlapping occurrences of needle in s. */
static int count_of(const char *s, const char *needle) {
  int n = 0;
  size_t len = strlen(needle);
  for (const char *p = s; p && (p = strstr(p, needle)) != NULL; p += len) n++;
  return n;
}

/* Files in the temp directory whose name starts with prefix (to catch stray temporaries). */
static int files_starting(const char *prefix) {
  DIR *d = opendir(cli_tmp);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !strncmp(e->d_name, prefix, strlen(prefix));
  closedir(d);
  return n;
}

#endif
