/* regressions_format.c - the table of `history regressions`' renderings (a rendering is
 * one file and one row here), and a value in its unit as they all write it. */
#include "regressions.h"

#include <string.h>

static const tkb__regressions_format formats[] = {
    {"console", NULL, ".txt .log", tkb__regressions_console},
    {"markdown", "md", ".md .markdown", tkb__regressions_markdown},
    {"json", NULL, ".json", tkb__regressions_json},
};

tkb_status tkb__regressions_format_parse(const char *name, const tkb__regressions_format **out) {
  for (size_t i = 0; name && i < TKB_ARRAY_LEN(formats); i++)
    if (!strcmp(name, formats[i].name) || (formats[i].alias && !strcmp(name, formats[i].alias))) {
      *out = &formats[i];
      return TKB_OK;
    }
  return tkb_set_error(TKB_ERR_NOT_FOUND, "format \"%s\" is not a format of history regressions; expected "
                       "console, markdown (md) or json", name ? name : "(null)");
}

const tkb__regressions_format *tkb__regressions_format_from_path(const char *path) {
  for (size_t i = 0; i < TKB_ARRAY_LEN(formats); i++)
    if (tkb__path_ends_in(path, formats[i].extensions)) return &formats[i];
  return &formats[0];
}
