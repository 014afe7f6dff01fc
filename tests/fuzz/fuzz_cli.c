/*
 * fuzz_cli.c - the command line in process (tkb_main): the input is the arguments, one
 * a line. Every command may be given, with any flags; a run or check is held to this
 * harness's two small entries (fuzz_1k, a reference and a c implementation) and one
 * timed call in process, so an input costs milliseconds. Arguments that would write
 * files or load code (--out, --resume, --trace-dir, --load, --benchmark_out, --history,
 * and the store-writing `history prune` and `history import`) are left out: those paths
 * have their own tests.
 */
#include "fuzz.h"

#include "cli.h"
#include "../toy_fn.h"

static const char *const forbidden[] = {"--out", "--resume", "--trace-dir", "--load", "--history", "prune",
                                        "import", NULL};

static bool allowed(const char *arg) {
  for (size_t k = 0; forbidden[k]; k++)
    if (!strncmp(arg, forbidden[k], strlen(forbidden[k]))) return false;
  return strncmp(arg, "--benchmark_out", 15) != 0 || !strncmp(arg, "--benchmark_out_format", 22);
}

/* After the input's own: the last of each flag wins, so these bound what runs. */
static const char *const run_tail[] = {"--filter", "^fuzz_1k_", "--iterations", "1", "--experiments",
                                       "1", "--stop", "fixed", "--threads", "1", "--no-isolate",
                                       "--quiet", NULL};
static const char *const check_tail[] = {"--filter", "^fuzz_1k_", "--no-isolate", NULL};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (tkb_register_builtin_ops() != TKB_OK) abort(); /* as the tkbench executable does */
  static tkb_value args[1];
  args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1024));
  const char *impls[] = {"reference", "c"};
  for (int k = 0; k < 2; k++) {
    tkb_benchmark_def d = {.op = "axpy", .name = "fuzz_1k", .impl_name = impls[k], .fn = &toy_fn,
                           .args = args, .n_args = 1, .mode = TKB_MODE_FORWARD, .tags = "cpu,fuzz",
                           .device_kind = "cpu"};
    if (tkb_register_benchmark(&d) != TKB_OK) abort();
  }
  tkb_set_num_threads(1);
  unsetenv("TKB_HISTORY"); /* a run would record into the user's store */
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  char *argv[48];
  int argc = 0;
  argv[argc++] = "tkbench";
  for (char *p = text, *line; (line = p) != NULL && argc < 32;) {
    p = strchr(p, '\n');
    if (p) *p++ = '\0';
    if (!allowed(line)) goto done;
    argv[argc++] = line;
  }
  const bool run = argc < 2 || !strcmp(argv[1], "run") || !strncmp(argv[1], "--benchmark_", 12);
  const char *const *tail = run ? run_tail : !strcmp(argv[1], "check") ? check_tail : NULL;
  /* list --verbose standardizes thousands of entries: too slow to repeat per input */
  for (int i = 1; i < argc; i++)
    if (!strncmp(argv[i], "--verbose", 9) && !strcmp(argv[1], "list")) goto done;
  for (size_t k = 0; tail && tail[k]; k++) argv[argc++] = (char *)tail[k];
  argv[argc] = NULL;
  tkb_main(argc, argv);
done:
  free(text);
  return 0;
}
