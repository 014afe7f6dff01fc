/* help.c - `tkbench --help` and `tkbench help <command>`: every flag with its default.
 * The defaults printed come from the same macros the commands use. */
#include "cli.h"

#include <string.h>

void tkb__help_overview(FILE *f) {
  fprintf(f,
          "%s %s - benchmarks kernels the way Tokamax does: standardized random inputs,\n"
          "timed calls in spaced experiments, Google Benchmark compatible JSON.\n"
          "\n"
          "Usage: %s <command> [flags]\n"
          "\n"
          "Commands:\n"
          "  list    List the registered benchmark entries\n"
          "  run     Run entries and report their times (console, JSON, CSV, Markdown)\n"
          "  check   Check the numerics of every implementation against the reference\n"
          "  info    Show the version, devices, timing methods, CPU, caches and clocks\n"
          "  help    Show the flags of a command: %s help run\n"
          "\n"
          "Flags:\n"
          "  -h, --help   Show this help\n"
          "  --version    Show the version and build type\n"
          "\n"
          "With no arguments, or with Google Benchmark flags only (--benchmark_filter=...),\n"
          "%s does 'run'.\n"
          "Exit status: 0 success, 1 an entry failed, 2 usage error, 130 interrupted (Ctrl-C).\n",
          tkb__prog, tkb_version(), tkb__prog, tkb__prog, tkb__prog);
}

/* One fprintf per section: ISO C promises string literals up to 4095 characters. */
static void help_run(FILE *f) {
  fprintf(f,
          "Usage: %s run [flags]\n"
          "\n"
          "Runs the selected entries one after another and reports, per entry, the median,\n"
          "min and max time per call, the spread (stddev / median) and the throughputs.\n"
          "A failing entry (an error, or NaN/Inf in its outputs) is reported and the run\n"
          "goes on. Ctrl-C stops after the entry in progress and writes what finished.\n"
          "\n"
          "Selection:\n"
          "  --filter REGEX      Entries whose full name ({spec}_{mode}_{impl}) matches this\n"
          "                      POSIX extended regex; a leading '-' keeps the others.\n"
          "                      Default: none\n"
          "  --tag TAG           Entries that carry TAG (repeatable or comma-separated: all\n"
          "                      must match). Default: %s (the small specs) on every\n"
          "                      device when neither --filter nor --tag is given (every\n"
          "                      entry when none has it); --tag primary: Tokamax's sizes\n"
          "  --mode MODE         forward, forward_res, vjp or forward_and_vjp (repeatable or\n"
          "                      comma-separated). Default: every mode\n"
          "  --impl NAME         Implementations, e.g. reference, cpu (repeatable or\n"
          "                      comma-separated). Default: every implementation\n"
          "  --load LIB.so       Load a plugin that registers entries (it exports\n"
          "                      tkb_plugin_init); repeatable. Default: none\n"
          "\n",
          tkb__prog, TKB__DEFAULT_TAG);
  fprintf(f,
          "Measurement:\n"
          "  --device NAME       cpu, cuda:N or opencl:N. Default: cpu\n"
          "  --method NAME       Timing method: auto (the device's default), wallclock,\n"
          "                      cpu_time, opencl_events, cuda_events, cupti, profiler\n"
          "                      (alias xprof), hermetic_profiler (alias hermetic_xprof)\n"
          "                      ('%s info' lists each device's). Default: auto\n"
          "  --iterations N      Timed calls per experiment. Default: %d\n"
          "  --experiments N     Experiments per entry (Google Benchmark's repetitions).\n"
          "                      Default: %d\n"
          "  --warmup WHEN       each: an untimed call before every timed call (Tokamax's\n"
          "                      wallclock); once: one per experiment. Default: each\n"
          "  --interval-ms MS    Pause between experiments, in milliseconds. Default: 0\n"
          "  --seed N            Seed of the random inputs. Default: 0\n"
          "  --cold-cache        Before each timed call (outside the timed interval), write\n"
          "                      a scratch buffer twice the size of the device's cache\n"
          "                      (cpu: last-level cache; opencl: global memory cache), so\n"
          "                      each call starts with cold caches. Default: off (warm)\n"
          "  --event-filter REGEX  profiler methods only: time just the device commands\n"
          "                      (kernels, copies, fills) whose name matches this POSIX\n"
          "                      extended regex (Tokamax's event_filter_regex).\n"
          "                      Default: every command\n"
          "  --trace-dir DIR     profiler only: write each entry's Chrome trace (its last\n"
          "                      timed call) into DIR, an existing writable folder; the\n"
          "                      metadata's \"trace\" names the file. Default: $TMPDIR, else\n"
          "                      /tmp\n"
          "  --no-blocking-kernel  cuda_events only: start the events as soon as they are\n"
          "                      queued, so each call's time includes the host's gaps\n"
          "                      between its launches. Default: a blocking kernel holds\n"
          "                      the stream until the call is queued (nvbench's), and the\n"
          "                      metadata's \"blocking_kernel\" says how that went\n"
          "\n",
          tkb__prog, TKB__DEFAULT_ITERATIONS, TKB__DEFAULT_EXPERIMENTS);
  fprintf(f,
          "Output:\n"
          "  --format FMT        console, json, csv or markdown: the format of --out's file\n"
          "                      when --out is given, else of stdout. Default: console;\n"
          "                      for --out, from the file's extension (.json .csv .md .txt)\n"
          "                      and json for any other\n"
          "  --out FILE          Also write the report to FILE (written whole under a\n"
          "                      temporary name, then renamed). Default: none\n"
          "  --quiet             No table and no progress line; errors still go to stderr\n"
          "\n"
          "Google Benchmark's spellings, so its tools (compare.py) can drive %s:\n"
          "  --benchmark_filter=REGEX      Same as --filter\n"
          "  --benchmark_out=FILE          Same as --out (json unless --benchmark_out_format)\n"
          "  --benchmark_out_format=FMT    Format of --benchmark_out: json, console or csv\n"
          "  --benchmark_format=FMT        Format of stdout: console, json or csv\n"
          "  --benchmark_repetitions=N     Same as --experiments\n"
          "  --benchmark_list_tests        Print the selected entries' names and exit\n"
          "\n"
          "Exit status: 0 every entry ran, 1 an entry failed, 2 usage error (nothing ran),\n"
          "130 interrupted by Ctrl-C (the finished entries are written).\n"
          "\n"
          "Examples:\n"
          "  %s run\n"
          "  %s run --mode forward,forward_and_vjp --out results/latest.json\n"
          "  %s run --filter '^cpu_96x96x64_' --iterations 50 --format markdown\n"
          "  %s run --benchmark_repetitions=9 --benchmark_out=base.json\n"
          "  %s run --device opencl:0 --method xprof --event-filter norm --trace-dir .\n",
          tkb__prog, tkb__prog, tkb__prog, tkb__prog, tkb__prog, tkb__prog);
}

static void help_list(FILE *f) {
  fprintf(f,
          "Usage: %s list [flags]\n"
          "\n"
          "Lists the registered entries: full name ({spec}_{mode}_{impl}), op, impl, mode\n"
          "and tags.\n"
          "\n"
          "  --filter REGEX   Entries whose full name matches this POSIX extended regex; a\n"
          "                   leading '-' keeps the others. Default: every entry\n"
          "  --tag TAG        Entries that carry TAG (repeatable or comma-separated: all\n"
          "                   must match). Default: none\n"
          "  --verbose        Also each entry's argument shapes and dtypes, static\n"
          "                   arguments and work per call. Default: off\n"
          "  --load LIB.so    Load a plugin that registers entries first; repeatable.\n"
          "                   Default: none\n"
          "\n"
          "Exit status: 0, or 2 on a usage error or when nothing matches.\n",
          tkb__prog);
}

static void help_info(FILE *f) {
  fprintf(f,
          "Usage: %s info\n"
          "\n"
          "Shows the version and build type; the devices found, and for each one that is\n"
          "not, why; the timing methods of each device; the CPU model, cores, caches,\n"
          "frequency governor and boost state (from sysfs, when readable); the clock's\n"
          "resolution and the measured cost of one clock read.\n"
          "\n"
          "No flags. Exit status: 0.\n",
          tkb__prog);
}

bool tkb__help_command(FILE *f, const char *cmd) {
  if (strcmp(cmd, "run") == 0) help_run(f);
  else if (strcmp(cmd, "list") == 0) help_list(f);
  else if (strcmp(cmd, "info") == 0) help_info(f);
  else if (strcmp(cmd, "help") == 0) tkb__help_overview(f);
  else if (strcmp(cmd, "check") == 0) {
    fflush(f);
    char *args[] = {"check", "--help", NULL};
    tkb__cli_check(2, args);
  } else
    return false;
  return true;
}
