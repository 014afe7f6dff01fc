/* textbuf.c - text collected in memory through a FILE (open_memstream), for reports that
 * cannot be written in the order their parts become known, and for output files that
 * reach the disk only once complete. */
#include "results.h"

#include <stdlib.h>

tkb_status tkb__textbuf_open(tkb__textbuf *b) {
  *b = (tkb__textbuf){0};
  b->f = open_memstream(&b->text, &b->len);
  return b->f ? TKB_OK : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for a report's text");
}

tkb_status tkb__textbuf_close(tkb__textbuf *b) {
  if (!b->f) return TKB_OK;
  bool lost = fflush(b->f) != 0 || ferror(b->f);
  fclose(b->f); /* text and len are final only once the stream is closed */
  b->f = NULL;
  if (lost) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for a report's text");
  return TKB_OK;
}

void tkb__textbuf_free(tkb__textbuf *b) {
  if (b->f) fclose(b->f);
  free(b->text);
  *b = (tkb__textbuf){0};
}
