/*
 * stdout_text.c - a command's whole output written to stdout in one go, and its failure
 * said truly. A report written piecemeal through stdio fails at whichever flush meets a
 * full disk or a closed pipe, and by the end the reason (errno) is gone: `compare >
 * /dev/full` said "Input/output error". Collected first, written once and flushed at
 * once, the write's own errno is at hand, and a report that cannot be made (out of
 * memory) leaves stdout empty rather than half-written.
 */
#include "cli.h"

#include <errno.h>
#include <string.h>

int tkb__stdout_write(const char *cmd, const char *text, size_t len) {
  errno = 0;
  const bool ok = fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0;
  if (ok) return TKB_EXIT_OK;
  const int err = errno ? errno : EIO;
  clearerr(stdout);
  if (err == EPIPE) return TKB_EXIT_FAILED; /* the reader has gone: nothing to tell it */
  fprintf(stderr, "%s %s: cannot write to stdout: %s\n", tkb__prog, cmd, strerror(err));
  return TKB_EXIT_FAILED;
}
