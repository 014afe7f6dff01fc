/* help.c - `tkbench --help`, `tkbench help <command>` and `<command> --help`, printed
 * from the command table: each command's summary, usage, text and flags, every flag with
 * its default. The defaults shown are the ones the parser sets (the same rows). */
#include "bench.h"
#include "cli.h"

#include <string.h>

extern const tkb__command tkb__command_help;

/* Help text is wrapped to a terminal's width; flag help starts at FLAG_COLUMN. */
#define WIDTH 80
#define FLAG_COLUMN 22

/* The text of a placeholder ("prog" for {prog}) into buf; false when there is none. */
static bool placeholder(const tkb__command *cmd, const char *name, size_t len, char *buf,
                        size_t cap) {
#define IS(s) (len == strlen(s) && strncmp(name, s, len) == 0)
  if (IS("prog")) snprintf(buf, cap, "%s", tkb__prog);
  else if (IS("formats")) tkb__format_names(buf, cap);
  else if (IS("extensions")) tkb__format_extensions(buf, cap);
  else if (IS("methods")) tkb__method_names(buf, cap);
  else if (IS("stop_rules")) tkb__stop_rules_help(buf, cap);
  else if (IS("perf_events")) tkb__perf_event_names(buf, cap);
  else if (IS("default_tag")) snprintf(buf, cap, "%s", TKB__DEFAULT_TAG);
  else if (IS("tag_default"))
    snprintf(buf, cap, "%s", cmd && cmd->default_tag
                                 ? TKB__DEFAULT_TAG " (the small specs, on every device) when "
                                   "neither --filter nor --tag is given; every entry when none "
                                   "of those the other flags select has it"
                                 : "none");
  else return false;
#undef IS
  return true;
}

/* text with its {placeholders} replaced, into out. */
static void expand(const tkb__command *cmd, const char *text, char *out, size_t cap) {
  size_t len = 0;
  for (const char *p = text; *p && len + 1 < cap;) {
    const char *close = *p == '{' ? strchr(p, '}') : NULL;
    char value[512];
    if (close && placeholder(cmd, p + 1, (size_t)(close - p - 1), value, sizeof value)) {
      len += (size_t)snprintf(out + len, cap - len, "%s", value);
      p = close + 1;
    } else {
      out[len++] = *p++;
    }
  }
  out[len < cap ? len : cap - 1] = '\0';
}

/*
 * Prints text word-wrapped at WIDTH. The cursor is at column `col`; every further line
 * starts at column `indent`. A '\n' in text starts a new line; the spaces a line of
 * text starts with are kept (examples).
 */
static void wrap(FILE *f, const char *text, int col, int indent) {
  for (const char *line = text; line;) {
    const char *end = strchr(line, '\n');
    const char *stop = end ? end : line + strlen(line), *p = line;
    if (line != text && p < stop) {
      fprintf(f, "%*s", indent, "");
      col = indent;
    }
    for (; p < stop && *p == ' '; p++, col++) fputc(' ', f);
    bool first_word = true;
    while (p < stop) {
      size_t word = strcspn(p, " ");
      if (word > (size_t)(stop - p)) word = (size_t)(stop - p);
      if (!first_word) {
        bool fits = col + 1 + (int)word <= WIDTH;
        if (fits) fputc(' ', f);
        else fprintf(f, "\n%*s", indent, "");
        col = fits ? col + 1 : indent;
      }
      fwrite(p, 1, word, f);
      col += (int)word;
      first_word = false;
      for (p += word; p < stop && *p == ' ';) p++;
    }
    fputc('\n', f);
    line = end && end[1] ? end + 1 : NULL;
  }
}

static void print_flag(FILE *f, const tkb__command *cmd, const tkb__flag *row) {
  /* Google Benchmark's tools spell their flags with '=' */
  bool gb = strncmp(row->name, "--benchmark_", 12) == 0;
  char left[128];
  int n = snprintf(left, sizeof left, "  %s%s%s", row->name,
                   row->metavar ? (gb ? "=" : " ") : "", row->metavar ? row->metavar : "");
  if (n <= FLAG_COLUMN - 2) fprintf(f, "%-*s", FLAG_COLUMN, left);
  else fprintf(f, "%s  ", left);
  char text[2048], shown[512];
  if (row->same_as) {
    snprintf(text, sizeof text, "Same as %s", row->same_as);
  } else {
    const char *def = row->shown ? row->shown
                      : row->value ? row->value
                      : row->kind == TKB__FLAG_SWITCH ? "off"
                                                      : "none";
    expand(cmd, def, shown, sizeof shown);
    size_t len = 0;
    expand(cmd, row->help, text, sizeof text);
    len = strlen(text);
    if (*shown) snprintf(text + len, sizeof text - len, "\nDefault: %s", shown);
  }
  wrap(f, text, n <= FLAG_COLUMN - 2 ? FLAG_COLUMN : n + 2, FLAG_COLUMN);
}

/* A paragraph of the command's own text, wrapped from column 0. */
static void paragraph(FILE *f, const tkb__command *cmd, const char *text) {
  char buf[4096];
  expand(cmd, text, buf, sizeof buf);
  wrap(f, buf, 0, 0);
}

void tkb__help_command(FILE *f, const tkb__command *cmd) {
  fprintf(f, "Usage: %s %s%s%s\n\n", tkb__prog, cmd->name, *cmd->usage ? " " : "", cmd->usage);
  paragraph(f, cmd, cmd->about);
  if (cmd->selection) fputs("\nSelection:\n", f);
  for (const tkb__flag *r = tkb__selection_flags; r->name; r++)
    if (cmd->selection & r->selection) print_flag(f, cmd, r);
  for (const tkb__flag *r = cmd->flags; r && (r->name || r->heading); r++) {
    if (r->name) {
      print_flag(f, cmd, r);
    } else {
      fputc('\n', f);
      paragraph(f, cmd, r->heading);
    }
  }
  if (cmd->epilogue) {
    fputc('\n', f);
    paragraph(f, cmd, cmd->epilogue);
  }
}

void tkb__help_overview(FILE *f) {
  fprintf(f,
          "%s %s - benchmarks kernels the way Tokamax does: standardized random inputs,\n"
          "timed calls in spaced experiments, Google Benchmark compatible JSON.\n"
          "\n"
          "Usage: %s <command> [flags]\n"
          "\n"
          "Commands:\n",
          tkb__prog, tkb_version(), tkb__prog);
  size_t n;
  const tkb__command *const *cmds = tkb__commands(&n);
  int w = 0;
  for (size_t i = 0; i < n; i++)
    if ((int)strlen(cmds[i]->name) > w) w = (int)strlen(cmds[i]->name);
  for (size_t i = 0; i < n; i++) {
    char summary[512];
    expand(cmds[i], cmds[i]->summary, summary, sizeof summary);
    fprintf(f, "  %-*s  %s\n", w, cmds[i]->name, summary);
  }
  fprintf(f,
          "\n"
          "Flags:\n"
          "  -h, --help   Show this help\n"
          "  --version    Show the version and build type\n"
          "\n"
          "With no arguments, or with Google Benchmark flags only (--benchmark_filter=...),\n"
          "%s does 'run'.\n"
          "Exit status: 0 success, 1 an entry failed, 2 usage error, 130 interrupted (Ctrl-C).\n",
          tkb__prog);
}

/* `tkbench help [COMMAND]` */
static int help_main(int argc, char **argv) {
  if (argc < 2) {
    tkb__help_overview(stdout);
    return TKB_EXIT_OK;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    tkb__help_command(stdout, &tkb__command_help);
    return TKB_EXIT_OK;
  }
  if (argc > 2) return tkb__usage(tkb__command_help.name, "takes one command name, got %d arguments", argc - 1);
  const tkb__command *cmd = tkb__command_find(argv[1]);
  if (!cmd) {
    char names[256];
    tkb__command_names(names, sizeof names);
    return tkb__usage(NULL, "help: '%s' is not a command; the commands are %s", argv[1], names);
  }
  tkb__help_command(stdout, cmd);
  return TKB_EXIT_OK;
}

const tkb__command tkb__command_help = {
    .name = "help",
    .summary = "Show the flags of a command: {prog} help run",
    .handler = help_main,
    .usage = "[COMMAND]",
    .about = "Shows the commands, or with COMMAND that command's flags, each with its "
             "default ('{prog} COMMAND --help' shows the same).",
    .epilogue = "Exit status: 0, or 2 when COMMAND is not a command.",
};
