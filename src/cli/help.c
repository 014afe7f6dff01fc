/* help.c - `tkbench --help`, `tkbench help <command>` and `<command> --help`, printed
 * from the command table: each command's summary, usage, text and flags, every flag with
 * its default. The defaults shown are the ones the parser sets (the same rows). The man
 * page (tkbench.1, which the build writes with the hidden `tkbench help --man`) is the
 * same text rendered as roff, so the two cannot disagree. */
#include "bench.h"
#include "cli.h"

#include <string.h>

extern const tkb__command tkb__command_help;

/* Help text is wrapped to a terminal's width; flag help starts at FLAG_COLUMN. */
#define WIDTH 80
#define FLAG_COLUMN 22

bool tkb__help_keep_table_placeholders;

/* The text of a placeholder ("prog" for {prog}) into buf; false when there is none. */
static bool placeholder(const tkb__command *cmd, const char *name, size_t len, char *buf,
                        size_t cap) {
#define IS(s) (len == strlen(s) && strncmp(name, s, len) == 0)
  const bool from_table = IS("formats") || IS("extensions") || IS("compare_formats") || IS("methods") ||
                          IS("stop_rules") || IS("perf_events");
  if (from_table && tkb__help_keep_table_placeholders) snprintf(buf, cap, "{%.*s}", (int)len, name);
  else if (IS("prog")) snprintf(buf, cap, "%s", tkb__prog);
  else if (IS("formats")) tkb__format_names(buf, cap);
  else if (IS("extensions")) tkb__format_extensions(buf, cap);
  else if (IS("compare_formats")) tkb__compare_format_names(buf, cap);
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

/* Google Benchmark's tools spell their flags with '=' ("--benchmark_out=FILE"). */
static const char *metavar_joint(const tkb__flag *row) {
  return !row->metavar ? "" : strncmp(row->name, "--benchmark_", 12) == 0 ? "=" : " ";
}

/* A flag's help with its placeholders replaced and "\nDefault: ..." after it. */
static void flag_text(const tkb__command *cmd, const tkb__flag *row, char *text, size_t cap) {
  if (row->same_as) {
    snprintf(text, cap, "Same as %s", row->same_as);
    return;
  }
  const char *def = row->shown ? row->shown
                    : row->value ? row->value
                    : row->kind == TKB__FLAG_SWITCH ? "off"
                                                    : "none";
  char shown[512];
  expand(cmd, def, shown, sizeof shown);
  expand(cmd, row->help, text, cap);
  size_t len = strlen(text);
  if (*shown) snprintf(text + len, cap - len, "\nDefault: %s", shown);
}

static void print_flag(FILE *f, const tkb__command *cmd, const tkb__flag *row) {
  char left[128];
  int n = snprintf(left, sizeof left, "  %s%s%s", row->name, metavar_joint(row),
                   row->metavar ? row->metavar : "");
  if (n <= FLAG_COLUMN - 2) fprintf(f, "%-*s", FLAG_COLUMN, left);
  else fprintf(f, "%s  ", left);
  char text[2048];
  flag_text(cmd, row, text, sizeof text);
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
    if (r->hidden) continue;
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

/* The overview's own text, which the man page prints too. */
#define WHAT "benchmarks kernels the way Tokamax does"
static const char description[] = WHAT ": standardized random inputs,\n"
                                  "timed calls in spaced experiments, Google Benchmark compatible JSON.";
static const char *const global_flags[][2] = {
    {"-h, --help", "Show this help"},
    {"--version", "Show the version and build type"},
};
static const char default_run[] =
    "With Google Benchmark flags only (--benchmark_filter=...), {prog} does 'run', as a\n"
    "Google Benchmark program does. A program of your own built on tkb_main (TKB_MAIN)\n"
    "also runs its entries when given no arguments; tkbench itself prints this overview.";
static const char exit_status[] =
    "0 success, 1 an entry failed or an output could not be written, 2 usage error\n"
    "(nothing ran), 129 SIGHUP, 130 interrupted (Ctrl-C), 141 stdout closed, 143 SIGTERM.";

void tkb__help_overview(FILE *f) {
  fprintf(f, "%s %s - %s\n\nUsage: %s <command> [flags]\n\nCommands:\n", tkb__prog,
          tkb_version(), description, tkb__prog);
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
  fputs("\nFlags:\n", f);
  for (size_t i = 0; i < TKB_ARRAY_LEN(global_flags); i++)
    fprintf(f, "  %-13s%s\n", global_flags[i][0], global_flags[i][1]);
  char text[512];
  expand(NULL, default_run, text, sizeof text);
  fprintf(f, "\n%s\nExit status: %s\n", text, exit_status);
}

/* ---- the man page: the same text as roff ---- */

/*
 * Writes text as roff: backslashes escaped, a '-' that starts a word (flags, "-h") as
 * the minus sign "\-" so it copies and searches as ASCII, and a line that would start
 * with a control character ('.' or '\'') guarded by "\&".
 */
static void roff_escaped(FILE *f, const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    bool line_start = i == 0 || text[i - 1] == '\n';
    if (line_start && (c == '.' || c == '\'')) fputs("\\&", f);
    if (c == '\\') fputs("\\e", f);
    else if (c == '-' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '-' ||
                          text[i - 1] == '(' || text[i - 1] == '\n'))
      fputs("\\-", f);
    else fputc(c, f);
  }
}

static void roff_line(FILE *f, const char *text) {
  roff_escaped(f, text, strlen(text));
  fputc('\n', f);
}

/*
 * A text of the help as roff: its lines are kept ('\n' breaks a line, as the terminal
 * help does), an empty line starts a paragraph, and lines that start with spaces
 * (examples) are set as they are, unfilled and indented.
 */
static void roff_text(FILE *f, const tkb__command *cmd, const char *text) {
  char buf[4096];
  expand(cmd, text, buf, sizeof buf);
  bool verbatim = false, first = true;
  for (const char *line = buf; line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    bool example = len > 0 && line[0] == ' ';
    if (example != verbatim) {
      fputs(example ? ".PP\n.RS 2\n.nf\n" : ".fi\n.RE\n.PP\n", f);
      verbatim = example;
    } else if (len == 0) {
      fputs(".PP\n", f);
    } else if (!first && !verbatim) {
      fputs(".br\n", f);
    }
    size_t skip = example ? strspn(line, " ") : 0;
    if (len > 0) {
      roff_escaped(f, line + skip, len - skip);
      fputc('\n', f);
    }
    first = len == 0;
    line = end ? end + 1 : NULL;
  }
  if (verbatim) fputs(".fi\n.RE\n", f);
}

static void roff_flag(FILE *f, const tkb__command *cmd, const tkb__flag *row) {
  fputs(".TP\n\\fB", f);
  roff_escaped(f, row->name, strlen(row->name));
  fputs("\\fR", f);
  if (row->metavar) {
    fprintf(f, "%s\\fI", metavar_joint(row));
    roff_escaped(f, row->metavar, strlen(row->metavar));
    fputs("\\fR", f);
  }
  fputc('\n', f);
  char text[2048];
  flag_text(cmd, row, text, sizeof text);
  roff_text(f, cmd, text);
}

void tkb__help_man(FILE *f) {
  size_t n;
  const tkb__command *const *cmds = tkb__commands(&n);
  fprintf(f, ".\\\" Generated by '%s help --man' from its command table; do not edit.\n", tkb__prog);
  fprintf(f, ".TH TKBENCH 1 \"\" \"tkbench %s\" \"User Commands\"\n", tkb_version());
  fputs(".nh\n", f); /* no hyphen breaks inside flag and entry names */
  fprintf(f, ".SH NAME\n%s \\- %s\n", tkb__prog, WHAT);
  fprintf(f, ".SH SYNOPSIS\n.B %s\n.I command\n[flags]\n", tkb__prog);
  fprintf(f, ".SH DESCRIPTION\n%s ", tkb__prog);
  roff_line(f, description);
  fputs(".PP\n", f);
  roff_text(f, NULL, default_run);
  fputs(".SH OPTIONS\n", f);
  for (size_t i = 0; i < TKB_ARRAY_LEN(global_flags); i++) {
    fputs(".TP\n.B ", f);
    roff_line(f, global_flags[i][0]);
    roff_line(f, global_flags[i][1]);
  }
  fputs(".SH COMMANDS\n", f);
  for (size_t i = 0; i < n; i++) {
    char summary[512];
    expand(cmds[i], cmds[i]->summary, summary, sizeof summary);
    fprintf(f, ".TP\n.B %s\n", cmds[i]->name);
    roff_line(f, summary);
  }
  for (size_t i = 0; i < n; i++) {
    const tkb__command *cmd = cmds[i];
    fprintf(f, ".SS %s\n\\fB%s %s\\fR", cmd->name, tkb__prog, cmd->name);
    if (*cmd->usage) fputc(' ', f);
    roff_line(f, cmd->usage);
    fputs(".PP\n", f);
    roff_text(f, cmd, cmd->about);
    if (cmd->selection) fputs(".PP\nSelection:\n", f);
    for (const tkb__flag *r = tkb__selection_flags; r->name; r++)
      if (cmd->selection & r->selection) roff_flag(f, cmd, r);
    for (const tkb__flag *r = cmd->flags; r && (r->name || r->heading); r++) {
      if (r->hidden) continue; /* as in the help */
      if (r->name) {
        roff_flag(f, cmd, r);
      } else {
        fputs(".PP\n", f);
        roff_text(f, cmd, r->heading);
      }
    }
    if (cmd->epilogue) {
      fputs(".PP\n", f);
      roff_text(f, cmd, cmd->epilogue);
    }
  }
  fputs(".SH EXIT STATUS\n", f);
  roff_line(f, exit_status);
  fputs(".SH ENVIRONMENT\n"
        ".TP\n.B TKB_PLUGIN_PATH\n"
        "Folders (colon-separated) searched first for the device backends, "
        "libtkbench\\-opencl.so and libtkbench\\-cuda.so; after them, the folder of the "
        "program or libtkbench.so and the installed plugin folder \\fIlibdir\\fR/tkbench.\n"
        ".TP\n.B NO_COLOR\n"
        "When set and not empty, no colour in the console output.\n"
        ".TP\n.B TKB_CPU_ISA\n"
        "portable, avx2 or avx512 (x86-64), portable or neon (aarch64): the cpu kernels' instruction set path (default: the best "
        "the CPU runs). A path the CPU lacks is refused with a warning and the best is kept.\n"
        ".TP\n.BR OMP_NUM_THREADS \", \" OMP_WAIT_POLICY \", \" OMP_PROC_BIND\n"
        "The cpu ops' OpenMP team (\\fB\\-\\-threads\\fR overrides the size); recorded in "
        "each run's context. \\fBinfo \\-\\-check\\fR advises on them.\n"
        ".TP\n.B OPENBLAS_THREAD_TIMEOUT\n"
        "How long OpenBLAS's idle workers spin after a product (2^n cycles). Unless it is "
        "set, tkbench sets 18 (about 0.1 ms) before it loads OpenBLAS: OpenBLAS's own "
        "default kept a worker spinning on a core for about 0.1 s after each product, "
        "which the op's threads between products needed.\n"
        ".TP\n.BR SLURM_ARRAY_TASK_ID \", \" SLURM_PROCID \", \" SLURM_NTASKS\n"
        "\\fB\\-\\-shard auto\\fR takes its part from them.\n"
        ".TP\n.B TKB_CACHE_DIR\n"
        "Where tkbench caches the device's measured peaks (an absolute path); default "
        "\\fB$XDG_CACHE_HOME\\fR/tkbench, else ~/.cache/tkbench.\n"
        ".TP\n.B TMPDIR\n"
        "Where scratch files go (cold-cache buffers' files, the device workers' results).\n"
        ".SH SEE ALSO\n"
        "The C API: the comments of tkbench.h. Google Benchmark's tools/compare.py reads "
        "the JSON output.\n", f);
}

/* `tkbench help [COMMAND]` */
static int help_main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--man")) { /* for the build (tkbench.1), not in help */
    tkb__help_man(stdout);
    return TKB_EXIT_OK;
  }
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
