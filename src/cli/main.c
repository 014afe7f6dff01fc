/* main.c - tkb_main(): picks the subcommand. Google Benchmark's tools call a benchmark
 * program with --benchmark_* flags and no subcommand, so those (and no arguments at
 * all, like BENCHMARK_MAIN) mean `run`. */
#include "cli.h"

#include <string.h>

static const char *basename_of(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : (path && *path ? path : "tkbench");
}

int tkb_main(int argc, char **argv) {
  tkb__prog = basename_of(argc > 0 ? argv[0] : NULL);
  tkb__exe = argc > 0 && argv[0] ? argv[0] : "tkbench";
  if (tkb__run_registrars() != TKB_OK) {
    fprintf(stderr, "%s: %s\n", tkb__prog, tkb_last_error());
    return TKB_EXIT_USAGE;
  }
  /* run takes the whole command line (argv[0] included) when no subcommand is named */
  if (argc < 2 || strncmp(argv[1], "--benchmark_", 12) == 0) return tkb__cli_run(argc, argv);
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
    tkb__help_overview(stdout);
    return TKB_EXIT_OK;
  }
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
    printf("%s %s (%s build)\n", tkb__prog, tkb_version(), tkb_build_type());
    return TKB_EXIT_OK;
  }
  if (!strcmp(cmd, "help")) {
    if (argc < 3) {
      tkb__help_overview(stdout);
      return TKB_EXIT_OK;
    }
    if (argc > 3) return tkb__usage("help", "takes one command name, got %d arguments", argc - 2);
    if (!tkb__help_command(stdout, argv[2]))
      return tkb__usage(NULL, "help: '%s' is not a command; the commands are list, run, check, "
                        "info and help", argv[2]);
    return TKB_EXIT_OK;
  }
  if (!strcmp(cmd, "run")) return tkb__cli_run(argc - 1, argv + 1);
  if (!strcmp(cmd, "list")) return tkb__cli_list(argc - 1, argv + 1);
  if (!strcmp(cmd, "info")) return tkb__cli_info(argc - 1, argv + 1);
  if (!strcmp(cmd, "check")) return tkb__cli_check(argc - 1, argv + 1);
  if (cmd[0] == '-')
    return tkb__usage(NULL, "unknown flag '%s' (flags go after the command: %s run %s)", cmd,
                      tkb__prog, cmd);
  return tkb__usage(NULL, "'%s' is not a command; the commands are list, run, check, info and help",
                    cmd);
}
