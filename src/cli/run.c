/*
 * run.c - `tkbench run`: read the flags (tkbench's and Google Benchmark's spellings),
 * check everything that can be checked before any entry runs (so a usage error costs
 * nothing and writes nothing), run the selected entries, stream the console table,
 * and write the report file under a temporary name, renamed when complete.
 */
#include "cli.h"
#include "intervals.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CMD "run"

typedef struct run_args {
  const char *filter;
  tkb__strlist tags, modes, impls, loads;
  const char *device, *method;
  int iterations, experiments;
  double interval_ms;
  uint64_t seed;
  const char *format, *out;
  const char *gb_format, *gb_out_format; /* --benchmark_format, --benchmark_out_format */
  bool quiet, list_tests;
  const char *warmup; /* "each" or "once" */
  const char *event_filter, *trace_dir; /* tkb_bench_opts' event_filter_regex, trace_dir */
  bool cold_cache;
  bool no_blocking_kernel;
} run_args;

/* The Google Benchmark flags tkbench honours, for the message about the others. */
static const char gb_supported[] =
    "--benchmark_filter=, --benchmark_out=, --benchmark_out_format=, --benchmark_format=, "
    "--benchmark_repetitions=, --benchmark_list_tests";

enum { PARSED = -1, HELPED = -2 };

static int add_item(tkb__strlist *l, const char *flag, const char *v, bool split) {
  if (tkb__strlist_add(l, v, split) == 0) return 0;
  return tkb__usage(CMD, "%s given too many times (at most 64)", flag);
}

/* Compiles the regex as the profiler will (the library's own filter), so that a typo is
 * a usage error here rather than a failure of every entry. */
static int check_event_filter(const char *regex) {
  tkb__event_filter f;
  if (tkb__event_filter_init(&f, regex) != TKB_OK)
    return tkb__usage(CMD, "--event-filter: %s", tkb_last_error());
  tkb__event_filter_free(&f);
  return 0;
}

/* The profiler writes its trace into dir: it must be a writable folder that exists. */
static int check_trace_dir(const char *dir) {
  struct stat st;
  if (!*dir) return tkb__usage(CMD, "--trace-dir is empty; expected a folder");
  if (stat(dir, &st) != 0)
    return tkb__usage(CMD, "--trace-dir \"%s\" does not exist (%s); expected a writable folder",
                      dir, strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return tkb__usage(CMD, "--trace-dir \"%s\" is not a folder; expected a writable folder", dir);
  if (access(dir, W_OK | X_OK) != 0)
    return tkb__usage(CMD, "--trace-dir \"%s\" is not writable (%s)", dir, strerror(errno));
  return 0;
}

/* Returns PARSED, HELPED, or an exit code. */
static int parse(int argc, char **argv, run_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *v = NULL;
    int m;
    bool on;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      tkb__help_command(stdout, CMD);
      return HELPED;
    }
#define VALUE(name) ((m = tkb__flag(CMD, argc, argv, &i, name, &v)) != 0)
#define CHECKED(expr) \
  if (m < 0) return TKB_EXIT_USAGE; \
  if ((expr) != 0) return TKB_EXIT_USAGE; \
  continue
    if (VALUE("--filter") || VALUE("--benchmark_filter")) { CHECKED((a->filter = v, 0)); }
    if (VALUE("--tag")) { CHECKED(add_item(&a->tags, "--tag", v, true)); }
    if (VALUE("--mode")) { CHECKED(add_item(&a->modes, "--mode", v, true)); }
    if (VALUE("--impl")) { CHECKED(add_item(&a->impls, "--impl", v, true)); }
    if (VALUE("--load")) { CHECKED(add_item(&a->loads, "--load", v, false)); }
    if (VALUE("--device")) { CHECKED((a->device = v, 0)); }
    if (VALUE("--method")) { CHECKED((a->method = v, 0)); }
    if (VALUE("--iterations")) { CHECKED(tkb__parse_count(CMD, "--iterations", v, &a->iterations)); }
    if (VALUE("--experiments")) { CHECKED(tkb__parse_count(CMD, "--experiments", v, &a->experiments)); }
    if (VALUE("--benchmark_repetitions")) {
      CHECKED(tkb__parse_count(CMD, "--benchmark_repetitions", v, &a->experiments));
    }
    if (VALUE("--interval-ms")) { CHECKED(tkb__parse_ms(CMD, "--interval-ms", v, &a->interval_ms)); }
    if (VALUE("--seed")) { CHECKED(tkb__parse_u64(CMD, "--seed", v, &a->seed)); }
    if (VALUE("--warmup")) { CHECKED((a->warmup = v, 0)); }
    if (VALUE("--event-filter")) { CHECKED(check_event_filter(a->event_filter = v)); }
    if (VALUE("--trace-dir")) { CHECKED(check_trace_dir(a->trace_dir = v)); }
    if (VALUE("--format")) { CHECKED((a->format = v, 0)); }
    if (VALUE("--out") || VALUE("--benchmark_out")) { CHECKED((a->out = v, 0)); }
    if (VALUE("--benchmark_format")) { CHECKED((a->gb_format = v, 0)); }
    if (VALUE("--benchmark_out_format")) { CHECKED((a->gb_out_format = v, 0)); }
#undef VALUE
#undef CHECKED
    if ((m = tkb__switch(CMD, argv, i, "--quiet", &on)) != 0) {
      if (m < 0) return TKB_EXIT_USAGE;
      a->quiet = on;
      continue;
    }
    if ((m = tkb__switch(CMD, argv, i, "--cold-cache", &on)) != 0) {
      if (m < 0) return TKB_EXIT_USAGE;
      a->cold_cache = on;
      continue;
    }
    if ((m = tkb__switch(CMD, argv, i, "--no-blocking-kernel", &on)) != 0) {
      if (m < 0) return TKB_EXIT_USAGE;
      a->no_blocking_kernel = on;
      continue;
    }
    if ((m = tkb__switch(CMD, argv, i, "--benchmark_list_tests", &on)) != 0) {
      if (m < 0) return TKB_EXIT_USAGE;
      a->list_tests = on;
      continue;
    }
    if (strncmp(arg, "--benchmark_", 12) == 0)
      return tkb__usage(CMD, "Google Benchmark flag '%s' is not supported; tkbench takes %s",
                        arg, gb_supported);
    if (arg[0] == '-') return tkb__usage(CMD, "unknown flag '%s'", arg);
    return tkb__usage(CMD, "unexpected argument '%s' (entries are chosen with --filter REGEX)", arg);
  }
  return PARSED;
}

/* The method through the library's own rule (auto, aliases such as xprof, what the
 * device has), with the library's message; *resolved gets the canonical name. Then the
 * flags that only some methods and devices honour, which would otherwise fail every
 * entry once the run is under way. */
static int check_method(tkb_device *dev, const run_args *a, const char **resolved) {
  if (tkb_method_resolve(dev, a->method, resolved) != TKB_OK)
    return tkb__usage(CMD, "--method: %s", tkb_last_error());
  const bool profiler = !strcmp(*resolved, "profiler") || !strcmp(*resolved, "hermetic_profiler");
  if (a->event_filter && *a->event_filter && !profiler)
    return tkb__usage(CMD, "--event-filter applies to the profiler methods (profiler, "
                      "hermetic_profiler; aliases xprof, hermetic_xprof), and --method %s on "
                      "device %s has no device events to filter", *resolved, tkb_device_name(dev));
  if (a->trace_dir && strcmp(*resolved, "profiler") != 0)
    return tkb__usage(CMD, "--trace-dir: only --method profiler (alias xprof) writes a trace, "
                      "and this run uses --method %s on device %s", *resolved,
                      tkb_device_name(dev));
  if (a->cold_cache && !dev->backend->flush_cache)
    return tkb__usage(CMD, "--cold-cache: device %s cannot flush its caches",
                      tkb_device_name(dev));
  if (a->no_blocking_kernel && strcmp(*resolved, "cuda_events") != 0)
    return tkb__usage(CMD, "--no-blocking-kernel applies to --method cuda_events, the only "
                      "method that holds the stream with a blocking kernel, and this run uses "
                      "--method %s on device %s", *resolved, tkb_device_name(dev));
  return 0;
}

/* "--filter 'x' --tag cpu --mode forward" for the nothing-matches message. */
static void describe(const run_args *a, const tkb__selection *sel, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  if (a->filter) len += (size_t)snprintf(buf + len, cap - len, " --filter '%s'", a->filter);
  for (size_t k = 0; k < sel->n_tags && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, " --tag %s", sel->tags[k]);
  for (size_t k = 0; k < a->modes.n && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, " --mode %s", a->modes.items[k]);
  for (size_t k = 0; k < a->impls.n && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, " --impl %s", a->impls.items[k]);
}

/* Selection with the default tag rule: TKB__DEFAULT_TAG when neither a filter nor a tag
 * is given, and every entry when no entry carries that tag (a user's own program whose
 * entries have no tags). */
static int select_entries(const run_args *a, const char *kind, size_t **idx, size_t *n) {
  unsigned modes = 0;
  for (size_t k = 0; k < a->modes.n; k++) {
    tkb_mode m;
    if (tkb_mode_parse(a->modes.items[k], &m) != TKB_OK)
      return tkb__usage(CMD, "--mode: %s", tkb_last_error());
    modes |= 1u << m;
  }
  const char *default_tag[1] = {TKB__DEFAULT_TAG};
  bool use_default = !a->filter && a->tags.n == 0;
  tkb__selection sel = {.filter = a->filter,
                        .tags = use_default ? default_tag : a->tags.items,
                        .n_tags = use_default ? 1 : a->tags.n,
                        .impls = a->impls.items,
                        .n_impls = a->impls.n,
                        .modes = modes,
                        .device_kind = kind};
  if (tkb__select(&sel, idx, n) != TKB_OK) return tkb__usage(CMD, "--filter: %s", tkb_last_error());
  if (*n == 0 && use_default) {
    sel.n_tags = 0;
    if (tkb__select(&sel, idx, n) != TKB_OK) return tkb__usage(CMD, "%s", tkb_last_error());
  }
  if (*n == 0) {
    char what[1024];
    describe(a, &sel, what, sizeof what);
    return tkb__usage(CMD, "no entry matches%s on device %s (%zu entries registered; '%s list' "
                      "shows them)", *what ? what : " (no criteria)", a->device,
                      tkb_registry_count(), tkb__prog);
  }
  return 0;
}

/* State the runner's callbacks share: the progress line and the streaming table. */
typedef struct live {
  tkb__progress progress;
  const tkb__report_ctx *ctx;
  bool table;
} live;

static void on_start(void *user, size_t k, size_t n, const char *name) {
  (void)n;
  live *l = user;
  tkb__progress_show(&l->progress, k, name);
}

static void on_done(void *user, size_t k, size_t n, const tkb__result *r) {
  (void)k;
  (void)n;
  live *l = user;
  tkb__progress_clear(&l->progress);
  if (l->table) {
    tkb__console_row(stdout, l->ctx, r);
    fflush(stdout);
  }
}

static tkb_status write_doc(FILE *f, tkb__format fmt, const tkb__report_ctx *ctx,
                            const tkb__result *res, size_t n, size_t n_selected, double wall_s) {
  switch (fmt) {
    case TKB__FORMAT_JSON: return tkb__write_json(f, ctx, res, n);
    case TKB__FORMAT_CSV: return tkb__write_csv(f, ctx, res, n);
    case TKB__FORMAT_MARKDOWN: return tkb__write_markdown(f, ctx, res, n);
    case TKB__FORMAT_CONSOLE: return tkb__write_console(f, ctx, res, n, n_selected, wall_s);
  }
  return TKB_ERR_INTERNAL;
}

static tkb_status write_file(const char *path, tkb__format fmt, const tkb__report_ctx *ctx,
                             const tkb__result *res, size_t n, size_t n_selected, double wall_s) {
  tkb__outfile o;
  tkb_status st = tkb__outfile_open(&o, path);
  if (st) return st;
  st = write_doc(o.f, fmt, ctx, res, n, n_selected, wall_s);
  if (st) {
    tkb__outfile_abort(&o);
    return st;
  }
  return tkb__outfile_commit(&o);
}

/* Everything after parsing; a is freed by the caller. */
static int run(run_args *a) {
  if (tkb__load_plugins(CMD, &a->loads)) return TKB_EXIT_USAGE;

  if (strcmp(a->warmup, "each") != 0 && strcmp(a->warmup, "once") != 0)
    return tkb__usage(CMD, "--warmup '%s' is not a warm-up policy; expected each or once", a->warmup);
  tkb__format stdout_fmt = TKB__FORMAT_CONSOLE, file_fmt = TKB__FORMAT_JSON, fmt;
  if (a->format && tkb__format_parse(a->format, &fmt) != TKB_OK)
    return tkb__usage(CMD, "--format: %s", tkb_last_error());
  if (a->gb_format && tkb__format_parse(a->gb_format, &stdout_fmt) != TKB_OK)
    return tkb__usage(CMD, "--benchmark_format: %s", tkb_last_error());
  if (a->gb_out_format && tkb__format_parse(a->gb_out_format, &file_fmt) != TKB_OK)
    return tkb__usage(CMD, "--benchmark_out_format: %s", tkb_last_error());
  if (a->format && !a->out && !a->gb_format) stdout_fmt = fmt;
  if (a->out && !a->gb_out_format) file_fmt = a->format ? fmt : tkb__format_from_path(a->out);

  tkb_device *dev;
  if (tkb_device_get(a->device, &dev) != TKB_OK) return tkb__usage(CMD, "--device: %s", tkb_last_error());
  const char *method = NULL;
  if (check_method(dev, a, &method)) return TKB_EXIT_USAGE;
  char kind[32];
  tkb__device_kind(a->device, kind, sizeof kind);

  size_t *idx = NULL, n = 0;
  if (select_entries(a, kind, &idx, &n)) return TKB_EXIT_USAGE;
  if (a->list_tests) {
    for (size_t k = 0; k < n; k++) printf("%s\n", tkb_registry_full_name(idx[k]));
    free(idx);
    return TKB_EXIT_OK;
  }
  if (a->out && tkb__outfile_check(a->out) != TKB_OK) {
    free(idx);
    return tkb__usage(CMD, "--out: %s", tkb_last_error());
  }

  tkb__report_ctx ctx = {.executable = tkb__exe,
                         .device = tkb_device_name(dev),
                         .device_description = tkb_device_description(dev),
                         .method = method,
                         .seed = a->seed,
                         .iterations = a->iterations,
                         .experiments = a->experiments,
                         .interval_ms = a->interval_ms,
                         .warmup_once = strcmp(a->warmup, "once") == 0};
  tkb__iso_date(ctx.date, sizeof ctx.date);
  for (size_t k = 0; k < n; k++) {
    int len = (int)strlen(tkb_registry_full_name(idx[k]));
    if (len > ctx.name_width) ctx.name_width = len;
  }
  bool table = stdout_fmt == TKB__FORMAT_CONSOLE && !a->quiet;
  ctx.color = table && tkb__use_color(stdout);
  live l = {.ctx = &ctx, .table = table};
  tkb__progress_begin(&l.progress, stderr, !a->quiet && isatty(fileno(stderr)), n);
  if (table) {
    tkb__console_header(stdout, &ctx);
    tkb__console_titles(stdout, &ctx);
    fflush(stdout);
  }

  tkb__result *res = calloc(n, sizeof *res);
  if (!res) {
    free(idx);
    fprintf(stderr, "%s %s: out of memory for %zu results\n", tkb__prog, CMD, n);
    return TKB_EXIT_FAILED;
  }
  tkb__runner runner = {.device = a->device,
                        .seed = a->seed,
                        .bench = {.iterations = a->iterations,
                                  .experiments = a->experiments,
                                  .interval_ms = a->interval_ms,
                                  .method = method,
                                  .event_filter_regex = a->event_filter,
                                  .warmup_once = strcmp(a->warmup, "once") == 0,
                                  .cold_cache = a->cold_cache,
                                  .trace_dir = a->trace_dir,
                                  .no_blocking_kernel = a->no_blocking_kernel},
                        .stop_on_sigint = true,
                        .on_start = on_start,
                        .on_done = on_done,
                        .user = &l};
  size_t done = 0;
  bool interrupted = false;
  tkb__run_entries(&runner, idx, n, res, &done, &interrupted);
  tkb__progress_clear(&l.progress);
  double wall_s = tkb__progress_elapsed(&l.progress);
  ctx.interrupted = interrupted;

  size_t failed = 0;
  for (size_t k = 0; k < done; k++) failed += res[k].bd == NULL;
  int rc = interrupted ? TKB_EXIT_INTERRUPTED : failed ? TKB_EXIT_FAILED : TKB_EXIT_OK;
  if (table) {
    tkb__console_summary(stdout, &ctx, res, done, n, wall_s);
  } else {
    if (stdout_fmt != TKB__FORMAT_CONSOLE) write_doc(stdout, stdout_fmt, &ctx, res, done, n, wall_s);
    /* No table on stdout: failures and interruption still need saying. */
    for (size_t k = 0; k < done; k++)
      if (!res[k].bd)
        fprintf(stderr, "%s %s: %s failed (%s): %s\n", tkb__prog, CMD, res[k].name,
                tkb_status_name(res[k].status), res[k].error ? res[k].error : "");
    if (interrupted)
      fprintf(stderr, "%s %s: interrupted: %zu of %zu entries ran\n", tkb__prog, CMD, done, n);
  }
  fflush(stdout);
  if (a->out) {
    if (write_file(a->out, file_fmt, &ctx, res, done, n, wall_s) != TKB_OK) {
      fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
      if (rc == TKB_EXIT_OK) rc = TKB_EXIT_FAILED;
    } else if (table) {
      printf("wrote %s (%s)\n", a->out, tkb__format_name(file_fmt));
    }
  }
  for (size_t k = 0; k < done; k++) tkb__result_clear(&res[k]);
  free(res);
  free(idx);
  return rc;
}

int tkb__cli_run(int argc, char **argv) {
  run_args a = {.device = "cpu",
                .method = "auto",
                .warmup = "each",
                .iterations = TKB__DEFAULT_ITERATIONS,
                .experiments = TKB__DEFAULT_EXPERIMENTS};
  int rc = parse(argc, argv, &a);
  if (rc == HELPED) rc = TKB_EXIT_OK;
  else if (rc == PARSED) rc = run(&a);
  tkb__strlist_free(&a.tags);
  tkb__strlist_free(&a.modes);
  tkb__strlist_free(&a.impls);
  tkb__strlist_free(&a.loads);
  return rc;
}
