/* main.c - tkb_main(): picks the command from the table. Google Benchmark's tools call a
 * benchmark program with --benchmark_* flags and no command, so those (and no arguments
 * at all, like BENCHMARK_MAIN) mean `run`. */
#include "cli.h"

#include <errno.h>
#include <string.h>

/* The command of a command line that names none. */
#define IMPLIED_COMMAND "run"

static const char *basename_of(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : (path && *path ? path : "tkbench");
}

/* Runs the queued registration functions; false (message printed) when one failed. */
static bool registered(void) {
  if (tkb__run_registrars() == TKB_OK) return true;
  fprintf(stderr, "%s: %s\n", tkb__prog, tkb_last_error());
  return false;
}

/* A report lost on the way out is a failure: `tkbench list > /dev/full` must not exit 0.
 * (Commands that write as they go say it themselves, with what was lost.) */
static int stdout_status(const char *cmd, int rc) {
  errno = 0;
  const bool failed = fflush(stdout) != 0 || ferror(stdout);
  const int err = errno ? errno : EIO;
  clearerr(stdout);
  if (!failed || rc != TKB_EXIT_OK) return rc;
  fprintf(stderr, "%s%s%s: cannot write to stdout: %s\n", tkb__prog, cmd ? " " : "", cmd ? cmd : "",
          strerror(err));
  return TKB_EXIT_FAILED;
}

int tkb_main(int argc, char **argv) {
  tkb__prog = basename_of(argc > 0 ? argv[0] : NULL);
  tkb__exe = argc > 0 && argv[0] ? argv[0] : "tkbench";
  /* the implied command takes the whole command line (argv[0] included); Google
   * Benchmark's flags are --benchmark_* and its log level --v */
  if (argc < 2 || strncmp(argv[1], "--benchmark_", 12) == 0 || strcmp(argv[1], "--v") == 0 ||
      strncmp(argv[1], "--v=", 4) == 0)
    return registered() ? stdout_status(IMPLIED_COMMAND, tkb__command_find(IMPLIED_COMMAND)->handler(argc, argv))
                        : TKB_EXIT_USAGE;
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
    tkb__help_overview(stdout);
    return stdout_status(NULL, TKB_EXIT_OK);
  }
  /* --version is the version command's other spelling */
  const tkb__command *c = tkb__command_find(strcmp(cmd, "--version") ? cmd : "version");
  /* version and help read no entry: they answer without registering thousands */
  const bool entries = c && strcmp(c->name, "version") != 0 && strcmp(c->name, "help") != 0;
  if (entries && !registered()) return TKB_EXIT_USAGE;
  if (c) return stdout_status(c->name, c->handler(argc - 1, argv + 1));
  if (cmd[0] == '-')
    return tkb__usage(NULL, "unknown flag '%s' (flags go after the command: %s %s %s)", cmd,
                      tkb__prog, IMPLIED_COMMAND, cmd);
  char names[256];
  tkb__command_names(names, sizeof names);
  size_t n;
  const tkb__command *const *cmds = tkb__commands(&n);
  const char *known[32];
  for (size_t k = 0; k < n && k < TKB_ARRAY_LEN(known); k++) known[k] = cmds[k]->name;
  const char *near = tkb__nearest(cmd, known, n < TKB_ARRAY_LEN(known) ? n : TKB_ARRAY_LEN(known));
  if (near) return tkb__usage(NULL, "'%s' is not a command; did you mean '%s'?", cmd, near);
  return tkb__usage(NULL, "'%s' is not a command; the commands are %s", cmd, names);
}
