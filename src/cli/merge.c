/*
 * merge.c - `tkbench merge A.json B.json ... -o ALL.json`: one run's parts (the shards of
 * `slurm` or --shard, a node's devices, the journal of a shard that died) as one result
 * file in the same schema (src/results/results_merge.c says what is refused and why).
 * Every input is read and checked before anything is written, and the file lands whole.
 */
#include "cli.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define CMD "merge"

typedef struct merge_args {
  const char **inputs;  /* the files, in order (argv's words); a job array's shards may be
                           hundreds, so no fixed cap */
  size_t n_inputs, cap;
  const char *out;
  bool quiet;
} merge_args;

static int operand(void *args, const char *arg) {
  merge_args *a = args;
  if (a->n_inputs == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 16;
    const char **v = realloc(a->inputs, cap * sizeof *v);
    if (!v) return tkb__usage(CMD, "out of memory reading the file names");
    a->inputs = v, a->cap = cap;
  }
  a->inputs[a->n_inputs++] = arg;
  return 0;
}

#define AT(field) offsetof(merge_args, field)

static const tkb__flag merge_flags[] = {
    {.heading = "Output:"},
    {.name = "--out", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out), .shown = "",
     .help = "The merged file (required). Written whole under a temporary name, then renamed, "
             "so it may be one of the inputs."},
    {.name = "-o", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out), .same_as = "--out"},
    {.name = "--quiet", .kind = TKB__FLAG_SWITCH, .offset = AT(quiet),
     .help = "No summary line; warnings and errors still go to stderr."},
    {0},
};

extern const tkb__command tkb__command_merge;

static void print_warning(void *user, const char *text) {
  (void)user;
  fprintf(stderr, "%s %s: warning: %s\n", tkb__prog, CMD, text);
}

int tkb__merge_files(const char *cmd, const char *const *paths, size_t n, const char *out, bool quiet) {
  tkb__results_file *files = calloc(n ? n : 1, sizeof *files);
  if (!files) {
    fprintf(stderr, "%s %s: out of memory\n", tkb__prog, cmd);
    return TKB_EXIT_FAILED;
  }
  int rc = TKB_EXIT_OK;
  for (size_t i = 0; i < n && !rc; i++)
    if (tkb__results_file_load(paths[i], &files[i]) != TKB_OK)
      rc = tkb__usage(cmd, "%s", tkb_last_error());
  cJSON *doc = NULL;
  size_t entries = 0;
  if (!rc && tkb__results_merge(files, n, print_warning, NULL, &doc, &entries) != TKB_OK)
    rc = tkb__usage(cmd, "%s", tkb_last_error());
  char *text = doc ? cJSON_Print(doc) : NULL;
  if (!rc && !text) {
    fprintf(stderr, "%s %s: out of memory writing %s\n", tkb__prog, cmd, out);
    rc = TKB_EXIT_FAILED;
  }
  tkb__outfile o = {0};
  if (!rc) {
    tkb_status st = tkb__outfile_open(&o, out);
    if (!st) {
      fputs(text, o.f);
      fputc('\n', o.f);
      st = tkb__outfile_commit(&o);
    }
    if (st) {
      fprintf(stderr, "%s %s: %s\n", tkb__prog, cmd, tkb_last_error());
      rc = TKB_EXIT_FAILED;
    }
  }
  if (!rc && !quiet)
    printf("merged %zu entr%s from %zu file%s into %s\n", entries, entries == 1 ? "y" : "ies", n,
           n == 1 ? "" : "s", out);
  free(text);
  cJSON_Delete(doc);
  for (size_t i = 0; i < n; i++) tkb__results_file_free(&files[i]);
  free(files);
  return rc;
}

static int merge_main(int argc, char **argv) {
  merge_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_merge, argc, argv, &a, NULL);
  if (rc == TKB__PARSED) {
    if (a.n_inputs == 0) rc = tkb__usage(CMD, "no result files to merge; expected A.json B.json ... -o OUT.json");
    else if (!a.out) rc = tkb__usage(CMD, "-o FILE is required: where the merged file goes");
    else if (tkb__outfile_check(a.out) != TKB_OK) rc = tkb__usage(CMD, "-o: %s", tkb_last_error());
    else rc = tkb__merge_files(CMD, a.inputs, a.n_inputs, a.out, a.quiet);
  }
  tkb__flags_free(&tkb__command_merge, &a, NULL);
  free(a.inputs);
  return rc;
}

const tkb__command tkb__command_merge = {
    .name = CMD,
    .summary = "Merge the result files of a run's shards into one",
    .handler = merge_main,
    .usage = "FILE... -o OUT",
    .about = "Reads result files ({prog}'s JSON, the journals a run leaves beside --out, or "
             "Google Benchmark's JSON, the last only with each other) and writes one file in "
             "the same schema holding every entry of every file, each row naming its shard "
             "and host, and the context listing each file's shard, host, device and Slurm job "
             "under \"merged\". Refused (exit 2, naming the files and what differs): an entry in "
             "two files, and files whose numbers are not comparable: another library, version, "
             "timing method, seed, iterations, stopping rule, warm-up or kind of device. "
             "Warned: other hosts, device models or dates, the missing shards of a split, and a "
             "journal's cut-off last line.",
    .flags = merge_flags,
    .operand = operand,
    .epilogue = "Exit status: 0 merged, 1 the file could not be written, 2 a usage error or a "
                "refused input (nothing written).\n"
                "\n"
                "Examples:\n"
                "  {prog} merge shard-0.json shard-1.json shard-2.json -o all.json\n"
                "  {prog} merge shard-*.json shard-3.json.partial.jsonl -o all.json",
};
