/*
 * slurm.c - `tkbench slurm`: a run split into shards on a Slurm cluster. It writes two
 * batch scripts meant to be read (and copied by those who write their own): a job array
 * whose task K runs `tkbench run RUN_ARGS --shard auto` into shard-K.json, and a merge
 * job, submitted to start once the array has ended, that names the shards that failed and
 * merges what every shard left into one file. Then it submits both with sbatch.
 *
 * Before anything is written it runs the run's flags through this same program
 * (`run RUN_ARGS --benchmark_list_tests`), so a typo costs no allocation; that needs no
 * device, so it works on a login node without GPUs.
 */
#include "cli.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CMD "slurm"

typedef struct slurm_args {
  int shards;
  const char *partition, *time, *gres, *dir, *out, *job_name, *after;
  bool exclusive, dry_run;
  tkb__strlist options; /* --sbatch-option */
} slurm_args;

static int check_after(const char *cmd, const char *flag, const char *value) {
  if (strcmp(value, "ok") == 0 || strcmp(value, "any") == 0) return 0;
  return tkb__usage(cmd, "%s '%s' is not a condition; expected ok or any", flag, value);
}

#define AT(field) offsetof(slurm_args, field)

static const tkb__flag slurm_flags[] = {
    {.heading = "Shards:"},
    {.name = "--shards", .metavar = "N", .kind = TKB__FLAG_COUNT, .offset = AT(shards),
     .shown = "", .help = "How many shards: the job array's tasks (required)."},
    {.name = "--partition", .metavar = "P", .kind = TKB__FLAG_TEXT, .offset = AT(partition),
     .shown = "the cluster's default", .help = "Slurm partition of both jobs."},
    {.name = "--time", .metavar = "T", .kind = TKB__FLAG_TEXT, .offset = AT(time),
     .shown = "the partition's default",
     .help = "Time limit of each shard and of the merge, as sbatch reads it (2:00:00, 1-0)."},
    {.name = "--gres", .metavar = "G", .kind = TKB__FLAG_TEXT, .offset = AT(gres),
     .shown = "gpu:1 when the run's --device is cuda:N, else none",
     .help = "Generic resources per shard (gpu:1: one GPU each, which Slurm makes the shard's "
             "cuda:0); none asks for none."},
    {.name = "--exclusive", .kind = TKB__FLAG_SWITCH, .offset = AT(exclusive),
     .help = "A whole node per shard, so no other job shares its cores or devices."},
    {.name = "--sbatch-option", .metavar = "OPT", .kind = TKB__FLAG_PATHS, .offset = AT(options),
     .shown = "none",
     .help = "Another sbatch option for both jobs, e.g. --sbatch-option=--account=abc "
             "(repeatable)."},
    {.name = "--job-name", .metavar = "NAME", .kind = TKB__FLAG_TEXT, .offset = AT(job_name),
     .value = "tkbench", .help = "Name of the array; the merge job is NAME-merge."},
    {.name = "--after", .metavar = "WHEN", .kind = TKB__FLAG_TEXT, .offset = AT(after),
     .value = "any", .check = check_after,
     .help = "any: merge once every shard has ended, however (what failed shards finished is "
             "merged and they are named); ok: only when every shard succeeded (else the merge "
             "job is cancelled)."},
    {.heading = "Files:"},
    {.name = "--dir", .metavar = "DIR", .kind = TKB__FLAG_TEXT, .offset = AT(dir),
     .shown = "tkbench-slurm-<date>-<time> in the current folder",
     .help = "Folder for the two scripts, each shard's results, status and log, and the merge's "
             "log; created, and must not hold scripts from another submission. Compute nodes "
             "must see it at the same path."},
    {.name = "--out", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out),
     .shown = "DIR/merged.json", .help = "The merged result file."},
    {.name = "--dry-run", .kind = TKB__FLAG_SWITCH, .offset = AT(dry_run),
     .help = "Print the two scripts and the sbatch commands instead of writing and submitting "
             "them."},
    {0},
};

extern const tkb__command tkb__command_slurm;

/* ---- the run's own flags ---- */

/* The value of run flag `name` among args ("--name V" or "--name=V"); NULL when absent. */
static const char *run_flag(int n, char **args, const char *name) {
  const char *v = NULL;
  size_t len = strlen(name);
  for (int i = 0; i < n; i++) {
    if (strncmp(args[i], name, len) != 0) continue;
    if (args[i][len] == '=') v = args[i] + len + 1;
    else if (args[i][len] == '\0' && i + 1 < n) v = args[++i];
  }
  return v;
}

/* The run flags that are slurm's to set: 0, or TKB_EXIT_USAGE after saying which. */
static int refuse_run_flags(int n, char **args) {
  static const char *const ours[] = {"--out", "--benchmark_out", "--benchmark_out_format", "--format",
                                     "--shard", "--benchmark_list_tests"};
  for (int i = 0; i < n; i++)
    for (size_t k = 0; k < TKB_ARRAY_LEN(ours); k++) {
      size_t len = strlen(ours[k]);
      if (strncmp(args[i], ours[k], len) != 0 || (args[i][len] && args[i][len] != '=')) continue;
      return tkb__usage(CMD, "the run's %s is %s %s's to set: each shard writes its part as JSON "
                        "into --dir, and the merge writes --out", ours[k], tkb__prog, CMD);
    }
  return 0;
}

/* Runs `run ARGS --shard 0/1 --benchmark_list_tests` through this program: the number of
 * entries the run selects, or -1 after the run's own message. */
static long count_entries(int n, char **args) {
  char **argv = calloc((size_t)n + 6, sizeof *argv);
  if (!argv) return -1;
  int k = 0;
  argv[k++] = (char *)tkb__self_exe();
  argv[k++] = "run";
  for (int i = 0; i < n; i++) argv[k++] = args[i];
  argv[k++] = "--shard=0/1";
  argv[k++] = "--benchmark_list_tests";
  char *out = NULL;
  int rc = tkb__run_capture(argv, &out);
  long lines = 0;
  for (const char *p = out; p && *p; p++) lines += *p == '\n';
  if (rc == -1) fprintf(stderr, "%s %s: cannot run %s: %s\n", tkb__prog, CMD, argv[0], strerror(errno));
  free(out);
  free(argv);
  return rc == 0 ? lines : -1;
}

/* ---- the scripts ---- */

/* s as one shell word: bare when it is plain, else in single quotes. */
static void shell_word(FILE *f, const char *s) {
  if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=@%+,-") ==
                strlen(s)) {
    fputs(s, f);
    return;
  }
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputs("'\\''", f);
    else fputc(*s, f);
  }
  fputc('\'', f);
}

/* Where everything goes, as absolute paths. */
typedef struct plan {
  char dir[4096], out[4096], cwd[4096];
  const char *exe;
  const char *gres; /* NULL: none */
  int n_run;
  char **run;
  int argc;
  char **argv; /* slurm's own command line from its name on, for the scripts' first lines */
} plan;

static void made_by(FILE *f, const plan *p) {
  fprintf(f, "# Made by: %s", tkb__prog);
  bool run_flags = false;
  for (int i = 0; i < p->argc; i++) {
    run_flags = run_flags || strcmp(p->argv[i], "--") == 0;
    if (!run_flags && strncmp(p->argv[i], "--dry-run", 9) == 0) continue; /* what it submits */
    fputc(' ', f);
    shell_word(f, p->argv[i]);
  }
  fputc('\n', f);
}

static void common_options(FILE *f, const slurm_args *a) {
  fprintf(f, "#SBATCH --ntasks=1\n");
  if (a->partition) fprintf(f, "#SBATCH --partition=%s\n", a->partition);
  if (a->time) fprintf(f, "#SBATCH --time=%s\n", a->time);
  for (size_t i = 0; i < a->options.n; i++) fprintf(f, "#SBATCH %s\n", a->options.items[i]);
}

static void shards_script(FILE *f, const slurm_args *a, const plan *p) {
  fprintf(f, "#!/bin/bash\n"
             "# A tkbench run in %d shards, one per task of this job array: task K runs part K\n"
             "# of the selection (run --shard auto reads SLURM_ARRAY_TASK_ID and the array's\n"
             "# size) and writes shard-K.json beside this script; merge.sbatch merges them.\n",
          a->shards);
  made_by(f, p);
  fprintf(f, "#SBATCH --job-name=%s\n#SBATCH --array=0-%d\n", a->job_name, a->shards - 1);
  common_options(f, a);
  if (p->gres) fprintf(f, "#SBATCH --gres=%s\n", p->gres);
  if (a->exclusive) fprintf(f, "#SBATCH --exclusive\n");
  fprintf(f, "#SBATCH --output=%s/shard-%%a.log\n", p->dir);
  fprintf(f, "#SBATCH --chdir=%s\n\n", p->cwd);
  fprintf(f, "dir=");
  shell_word(f, p->dir);
  fprintf(f, "\nk=$SLURM_ARRAY_TASK_ID\n");
  shell_word(f, p->exe);
  fprintf(f, " run");
  for (int i = 0; i < p->n_run; i++) {
    fputc(' ', f);
    shell_word(f, p->run[i]);
  }
  fprintf(f, " --shard auto --out \"$dir/shard-$k.json\"\n"
             "status=$?\n"
             "# how the shard ended, for the merge job's report\n"
             "echo \"$status\" > \"$dir/shard-$k.status\"\n"
             "exit \"$status\"\n");
}

static void merge_script(FILE *f, const slurm_args *a, const plan *p) {
  fprintf(f, "#!/bin/bash\n"
             "# Merges the shards of shards.sbatch into one result file; submitted to start once\n"
             "# the array has ended: sbatch --dependency=after%s:<the array's job id> merge.sbatch\n"
             "# It names each shard that failed or was killed, and merges what every shard\n"
             "# left (its result file, else the journal of the entries it finished). Exit\n"
             "# status 0 only when every shard succeeded.\n",
          a->after);
  made_by(f, p);
  fprintf(f, "#SBATCH --job-name=%s-merge\n", a->job_name);
  common_options(f, a);
  if (strcmp(a->after, "ok") == 0) fprintf(f, "#SBATCH --kill-on-invalid-dep=yes\n");
  fprintf(f, "#SBATCH --output=%s/merge.log\n", p->dir);
  fprintf(f, "#SBATCH --chdir=%s\n\n", p->cwd);
  fprintf(f, "dir=");
  shell_word(f, p->dir);
  fprintf(f, "\nout=");
  shell_word(f, p->out);
  fprintf(f, "\nshards=%d\n", a->shards);
  fprintf(f,
          "inputs=()\n"
          "failed=0\n"
          "for ((k = 0; k < shards; k++)); do\n"
          "  status=$(cat \"$dir/shard-$k.status\" 2>/dev/null || echo none)\n"
          "  case $status in\n"
          "    0) ;;\n"
          "    1) echo \"shard $k: an entry failed (the results say which; see shard-$k.log)\" ;;\n"
          "    none) echo \"shard $k: no exit status: cancelled, out of time or its node failed (see shard-$k.log)\" ;;\n"
          "    *) echo \"shard $k: exit status $status (see shard-$k.log)\" ;;\n"
          "  esac\n"
          "  [ \"$status\" = 0 ] || failed=$((failed + 1))\n"
          "  if [ -f \"$dir/shard-$k.json\" ] && [ -s \"$dir/shard-$k.json\" ]; then\n"
          "    inputs+=(\"$dir/shard-$k.json\")\n"
          "  elif [ -f \"$dir/shard-$k.json.partial.jsonl\" ]; then\n"
          "    echo \"shard $k: merging the entries it finished (its journal)\"\n"
          "    inputs+=(\"$dir/shard-$k.json.partial.jsonl\")\n"
          "  else\n"
          "    echo \"shard $k: left no results\"\n"
          "  fi\n"
          "done\n"
          "if [ ${#inputs[@]} -eq 0 ]; then\n"
          "  echo \"no shard left results: nothing to merge\"\n"
          "  exit 1\n"
          "fi\n");
  shell_word(f, p->exe);
  fprintf(f, " merge \"${inputs[@]}\" -o \"$out\" || exit\n"
             "echo \"merged ${#inputs[@]} of $shards shards into $out; $failed failed\"\n"
             "[ \"$failed\" -eq 0 ]\n");
}

/* ---- files and submission ---- */

/* "dir/name" into buf; false when it does not fit. */
static bool join(char *buf, size_t cap, const char *dir, const char *name) {
  int len = snprintf(buf, cap, "%s/%s", dir, name);
  return len >= 0 && (size_t)len < cap;
}

/* path made absolute against the current folder; false when too long. */
static bool absolute(const char *cwd, const char *path, char *buf, size_t cap) {
  if (path[0] != '/') return join(buf, cap, cwd, path);
  int len = snprintf(buf, cap, "%s", path);
  return len >= 0 && (size_t)len < cap;
}

static int write_script(const char *dir, const char *name, void (*make)(FILE *, const slurm_args *, const plan *),
                        const slurm_args *a, const plan *p, char *path, size_t cap) {
  FILE *f = join(path, cap, dir, name) ? fopen(path, "w") : NULL;
  if (!f) {
    fprintf(stderr, "%s %s: cannot write %s: %s\n", tkb__prog, CMD, path, strerror(errno));
    return TKB_EXIT_FAILED;
  }
  make(f, a, p);
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad) {
    fprintf(stderr, "%s %s: cannot write %s\n", tkb__prog, CMD, path);
    return TKB_EXIT_FAILED;
  }
  chmod(path, 0755);
  return 0;
}

/* sbatch --parsable ARGS... SCRIPT: the job id, or NULL after saying why. */
static char *sbatch(const char *dependency, const char *script, char *id, size_t cap) {
  char *argv[5];
  int k = 0;
  argv[k++] = "sbatch";
  argv[k++] = "--parsable";
  if (dependency) argv[k++] = (char *)dependency;
  argv[k++] = (char *)script;
  argv[k] = NULL;
  char *out = NULL;
  int rc = tkb__run_capture(argv, &out);
  size_t len = out ? strspn(out, "0123456789") : 0;
  if (rc == -1) {
    fprintf(stderr, "%s %s: cannot run sbatch: %s (is Slurm's client on PATH?)\n", tkb__prog, CMD,
            strerror(errno));
  } else if (rc != 0 || len == 0 || len >= cap) {
    fprintf(stderr, "%s %s: sbatch %s failed (exit status %d)%s%s\n", tkb__prog, CMD, script, rc,
            out && *out ? ": " : "", out ? out : "");
    len = 0;
  }
  if (len) snprintf(id, cap, "%.*s", (int)len, out);
  free(out);
  return len ? id : NULL;
}

static int submit(const slurm_args *a, const plan *p, long entries) {
  if (mkdir(p->dir, 0777) != 0 && errno != EEXIST)
    return tkb__usage(CMD, "--dir %s cannot be created: %s", p->dir, strerror(errno));
  char shards_path[4200], merge_path[4200];
  join(shards_path, sizeof shards_path, p->dir, "shards.sbatch"); /* fits: dir < 4096 */
  if (access(shards_path, F_OK) == 0)
    return tkb__usage(CMD, "--dir %s already holds shards.sbatch from another submission; give "
                      "another --dir", p->dir);
  if (write_script(p->dir, "shards.sbatch", shards_script, a, p, shards_path, sizeof shards_path) ||
      write_script(p->dir, "merge.sbatch", merge_script, a, p, merge_path, sizeof merge_path))
    return TKB_EXIT_FAILED;
  char array_id[64], merge_id[64], dep[128];
  if (!sbatch(NULL, shards_path, array_id, sizeof array_id)) return TKB_EXIT_FAILED;
  snprintf(dep, sizeof dep, "--dependency=after%s:%s", a->after, array_id);
  if (!sbatch(dep, merge_path, merge_id, sizeof merge_id)) {
    fprintf(stderr, "%s %s: the shards are submitted (job %s) but not their merge; submit it "
            "with: sbatch %s %s\n", tkb__prog, CMD, array_id, dep, merge_path);
    return TKB_EXIT_FAILED;
  }
  printf("submitted %ld entr%s in %d shards as job %s (array 0-%d), and their merge as job %s "
         "(once every shard has %s)\n",
         entries, entries == 1 ? "y" : "ies", a->shards, array_id, a->shards - 1, merge_id,
         strcmp(a->after, "ok") == 0 ? "succeeded" : "ended");
  printf("scripts, shard results and logs: %s\n", p->dir);
  printf("merged file: %s (its report: %s/merge.log)\n", p->out, p->dir);
  printf("squeue -j %s,%s shows them\n", array_id, merge_id);
  return TKB_EXIT_OK;
}

static void dry_run(const slurm_args *a, const plan *p, long entries) {
  printf("# %ld entr%s in %d shards. %s %s would write these two scripts into %s and submit\n"
         "# them with:\n"
         "#   array=$(sbatch --parsable %s/shards.sbatch)\n"
         "#   sbatch --dependency=after%s:$array %s/merge.sbatch\n",
         entries, entries == 1 ? "y" : "ies", a->shards, tkb__prog, CMD, p->dir, p->dir, a->after,
         p->dir);
  printf("\n# ---- %s/shards.sbatch ----\n", p->dir);
  shards_script(stdout, a, p);
  printf("\n# ---- %s/merge.sbatch ----\n", p->dir);
  merge_script(stdout, a, p);
}

static int slurm(const slurm_args *a, int n_run, char **run, int argc, char **argv) {
  if (a->shards == 0) return tkb__usage(CMD, "--shards N is required");
  if (a->shards > TKB__SHARDS_MAX)
    return tkb__usage(CMD, "--shards %d is out of range; expected 1 to %d", a->shards, TKB__SHARDS_MAX);
  if (refuse_run_flags(n_run, run)) return TKB_EXIT_USAGE;
  plan p = {.exe = tkb__self_exe(), .n_run = n_run, .run = run, .argc = argc, .argv = argv};
  if (!getcwd(p.cwd, sizeof p.cwd)) return tkb__usage(CMD, "the current folder is unknown: %s", strerror(errno));
  char stamp[64];
  time_t now = time(NULL);
  strftime(stamp, sizeof stamp, "tkbench-slurm-%Y%m%d-%H%M%S", localtime(&now));
  if (!absolute(p.cwd, a->dir ? a->dir : stamp, p.dir, sizeof p.dir - 64) ||
      !(a->out ? absolute(p.cwd, a->out, p.out, sizeof p.out) : join(p.out, sizeof p.out, p.dir, "merged.json")))
    return tkb__usage(CMD, "--dir or --out is too long a path");
  const char *device = run_flag(n_run, run, "--device");
  p.gres = a->gres ? (strcmp(a->gres, "none") == 0 ? NULL : a->gres)
           : device && strncmp(device, "cuda:", 5) == 0 && strcmp(device, "cuda:all") != 0 ? "gpu:1"
                                                                                             : NULL;
  long entries = count_entries(n_run, run);
  if (entries < 0)
    return tkb__usage(CMD, "the run's flags (after --) are refused by '%s run' (above)", tkb__prog);
  if (entries < a->shards)
    fprintf(stderr, "%s %s: %ld entr%s for %d shards: %d shard%s will run none\n", tkb__prog, CMD,
            entries, entries == 1 ? "y" : "ies", a->shards, a->shards - (int)entries,
            a->shards - entries == 1 ? "" : "s");
  if (a->dry_run) {
    dry_run(a, &p, entries);
    return TKB_EXIT_OK;
  }
  return submit(a, &p, entries);
}

static int slurm_main(int argc, char **argv) {
  int split = argc;
  for (int i = 1; i < argc && split == argc; i++)
    if (strcmp(argv[i], "--") == 0) split = i;
  slurm_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_slurm, split, argv, &a, NULL);
  if (rc == TKB__PARSED) {
    int n_run = split < argc ? argc - split - 1 : 0;
    rc = slurm(&a, n_run, argv + split + (split < argc), argc, argv);
  }
  tkb__flags_free(&tkb__command_slurm, &a, NULL);
  return rc;
}

const tkb__command tkb__command_slurm = {
    .name = CMD,
    .summary = "Run a selection in shards on a Slurm cluster and merge the results",
    .handler = slurm_main,
    .usage = "--shards N [flags] -- [run flags]",
    .about = "Writes two batch scripts into --dir and submits them with sbatch: a job array of N "
             "tasks, task K running '{prog} run RUN_FLAGS --shard auto' (part K of the "
             "selection, the parts balanced by estimated cost) into shard-K.json, and a merge "
             "job that starts once the array has ended, names the shards that failed and merges "
             "what every shard left into --out. The run's flags are checked first, through this "
             "program, without opening the device. The compute nodes run this same program "
             "file, so it and --dir must be on a file system they share.",
    .flags = slurm_flags,
    .epilogue = "Prints the two job ids, the folder and the merged file's path. Exit status: 0 "
                "submitted (or printed), 1 writing or sbatch failed, 2 a usage error (nothing "
                "written or submitted).\n"
                "\n"
                "Examples:\n"
                "  {prog} slurm --shards 8 --partition gpu --time 2:00:00 -- --device cuda:0\n"
                "  {prog} slurm --shards 4 --dry-run -- --op ragged_dot\n"
                "  {prog} slurm --shards 16 --exclusive -- --tag primary --shard-weights last.json",
    .positional = " (the run's flags go after --)",
};
