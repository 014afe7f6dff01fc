/*
 * test_cli.c - the command line's subcommands and flags, in process through tkb_main():
 * help and version, list (plain, --verbose, --filter, --tag), info, every bad input
 * (exit 2, a message naming the value, no output file), colour and the progress line on
 * a terminal (a pseudo-terminal here) and never with NO_COLOR, TKB_REGISTER, and the
 * default selection. Texts are compared with golden files in tests/cli/golden/.
 */
#define _XOPEN_SOURCE 700 /* posix_openpt */
#include "cli_util.h"
#include "../src/cli/cli.h"

#include <errno.h>
#include <poll.h>

/* The overview with its command rows as one placeholder (each row is checked against
 * the command table instead), so a new command changes no golden text. */
static char *overview_masked(char *text) {
  char *from = strstr(text, "Commands:\n"), *to = from ? strstr(from, "\n\nFlags:") : NULL;
  if (!to) return text;
  from += strlen("Commands:\n");
  memmove(from + strlen("  {commands}"), to, strlen(to) + 1);
  memcpy(from, "  {commands}", strlen("  {commands}"));
  return text;
}

/* Every row of a table named in a help text: what the golden texts leave as placeholders. */
static void help_names_every_row(void) {
  cli_result run = CLI("help", "run"), compare = CLI("help", "compare");
  size_t n;
  const tkb__format *formats = tkb__formats(&n);
  for (size_t k = 0; k < n; k++) {
    CHECK_MSG(strstr(run.out, formats[k].name) != NULL, "help run lacks the format %s", formats[k].name);
    char ends[128];
    snprintf(ends, sizeof ends, "%s", formats[k].extensions);
    for (char *e = strtok(ends, " "); e; e = strtok(NULL, " "))
      CHECK_MSG(strstr(run.out, e) != NULL, "help run lacks the ending %s", e);
  }
  char names[1024];
  tkb__method_names(names, sizeof names);
  for (char *m = strtok(names, ", ()"); m; m = strtok(NULL, ", ()"))
    if (strcmp(m, "alias")) CHECK_MSG(strstr(run.out, m) != NULL, "help run lacks the method %s", m);
  for (size_t k = 0; tkb__stop_rules[k]; k++)
    CHECK_MSG(strstr(run.out, tkb__stop_rules[k]->name) != NULL, "help run lacks the rule %s", tkb__stop_rules[k]->name);
  tkb__compare_format_names(names, sizeof names);
  for (char *f = strtok(names, ", "); f; f = strtok(NULL, ", "))
    if (strcmp(f, "or")) CHECK_MSG(strstr(compare.out, f) != NULL, "help compare lacks the format %s", f);
  cli_free(&run);
  cli_free(&compare);
}

static void test_help_and_version(void) {
  /* the golden texts hold the tables' lists as placeholders ({formats}, {methods}, ...):
   * a row added to a table changes none of them */
  tkb__help_keep_table_placeholders = true;
  cli_result r = CLI("--help");
  CHECK(r.rc == 0);
  r.out = overview_masked(r.out);
  golden("help_overview.txt", r.out);
  cli_free(&r);
  const char *cmds[] = {"run", "list", "info", "check", "compare", "ab", "report"};
  for (int k = 0; k < (int)TKB_ARRAY_LEN(cmds); k++) {
    char name[64];
    snprintf(name, sizeof name, "help_%s.txt", cmds[k]);
    r = CLI("help", cmds[k]);
    CHECK(r.rc == 0);
    golden(name, r.out);
    cli_result same = CLI(cmds[k], "--help"); /* "tkbench run --help" == "tkbench help run" */
    CHECK(same.rc == 0 && strcmp(same.out, r.out) == 0);
    cli_free(&same);
    cli_free(&r);
  }
  tkb__help_keep_table_placeholders = false;
  help_names_every_row();
  r = CLI("help");
  CHECK(r.rc == 0 && strstr(r.out, "Commands:"));
  cli_free(&r);
  r = CLI("-h");
  CHECK(r.rc == 0 && strstr(r.out, "Commands:"));
  cli_free(&r);
  /* the overview lists every command of the table, each with a help of its own */
  size_t n_cmds;
  const tkb__command *const *table = tkb__commands(&n_cmds);
  r = CLI("--help");
  for (size_t k = 0; k < n_cmds; k++) {
    char line[64];
    snprintf(line, sizeof line, "\n  %s ", table[k]->name);
    const char *row = strstr(r.out, line);
    CHECK_MSG(row != NULL, "overview lacks %s", table[k]->name);
    /* the summaries line up after the longest name */
    size_t longest = 0;
    for (size_t j = 0; j < n_cmds; j++)
      if (strlen(table[j]->name) > longest) longest = strlen(table[j]->name);
    if (row) CHECK_MSG(row[3 + longest + 2] != ' ' && row[3 + longest + 1] == ' ', "overview: %s's summary is not aligned", table[k]->name);
    cli_result h = CLI("help", table[k]->name);
    char usage[64];
    snprintf(usage, sizeof usage, "Usage: tkbench %s", table[k]->name);
    CHECK_MSG(h.rc == 0 && !strncmp(h.out, usage, strlen(usage)), "help %s: %s", table[k]->name, h.out);
    cli_free(&h);
  }
  cli_free(&r);
  r = CLI("version", "extra");
  CHECK(r.rc == 2 && strstr(r.err, "unexpected argument 'extra'"));
  cli_free(&r);
  /* check takes the same selection flags as run, with the same help */
  r = CLI("help", "check");
  const char *check_flags[] = {"--filter", "--tag", "--op", "--mode", "--impl", "--device", "--load",
                               "--seed", "--rtol", "--atol"};
  for (size_t k = 0; k < sizeof check_flags / sizeof check_flags[0]; k++)
    CHECK_MSG(strstr(r.out, check_flags[k]) != NULL, "help check lacks %s", check_flags[k]);
  cli_free(&r);
  /* every run flag is in the help, each with its default */
  r = CLI("help", "run");
  const char *flags[] = {"--filter", "--tag", "--op", "--mode", "--impl", "--load", "--device", "--method",
                         "--iterations", "--experiments", "--warmup", "--interval-ms", "--seed",
                         "--cold-cache", "--event-filter", "--trace-dir", "--no-blocking-kernel", "--format", "--out", "--quiet", "--benchmark_filter=",
                         "--benchmark_out=", "--benchmark_out_format=", "--benchmark_format=",
                         "--benchmark_repetitions=", "--benchmark_list_tests"};
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
    CHECK_MSG(strstr(r.out, flags[k]) != NULL, "help run lacks %s", flags[k]);
  CHECK(count_of(r.out, "Default:") >= 17);
  cli_free(&r);

  r = CLI("--version");
  char want[128];
  snprintf(want, sizeof want, "tkbench %s (%s build)\n", tkb_version(), tkb_build_type());
  CHECK(r.rc == 0 && strcmp(r.out, want) == 0);
  cli_free(&r);
}

static void test_list(void) {
  cli_result r = CLI("list");
  CHECK(r.rc == 0 && *r.err == '\0');
  golden("list.txt", r.out);
  cli_free(&r);
  r = CLI("list", "--verbose");
  CHECK(r.rc == 0);
  golden("list_verbose.txt", r.out);
  cli_free(&r);
  r = CLI("list", "--filter", "toy_1k");
  CHECK(r.rc == 0);
  golden("list_filter.txt", r.out);
  cli_free(&r);
  /* tags: repeatable and comma-separated, all must match */
  r = CLI("list", "--tag", "toy", "--tag", "big");
  CHECK(r.rc == 0 && strstr(r.out, "toy_64x64_forward_ref") && !strstr(r.out, "toy_1k"));
  CHECK(strstr(r.out, "1 of 8 entries"));
  cli_free(&r);
  r = CLI("list", "--tag=toy,big");
  CHECK(r.rc == 0 && strstr(r.out, "1 of 8 entries"));
  cli_free(&r);
  /* a negative filter keeps what does not match */
  r = CLI("list", "--filter=-toy");
  CHECK(r.rc == 0 && !strstr(r.out, "toy_") && strstr(r.out, "4 of 8 entries"));
  cli_free(&r);
  r = CLI("list", "--verbose=false", "--filter", "nan");
  CHECK(r.rc == 0 && !strstr(r.out, "args"));
  cli_free(&r);
}

/* The cpu's methods as the method table gives them, joined: "wallclock, cpu_time". */
static const char *cpu_methods(const char *sep_after_first) {
  static char buf[256];
  tkb_device *cpu = NULL;
  CHECK_OK(tkb_device_get("cpu", &cpu));
  const char *const *m = cpu ? tkb_device_methods(cpu) : NULL;
  size_t len = 0;
  buf[0] = '\0';
  for (int k = 0; m && m[k] && len < sizeof buf; k++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", k == 0 ? "" : k == 1 ? sep_after_first : ", ", m[k]);
  return buf;
}

static void test_info(void) {
  cli_result r = CLI("info");
  CHECK(r.rc == 0);
  char methods[300];
  snprintf(methods, sizeof methods, "methods: %s", cpu_methods(" (default), "));
  const char *must[] = {"tkbench ", "Devices", "cpu ", methods,
                        "cuda:0", "opencl:0", "CPU", "model", "cores",
                        "caches", "governor", "boost", "Clock", "resolution", "clock_getres",
                        "read cost", "ns per wallclock read"};
  for (size_t k = 0; k < sizeof must / sizeof must[0]; k++)
    CHECK_MSG(strstr(r.out, must[k]) != NULL, "info lacks \"%s\":\n%s", must[k], r.out);
  /* a device that is missing says so, with why */
  tkb_device *dev;
  if (tkb_device_get("cuda:0", &dev) == TKB_ERR_DEVICE)
    CHECK(strstr(r.out, "cuda:0     device \"cuda:0\" is not available: "));
  /* the measured cost of a clock read is a positive number of ns */
  const char *cost = strstr(r.out, "read cost");
  double ns = cost ? atof(cost + strlen("read cost")) : 0;
  CHECK_MSG(ns > 0 && ns < 1e6, "clock read cost %g ns", ns);
  cli_free(&r);
}

/* One bad command line: exit 2, the message holds `needle`, nothing on stdout and no
 * output file (nor a stray temporary) in the temp directory. */
static void bad(const char *needle, const char *const *args) {
  cli_result r = cli_v(args);
  CHECK_MSG(r.rc == 2, "%s: exit %d, want 2; stderr: %s", args[0], r.rc, r.err);
  CHECK_MSG(strstr(r.err, needle) != NULL, "stderr \"%s\" lacks \"%s\"", r.err, needle);
  CHECK_MSG(*r.out == '\0', "stdout not empty: %s", r.out);
  CHECK(!file_exists(cli_path("out.json")));
  CHECK(files_starting(".out.json") == 0);
  cli_free(&r);
}
#define BAD(needle, ...) bad(needle, (const char *const[]){__VA_ARGS__, NULL})

static void test_bad_input(void) {
  const char *out = cli_path("out.json");
  BAD("'frobnicate' is not a command", "frobnicate");
  BAD("unknown flag '--frobnicate'", "--frobnicate");
  BAD("unknown flag '--frobnicate'", "run", "--frobnicate", "--out", out);
  BAD("unknown flag '--nope'", "list", "--nope");
  BAD("unknown flag '--nope'", "info", "--nope");
  BAD("unexpected argument 'extra'", "run", "extra", "--out", out);
  BAD("'nosuch' is not a command", "help", "nosuch");
  BAD("--iterations needs a value", "run", "--out", out, "--iterations");
  BAD("--out needs a value", "run", "--out");
  BAD("--filter needs a value", "list", "--filter");
  BAD("--iterations 'abc' is not a number", "run", "--iterations", "abc", "--out", out);
  BAD("--iterations '5x' is not a number", "run", "--iterations=5x", "--out", out);
  BAD("--iterations 0 is out of range", "run", "--iterations", "0", "--out", out);
  BAD("--iterations -3 is out of range", "run", "--iterations", "-3", "--out", out);
  BAD("--experiments 0 is out of range", "run", "--experiments", "0", "--out", out);
  BAD("--experiments 'many' is not a number", "run", "--experiments", "many", "--out", out);
  BAD("--benchmark_repetitions 0 is out of range", "run", "--benchmark_repetitions=0", "--out", out);
  BAD("--interval-ms -1 is negative", "run", "--interval-ms", "-1", "--out", out);
  BAD("--interval-ms 'soon' is not a number", "run", "--interval-ms", "soon", "--out", out);
  BAD("--seed '-1' is not a number", "run", "--seed", "-1", "--out", out);
  BAD("filter \"(\" is not a valid POSIX extended regular expression", "run", "--filter", "(",
      "--out", out);
  BAD("filter \"[z-a]\" is not a valid", "list", "--filter", "[z-a]");
  BAD("device \"tpu:0\" is not a device name", "run", "--device", "tpu:0", "--out", out);
  /* a device this machine lacks (the sentence says why: no backend, no driver, ...) */
  tkb_device *cuda;
  if (tkb_device_get("cuda:0", &cuda) == TKB_ERR_DEVICE)
    BAD("device \"cuda:0\" is not available", "run", "--device", "cuda:0", "--out", out);
  /* methods: the library's rule and messages (tkb_method_resolve) */
  BAD("--method: method \"nosuch\" is not a timing method; known: auto, ", "run",
      "--method", "nosuch", "--out", out);
  char cpu_has[300];
  snprintf(cpu_has, sizeof cpu_has, "--method: method \"cupti\" is not available on device cpu; cpu has: %s",
           cpu_methods(", "));
  BAD(cpu_has, "run", "--method", "cupti", "--out", out);
  BAD("method \"xprof\" is not available on device cpu", "run", "--method", "xprof", "--out", out);
  BAD("method \"hermetic_xprof\" is not available on device cpu", "run", "--method",
      "hermetic_xprof", "--out", out);
  /* the bench options' flags */
  BAD("--event-filter: event_filter_regex \"(\" is not a valid POSIX extended regular expression",
      "run", "--event-filter", "(", "--out", out);
  BAD("--event-filter applies only to --method profiler or hermetic_profiler (aliases xprof, "
      "hermetic_xprof), which filter the device's commands by name; this run uses --method "
      "wallclock on device cpu", "run", "--event-filter", "gemm", "--out", out);
  BAD("--event-filter needs a value", "run", "--out", out, "--event-filter");
  BAD("--trace-dir \"/nonexistent_tkb_dir\" does not exist", "run", "--trace-dir",
      "/nonexistent_tkb_dir", "--out", out);
  BAD("--trace-dir is empty", "run", "--trace-dir=", "--out", out);
  BAD("is not a folder", "run", "--trace-dir", "/dev/null", "--out", out);
  BAD("--trace-dir applies only to --method profiler (alias xprof), the only method that writes "
      "a trace; this run uses --method wallclock on device cpu", "run", "--trace-dir", cli_tmp,
      "--out", out);
  BAD("--cold-cache takes no value or true/false, not 'maybe'", "run", "--cold-cache=maybe",
      "--out", out);
  BAD("--no-blocking-kernel applies only to --method cuda_events, the only method that holds the "
      "stream with a blocking kernel; this run uses --method wallclock on device cpu", "run",
      "--no-blocking-kernel", "--out", out);
  BAD("--no-blocking-kernel takes no value or true/false, not '2'", "run",
      "--no-blocking-kernel=2", "--out", out);
  BAD("mode \"sideways\" is not a mode", "run", "--mode", "sideways", "--out", out);
  BAD("format \"xml\" is not an output format", "run", "--format", "xml", "--out", out);
  BAD("--benchmark_format: format \"xml\"", "run", "--benchmark_format=xml");
  BAD("--benchmark_out_format: format \"yaml\"", "run", "--benchmark_out=out.json",
      "--benchmark_out_format=yaml");
  BAD("--warmup 'sometimes' is not a warm-up policy", "run", "--warmup", "sometimes", "--out", out);
  BAD("--quiet takes no value or true/false, not 'maybe'", "run", "--quiet=maybe", "--out", out);
  /* every flag of Google Benchmark's is taken; one it may add some day is named as such */
  BAD("Google Benchmark flag '--benchmark_teleport=1' is not supported", "run",
      "--benchmark_teleport=1");
  BAD("Google Benchmark flag '--benchmark_teleport=1' is not supported", "--benchmark_teleport=1");
  BAD("--benchmark_min_time 'fast' is neither seconds (0.5 or 0.5s, at most 3600) nor a count",
      "--benchmark_min_time=fast");
  BAD("--benchmark_min_time '2.5x' is neither", "--benchmark_min_time=2.5x");
  BAD("--benchmark_min_time=2s is a time, which the fixed rule (--iterations) does not take",
      "run", "--iterations", "3", "--benchmark_min_time=2s", "--out", out);
  BAD("--benchmark_min_time=5x asks for 5 calls per experiment, which --stop ci does not take",
      "run", "--stop", "ci", "--benchmark_min_time=5x", "--out", out);
  BAD("--benchmark_min_time and --stop ci:min_time=1 both give the minimum time", "run", "--stop",
      "ci:min_time=1", "--benchmark_min_time=2", "--out", out);
  BAD("--benchmark_min_warmup_time 'soon' is not a number of seconds", "--benchmark_min_warmup_time=soon");
  BAD("--benchmark_time_unit 'ps' is not a time unit; expected ns, us, ms or s",
      "--benchmark_time_unit=ps");
  BAD("--benchmark_color 'purple' is not a colour setting", "--benchmark_color=purple");
  BAD("--benchmark_context 'novalue' is not KEY=VALUE", "--benchmark_context=a=b,novalue");
  BAD("--context: 'date' is a key the report's context has already", "run", "--context", "date=x",
      "--out", out);
  BAD("--v 'loud' is not a verbosity level", "--v=loud");
  BAD("--perf-counters: perf counter \"SPARKS\" is not one tkbench knows; known: CYCLES, "
      "INSTRUCTIONS", "run", "--perf-counters", "cycles,SPARKS", "--out", out);
  BAD("--perf-counters: perf counter \"page_faults\" is given twice", "run", "--perf-counters",
      "PAGE-FAULTS,page_faults", "--out", out);
  BAD("no entry matches --filter 'no_such_entry'", "run", "--filter", "no_such_entry", "--out", out);
  BAD("--tag: tag \"no_such_tag\" is on no registered entry; the tags are cpu, toy", "run", "--tag",
      "no_such_tag", "--out", out);
  /* a tag that exists, but not with the other criteria */
  BAD("no entry matches --tag big --mode vjp", "run", "--tag", "big", "--mode", "vjp", "--out", out);
  BAD("no entry matches --filter 'toy' --mode vjp", "run", "--filter", "toy", "--mode", "vjp",
      "--out", out);
  BAD("no entry matches --impl nobody", "run", "--impl", "nobody", "--out", out);
  BAD("no entry matches --filter 'zzz'", "list", "--filter", "zzz");
  BAD("--tag: tag \"zzz\" is on no registered entry", "list", "--tag", "zzz");
  BAD("no entry matches --filter 'toy_1k' --op nan_kernel", "list", "--filter", "toy_1k", "--op",
      "nan_kernel");
  BAD("--op: op \"relu\" is not the op of any registered entry; the ops are axpy, nan_kernel, "
      "failing_kernel and sigint_kernel", "run", "--op", "relu", "--out", out);
  BAD("--op: op \"zzz\"", "list", "--op", "axpy,zzz");
  BAD("--op: op \"zzz\"", "check", "--op", "zzz");
  BAD("--op needs a value", "check", "--op");
  BAD("unknown flag '--device'", "list", "--device", "cpu");
  BAD("--rtol 'x' is not a number >= 0", "check", "--rtol", "x");
  BAD("--atol '-1' is not a number >= 0", "check", "--atol=-1");
  BAD("unexpected argument 'extra' (entries are chosen with --filter REGEX)", "check", "extra");
  BAD("no entry other than a reference matches --filter 'zzz' on device cpu", "check", "--filter",
      "zzz");
  /* --out where it cannot be created */
  BAD("its directory does not exist", "run", "--filter", "toy_1k_forward_c", "--out",
      "/nonexistent_tkb_dir/sub/out.json");
  BAD("cannot write output file \"/proc/tkb_out.json\"", "run", "--filter", "toy_1k_forward_c",
      "--out", "/proc/tkb_out.json");
  BAD("it is a directory", "run", "--filter", "toy_1k_forward_c", "--out", cli_tmp);
  /* a not-writable directory (root writes anywhere, so only checked as a user) */
  if (geteuid() != 0) {
    char *ro = cli_path("readonly");
    mkdir(ro, 0555);
    char path[600];
    snprintf(path, sizeof path, "%s/out.json", ro);
    BAD("is not writable", "run", "--filter", "toy_1k_forward_c", "--out", path);
    BAD("is not writable", "run", "--trace-dir", ro, "--out", cli_path("out.json"));
  }
  /* --load: a missing file, and a file that is no shared object */
  BAD("plugin \"/nonexistent/plugin.so\": no such file", "run", "--load", "/nonexistent/plugin.so",
      "--out", out);
  FILE *f = fopen(cli_path("not_a_library.so"), "w");
  fputs("not an ELF file\n", f);
  fclose(f);
  BAD("could not be loaded", "run", "--load", cli_path("not_a_library.so"), "--out", out);
  BAD("could not be loaded", "list", "--load", cli_path("not_a_library.so"));

  /* a failed usage check leaves an existing output file alone */
  f = fopen(out, "w");
  fputs("previous\n", f);
  fclose(f);
  cli_result r = CLI("run", "--iterations", "0", "--out", out);
  CHECK(r.rc == 2);
  char *kept = read_file(out);
  CHECK(kept && strcmp(kept, "previous\n") == 0);
  free(kept);
  cli_free(&r);
  unlink(out);

  /* the messages, all together, as a golden file */
  const char *const cases[][8] = {
      {"frobnicate"},
      {"run", "--iterations", "abc"},
      {"run", "--interval-ms", "-1"},
      {"run", "--filter", "("},
      {"run", "--device", "tpu:0"},
      {"run", "--method", "cupti"},
      {"run", "--method", "nosuch"},
      {"run", "--event-filter", "("},
      {"run", "--trace-dir", "/nonexistent_tkb_dir"},
      {"run", "--mode", "sideways"},
      {"run", "--format", "no-such-format"},
      {"run", "--filter", "nothing_matches"},
      {"run", "--op", "nosuch"},
      {"check", "--tag", "nosuch"},
      {"list", "--mode", "vjp", "--impl", "c"},
      {"run", "--out", "/nonexistent_tkb_dir/out.json", "--filter", "toy_1k_forward_c"},
      {"run", "--method", "instructions", "--interleave"},
      {"run", "--method", "instructions", "--time-unit", "us"},
      {"run", "--count-source", "callgrind"},
  };
  size_t cap = 16384, len = 0;
  char *all = malloc(cap);
  all[0] = '\0';
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    r = cli_v(cases[k]);
    len += (size_t)snprintf(all + len, cap - len, "$ tkbench");
    for (int a = 0; cases[k][a]; a++) len += (size_t)snprintf(all + len, cap - len, " %s", cases[k][a]);
    len += (size_t)snprintf(all + len, cap - len, "\nexit %d\n%s\n", r.rc, r.err);
    cli_free(&r);
  }
  /* the lists the tables make, masked: a new format or method changes no golden text */
  all = mask_between(all, "is not an output format; expected ", "\n", "{formats}");
  all = mask_between(all, "is not a timing method; known: ", "\n", "{methods}");
  all = mask_between(all, "cpu has: ", " (or auto)", "{the cpu's methods}");
  golden("errors.txt", all);
  free(all);
}

/* Runs tkb_main with stdout and/or stderr on a pseudo-terminal; returns what the
 * terminal received. */
static char *on_terminal(bool out_tty, bool err_tty, const char *const *args, int *rc) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) || unlockpt(master)) return NULL;
  int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  if (slave < 0) return NULL;
  char *argv[32];
  int argc = 0;
  argv[argc++] = "tkbench";
  for (; args[argc - 1]; argc++) argv[argc] = (char *)args[argc - 1];
  argv[argc] = NULL;
  fflush(stdout);
  fflush(stderr);
  int save_out = dup(1), save_err = dup(2);
  int null = open("/dev/null", O_WRONLY);
  dup2(out_tty ? slave : null, 1);
  dup2(err_tty ? slave : null, 2);
  *rc = tkb_main(argc, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(save_out, 1);
  dup2(save_err, 2);
  close(save_out);
  close(save_err);
  close(null);
  close(slave);
  /* Read what the terminal got (small: a few KiB fit in the pty's buffer). */
  size_t cap = 1 << 16, len = 0;
  char *s = malloc(cap);
  struct pollfd p = {.fd = master, .events = POLLIN};
  while (len + 1 < cap && poll(&p, 1, 100) > 0) {
    ssize_t n = read(master, s + len, cap - 1 - len);
    if (n <= 0) break;
    len += (size_t)n;
  }
  s[len] = '\0';
  close(master);
  return s;
}

static void test_terminal(void) {
  const char *const args[] = {"run", "--tag", "toy", "--iterations", "2", "--experiments", "1", NULL};
  int rc;
  unsetenv("NO_COLOR");
  char *tty = on_terminal(true, false, args, &rc);
  CHECK(tty != NULL && rc == 0);
  CHECK_MSG(tty && strstr(tty, "\033[1m") && strstr(tty, "\033[0m"), "no colour on a terminal");
  free(tty);
  setenv("NO_COLOR", "1", 1);
  tty = on_terminal(true, false, args, &rc);
  CHECK(tty && rc == 0 && !strchr(tty, '\033') && strstr(tty, "toy_1k_forward_c"));
  free(tty);
  setenv("NO_COLOR", "", 1); /* empty: as if unset (no-color.org) */
  tty = on_terminal(true, false, args, &rc);
  CHECK(tty && strstr(tty, "\033[1m"));
  free(tty);
  unsetenv("NO_COLOR");
  /* the progress line on a terminal stderr: k/n, the name, elapsed time */
  tty = on_terminal(false, true, args, &rc);
  CHECK_MSG(tty && strstr(tty, "[1/3] toy_1k_forward_c") && strstr(tty, "[3/3] toy_64x64_forward_ref"),
            "progress: %s", tty ? tty : "(null)");
  CHECK(tty && strstr(tty, "s elapsed") && strstr(tty, "left") && strstr(tty, "\r\033[K"));
  free(tty);
  /* --quiet: no progress even on a terminal */
  const char *const quiet[] = {"run", "--tag", "toy", "--iterations", "1", "--quiet", NULL};
  tty = on_terminal(true, true, quiet, &rc);
  CHECK(tty && rc == 0 && *tty == '\0');
  free(tty);
  /* not a terminal: no escape codes anywhere */
  cli_result r = CLI("run", "--tag", "toy", "--iterations", "2");
  CHECK(r.rc == 0 && !strchr(r.out, '\033') && !strchr(r.err, '\033'));
  cli_free(&r);
}

/* compare's table: colour on a terminal (the verdicts too), none with NO_COLOR. */
static void test_compare_terminal(void) {
  char *a = cli_path("cmp_a.json"), *b = cli_path("cmp_b.json");
  cli_result r = CLI("run", "--tag", "toy", "--iterations", "6", "--experiments", "2", "--quiet", "--out", a);
  CHECK(r.rc == 0);
  cli_free(&r);
  r = CLI("run", "--tag", "toy", "--iterations", "6", "--experiments", "2", "--quiet", "--out", b);
  CHECK(r.rc == 0);
  cli_free(&r);
  const char *const args[] = {"compare", a, b, NULL};
  int rc;
  unsetenv("NO_COLOR");
  char *tty = on_terminal(true, false, args, &rc);
  CHECK_MSG(tty && rc == 0 && strstr(tty, "\033[1mtkbench compare\033[0m") && strstr(tty, "toy_1k_forward_c"),
            "compare on a terminal: %s", tty ? tty : "(null)");
  free(tty);
  setenv("NO_COLOR", "1", 1);
  tty = on_terminal(true, false, args, &rc);
  CHECK(tty && rc == 0 && !strchr(tty, '\033') && strstr(tty, "3 compared"));
  free(tty);
  unsetenv("NO_COLOR");
  r = CLI("compare", a, b);
  CHECK(r.rc == 0 && !strchr(r.out, '\033'));
  cli_free(&r);
}

/* The default selection: tag cpu (toy_gpu is for cuda, the bad/sigint ones lack the tag). */
static void test_default_selection(void) {
  cli_result r = CLI("run", "--benchmark_list_tests");
  CHECK(r.rc == 0);
  CHECK_MSG(strcmp(r.out, "toy_1k_forward_c\ntoy_1k_forward_and_vjp_c\ntoy_64x64_forward_ref\n") == 0,
            "default selection: %s", r.out);
  cli_free(&r);
  r = CLI("--benchmark_list_tests");
  CHECK(r.rc == 0 && count_lines(r.out) == 3);
  cli_free(&r);
  r = CLI("run", "--benchmark_list_tests=false", "--filter", "^toy_1k_forward_c$", "--iterations", "1",
          "--quiet");
  CHECK(r.rc == 0 && *r.out == '\0');
  cli_free(&r);
  /* --op selects by the entry's op; alone it keeps the default tag, as --mode and --impl do */
  const struct {
    const char *args[8];
    const char *want;
  } by_op[] = {
      {{"--op", "axpy"}, "toy_1k_forward_c\ntoy_1k_forward_and_vjp_c\ntoy_64x64_forward_ref\n"},
      {{"--op", "axpy", "--mode", "forward_and_vjp"}, "toy_1k_forward_and_vjp_c\n"},
      /* no entry of the op carries the default tag: it is dropped */
      {{"--op", "nan_kernel"}, "nan_1k_forward_c\n"},
      {{"--op", "nan_kernel,failing_kernel"}, "nan_1k_forward_c\nfailing_1k_forward_c\n"},
      /* some do: it narrows */
      {{"--op", "axpy,nan_kernel", "--impl", "c"}, "toy_1k_forward_c\ntoy_1k_forward_and_vjp_c\n"},
      {{"--op", "axpy", "--op", "nan_kernel", "--tag", "bad"}, "nan_1k_forward_c\n"},
      {{"--op", "axpy", "--filter", "64"}, "toy_64x64_forward_ref\n"},
  };
  for (size_t k = 0; k < sizeof by_op / sizeof by_op[0]; k++) {
    const char *args[12] = {"run"};
    int n = 1;
    for (int a = 0; by_op[k].args[a]; a++) args[n++] = by_op[k].args[a];
    args[n++] = "--benchmark_list_tests";
    args[n] = NULL;
    r = cli_v(args);
    CHECK_MSG(r.rc == 0 && !strcmp(r.out, by_op[k].want), "--op case %zu: %s%s", k, r.out, r.err);
    cli_free(&r);
  }
  /* list has no default tag: every entry of the op, on every device (late_1k is axpy too) */
  r = CLI("list", "--op", "axpy");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "toy_gpu_forward_cuda") && strstr(r.out, "5 of 8 entries"), "%s%s", r.out, r.err);
  cli_free(&r);
  r = CLI("list", "--mode", "forward_and_vjp", "--impl", "c");
  CHECK(r.rc == 0 && strstr(r.out, "toy_1k_forward_and_vjp_c") && strstr(r.out, "1 of 8 entries"));
  cli_free(&r);
  /* check selects by the same rule (its default tag falls back the same way) */
  r = CLI("check", "--op", "nan_kernel");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "SKIP nan_1k_forward_c has no reference") &&
            strstr(r.out, "0 passed, 0 failed"), "%s%s", r.out, r.err);
  cli_free(&r);
  r = CLI("check", "--impl", "c", "--mode", "forward_and_vjp");
  CHECK(r.rc == 0 && strstr(r.out, "SKIP toy_1k_forward_and_vjp_c") && count_lines(r.out) == 2);
  cli_free(&r);
}

/* TKB_REGISTER's queue; and, with no entry tagged cpu, the default runs every entry. */
static int registrar_calls;
static tkb_status good_registrar(void) {
  registrar_calls++;
  static tkb_value a[1];
  a[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 16));
  tkb_benchmark_def d = {.name = "untagged", .impl_name = "c", .fn = &toy_fn, .args = a, .n_args = 1};
  return tkb_register_benchmark(&d);
}
static tkb_status bad_registrar(void) {
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "bad_registrar: refusing on purpose");
}

static void test_registrars(void) {
  tkb_registry_clear();
  tkb_add_registrar(good_registrar);
  cli_result r = CLI("run", "--iterations", "1", "--experiments", "1");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "untagged_forward_c") && registrar_calls == 1, "%s%s", r.out, r.err);
  cli_free(&r);
  r = CLI("list"); /* queued functions run once */
  CHECK(r.rc == 0 && registrar_calls == 1 && strstr(r.out, "1 entry"));
  cli_free(&r);
  tkb_add_registrar(bad_registrar);
  r = CLI("list");
  CHECK(r.rc == 2 && strstr(r.err, "bad_registrar: refusing on purpose"));
  cli_free(&r);
  tkb_registry_clear();
  r = CLI("list");
  CHECK(r.rc == 2 && strstr(r.err, "no entries are registered"));
  cli_free(&r);
}

int main(void) {
  cli_init();
  register_test_entries();
  test_help_and_version();
  test_list();
  test_info();
  test_bad_input();
  test_terminal();
  test_compare_terminal();
  test_default_selection();
  test_registrars();
  cli_cleanup();
  return CHECK_DONE();
}
