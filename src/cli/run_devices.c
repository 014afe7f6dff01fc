/*
 * run_devices.c - `run --device KIND:all`: one worker per device of the kind that this
 * process can see (CUDA_VISIBLE_DEVICES narrows CUDA's), each this program again running
 * `run ... --device KIND:g --shard S/T` on its own shard, then their result files merged.
 *
 * Workers are processes, not threads: each device gets its own context, its own timing
 * session and its own crash. Their shards come from one split of the selection into
 * N x G parts, part K x G + g for device g of shard K of N (the run's own --shard, or
 * Slurm's), so a node's devices share the node's shard and a cluster's nodes and devices
 * together run the selection once. Each worker's table and messages are kept in files and
 * shown once it ends, so that G progress lines do not fight over one terminal.
 */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Workers get SIGINT from the terminal themselves and stop after their entry; this
 * process only notes it and merges what they wrote. */
static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
}

bool tkb__device_is_all(const char *device) {
  const char *colon = device ? strchr(device, ':') : NULL;
  return colon && strcmp(colon + 1, "all") == 0;
}

/* A worker: its device, its files, its process. */
typedef struct worker {
  char device[64], json[4200], journal[4300], table[4200], log[4200];
  pid_t pid;
  int rc;
} worker;

/* Prints a file's text (a worker's table or messages) to f. */
static void show(FILE *f, const char *path) {
  FILE *in = fopen(path, "r");
  if (!in) return;
  char buf[4096];
  for (size_t got; (got = fread(buf, 1, sizeof buf, in)) > 0;) fwrite(buf, 1, got, f);
  fclose(in);
}

static const char *outcome(int rc) {
  switch (rc) {
    case TKB_EXIT_OK: return "every entry ran";
    case TKB_EXIT_FAILED: return "an entry failed";
    case TKB_EXIT_USAGE: return "refused its flags";
    case TKB_EXIT_INTERRUPTED: return "interrupted";
    default: return rc > 128 ? "killed by a signal" : "failed";
  }
}

/* Starts worker g: this program's `run` with the user's flags and then its own, which
 * win (a flag given twice takes the last value). */
static pid_t start(worker *w, const char *stdout_format, const char *shard, int argc, char **argv) {
  char **args = calloc((size_t)argc + 14, sizeof *args);
  if (!args) return -1;
  char out_format[64];
  snprintf(out_format, sizeof out_format, "--benchmark_format=%s", stdout_format);
  int k = 0;
  args[k++] = (char *)tkb__self_exe();
  args[k++] = "run";
  for (int i = 1; i < argc; i++) args[k++] = argv[i];
  const char *own[] = {"--device", w->device, "--shard", shard, "--out", w->json,
                       "--benchmark_out_format=json", out_format};
  for (size_t i = 0; i < TKB_ARRAY_LEN(own); i++) args[k++] = (char *)own[i];
  pid_t pid = -1;
  FILE *table = fopen(w->table, "w"), *log = fopen(w->log, "w");
  if (table && log) pid = tkb__spawn(args, fileno(table), fileno(log));
  int err = errno;
  if (table) fclose(table);
  if (log) fclose(log);
  free(args);
  errno = err;
  return pid;
}

/* Starts one worker per device, d on shard K x g + d of N x g; returns how many started. */
static int start_workers(worker *w, int g, const char *kind, const char *dir, int k0, int n0,
                         const char *cmd, const char *stdout_format, int argc, char **argv) {
  int started = 0;
  for (int d = 0; d < g; d++) {
    worker *x = &w[d];
    snprintf(x->device, sizeof x->device, "%s:%d", kind, d);
    snprintf(x->json, sizeof x->json, "%s/%s-%d.json", dir, kind, d);
    snprintf(x->journal, sizeof x->journal, "%s.partial.jsonl", x->json);
    snprintf(x->table, sizeof x->table, "%s/%s-%d.txt", dir, kind, d);
    snprintf(x->log, sizeof x->log, "%s/%s-%d.log", dir, kind, d);
    char shard[48];
    snprintf(shard, sizeof shard, "%d/%d", k0 * g + d, n0 * g);
    x->pid = interrupted ? -1 : start(x, stdout_format, shard, argc, argv);
    if (x->pid < 0 && !interrupted)
      fprintf(stderr, "%s %s: cannot start the worker of %s: %s\n", tkb__prog, cmd, x->device, strerror(errno));
    started += x->pid >= 0;
  }
  return started;
}

/* Waits for the workers in device order, showing each one's table and messages once it
 * has ended; the files they left go to inputs (a finished file, else its journal).
 * Returns the run's exit status, from rc (the start's) and theirs. */
static int wait_workers(worker *w, int g, const char *cmd, bool quiet, int rc, const char **inputs,
                        size_t *n_inputs) {
  for (int d = 0; d < g; d++) {
    worker *x = &w[d];
    x->rc = x->pid >= 0 ? tkb__wait(x->pid) : -1;
    if (!quiet) show(stdout, x->table);
    fflush(stdout);
    show(stderr, x->log);
    if (!quiet || x->rc)
      fprintf(stderr, "%s %s: %s: %s (exit status %d)\n", tkb__prog, cmd, x->device, outcome(x->rc), x->rc);
    if (x->rc == TKB_EXIT_USAGE && rc != TKB_EXIT_INTERRUPTED) rc = TKB_EXIT_USAGE;
    else if (x->rc == TKB_EXIT_INTERRUPTED || interrupted) rc = TKB_EXIT_INTERRUPTED;
    else if (x->rc && rc == TKB_EXIT_OK) rc = TKB_EXIT_FAILED;
    if (!inputs) continue;
    if (access(x->json, F_OK) == 0) inputs[(*n_inputs)++] = x->json;
    else if (access(x->journal, F_OK) == 0) inputs[(*n_inputs)++] = x->journal;
  }
  return rc;
}

/* Merges the workers' files into out, then removes them and their folder, unless
 * something went wrong (then they are kept, and the folder named). Returns the exit
 * status. */
static int merge_workers(const worker *w, int g, const char *dir, const char *cmd, const char *out,
                         bool quiet, const char **inputs, size_t n_inputs, int rc) {
  bool keep = rc != TKB_EXIT_OK;
  if (out && n_inputs) {
    int merged = tkb__merge_files(cmd, inputs, n_inputs, out, quiet);
    if (merged) {
      keep = true;
      if (rc == TKB_EXIT_OK) rc = merged;
    }
  } else if (out) {
    fprintf(stderr, "%s %s: no worker left results: %s was not written\n", tkb__prog, cmd, out);
    if (rc == TKB_EXIT_OK) rc = TKB_EXIT_FAILED;
  }
  if (keep) {
    fprintf(stderr, "%s %s: the workers' files are kept in %s\n", tkb__prog, cmd, dir);
    return rc;
  }
  for (int d = 0; d < g; d++) {
    unlink(w[d].json);
    unlink(w[d].journal);
    unlink(w[d].table);
    unlink(w[d].log);
  }
  rmdir(dir);
  return rc;
}

int tkb__run_devices(const char *cmd, const char *device, const char *shard_text, const char *stdout_format,
                     const char *out, bool quiet, int argc, char **argv) {
  char kind[32];
  tkb__device_kind(device, kind, sizeof kind);
  int g = 0;
  if (tkb_device_count(kind, &g) != TKB_OK) return tkb__usage(cmd, "--device %s: %s", device, tkb_last_error());
  if (g < 1) return tkb__usage(cmd, "--device %s: no %s device is visible", device, kind);
  tkb__shard_info node;
  if (tkb__shard_resolve(shard_text, NULL, &node) != TKB_OK)
    return tkb__usage(cmd, "--shard: %s", tkb_last_error());
  const int k0 = node.count ? node.index : 0, n0 = node.count ? node.count : 1;
  if ((long)n0 * g > TKB__SHARDS_MAX)
    return tkb__usage(cmd, "--device %s: %d shards x %d devices is more than %d parts", device, n0, g,
                      TKB__SHARDS_MAX);

  const char *tmp = getenv("TMPDIR");
  char dir[1024];
  int len = snprintf(dir, sizeof dir, "%s/tkbench-devices-XXXXXX", tmp && *tmp && strlen(tmp) < 900 ? tmp : "/tmp");
  char *made = len > 0 ? mkdtemp(dir) : NULL;
  const size_t ng = g > 0 ? (size_t)g : 1;
  worker *w = calloc(ng, sizeof *w);
  if (!made || !w) {
    fprintf(stderr, "%s %s: cannot make a folder for the workers' files: %s\n", tkb__prog, cmd, strerror(errno));
    free(w);
    return TKB_EXIT_FAILED;
  }
  struct sigaction old, sa = {.sa_handler = on_sigint};
  sigemptyset(&sa.sa_mask);
  interrupted = 0;
  sigaction(SIGINT, &sa, &old);
  if (!quiet)
    fprintf(stderr, "%s %s: %d %s device%s, one worker each%s; their files: %s\n", tkb__prog, cmd, g, kind,
            g == 1 ? "" : "s", node.count ? " on this process's shard" : "", made);
  const int started = start_workers(w, g, kind, made, k0, n0, cmd, stdout_format, argc, argv);
  const char **inputs = calloc(ng, sizeof *inputs);
  size_t n_inputs = 0;
  int rc = wait_workers(w, g, cmd, quiet, started == g ? TKB_EXIT_OK : TKB_EXIT_FAILED, inputs, &n_inputs);
  sigaction(SIGINT, &old, NULL);
  rc = merge_workers(w, g, made, cmd, out, quiet, inputs, n_inputs, rc);
  free(inputs);
  free(w);
  return rc;
}
