/* markdown_escape.c - text from elsewhere (an entry's name, a branch, a commit message,
 * a file path, all of which anyone who can record a run chooses) made inert in Markdown:
 * GitHub renders the HTML a comment holds, so a name such as "<img src=x onerror=...>"
 * must reach the page as text, and a '|' or a line break must not end a table cell. */
#include "report.h"

void tkb__md_text(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\n': case '\r': case '\t': fputc(' ', f); break;
    /* Markdown's own punctuation, which would turn a name into emphasis, code, a link
     * or a table's column break */
    case '\\': case '`': case '*': case '_': case '[': case ']': case '|': case '#': case '!': case '~':
      fputc('\\', f);
      fputc(*s, f);
      break;
    default:
      if ((unsigned char)*s >= 0x20) fputc(*s, f); /* other control bytes dropped (UTF-8 bytes are >= 0x80) */
    }
  }
}

void tkb__md_text_cell(FILE *f, const char *s) {
  fputs("| ", f);
  tkb__md_text(f, s);
  fputc(' ', f);
}
