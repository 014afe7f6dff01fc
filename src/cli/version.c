/* version.c - `tkbench version` (also spelled `tkbench --version`). */
#include "cli.h"

extern const tkb__command tkb__command_version;

static int version_main(int argc, char **argv) {
  int rc = tkb__flags_parse(&tkb__command_version, argc, argv, NULL, NULL);
  if (rc != TKB__PARSED) return rc;
  printf("%s %s (%s build)\n", tkb__prog, tkb_version(), tkb_build_type());
  return TKB_EXIT_OK;
}

const tkb__command tkb__command_version = {
    .name = "version",
    .summary = "Show the version and build type",
    .handler = version_main,
    .usage = "",
    .about = "Shows the version and the build type (Release, Debug, ...).",
    .epilogue = "No flags. Exit status: 0.",
};
