/* tkbench.c - the tkbench executable: the ops shipped with the library, then the
 * command line (src/cli). A bare `tkbench` prints the commands instead of starting a
 * run (tkb_main's no-argument run is for users' TKB_MAIN programs). */
#include "tkbench.h"

#include <stdio.h>

int main(int argc, char **argv) {
  /* queued, not run: tkb_main registers only for the commands that read the entries */
  tkb_add_registrar(tkb_register_builtin_ops);
  if (argc < 2) {
    char *help[] = {argv[0], "--help", NULL};
    tkb_main(2, help);
    fprintf(stderr, "\ntkbench: no command given; try 'tkbench run' (the default cpu suite) or "
                    "'tkbench help run'\n");
    return 2;
  }
  return tkb_main(argc, argv);
}
