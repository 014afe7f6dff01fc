/*
 * ab.c - `tkbench ab`: two builds timed against each other on the same entries, their
 * experiments alternating, then compared.
 *
 * Each side runs in a worker process of its own (ab_worker.c: `run --serve`), so two
 * plugins may register the same names and a crash costs one side one entry: this
 * program with --load for a plugin (--a, --b), or a program built on TKB_MAIN (--a-cmd,
 * --b-cmd), which takes every command. Entry by entry, both sides open it, then run one
 * experiment each per round in the order A B, B A, A B, ... (ABBA), the first side drawn
 * from --seed and the entry's name: a drift of the machine (a neighbour's job, a warming
 * chip) lands on both sides alike instead of on whichever ran second, and no side holds
 * a fixed place in the rounds. A side whose stopping rule has stopped waits while the
 * other finishes. The experiments of a round are a pair: the comparison resamples them
 * together (compare.c), so a drift that slowed a round is not taken for noise. Then the comparison is written as `compare` writes it, and each side's
 * results as tkbench JSON (--out-a, --out-b) that `compare` reads again.
 */
#include "cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CMD "ab"

/* run's measurement flags, passed to both sides as given. */
static const char *const passed[] = {"--method",   "--stop",       "--iterations", "--experiments",
                                     "--threads",  "--warmup",     "--interval-ms", "--seed",
                                     "--cold-cache", "--event-filter", "--no-blocking-kernel"};

typedef struct ab_args {
  tkb__select_args sel;
  const char *a, *b, *a_cmd, *b_cmd;
  const char *out_a, *out_b;
  tkb__history_args hist;
  tkb__compare_args cmp;
  /* the measurement flags, taken out of the command line before it is parsed */
  char **pass;
  int n_pass;
  uint64_t seed;
} ab_args;

#define AT(field) offsetof(ab_args, field)

static const tkb__flag ab_flags[] = {
    {.heading = "The two sides (one of each pair):"},
    {.name = "--a", .metavar = "LIB.so", .kind = TKB__FLAG_TEXT, .offset = AT(a),
     .help = "Side A (the base): a plugin that registers entries (tkb_plugin_init), loaded by a "
             "worker of this program."},
    {.name = "--b", .metavar = "LIB.so", .kind = TKB__FLAG_TEXT, .offset = AT(b),
     .help = "Side B (the new build): a plugin, as --a."},
    {.name = "--a-cmd", .metavar = "PROGRAM", .kind = TKB__FLAG_TEXT, .offset = AT(a_cmd),
     .help = "Side A: a program built on TKB_MAIN(), run as the worker itself."},
    {.name = "--b-cmd", .metavar = "PROGRAM", .kind = TKB__FLAG_TEXT, .offset = AT(b_cmd),
     .help = "Side B: a program built on TKB_MAIN()."},
    {.name = "--out-a", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out_a),
     .help = "Write side A's results as tkbench JSON ('{prog} compare' reads it)."},
    {.name = "--out-b", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out_b),
     .help = "Write side B's results as tkbench JSON."},
    TKB__HISTORY_FLAGS(AT(hist), "Each side is a run of its own (kind ab:A, ab:B); --commit and "
                                 "--branch describe side B, the new build. "),
    TKB__COMPARE_VERDICT_ROWS(ab_args, cmp),
    TKB__COMPARE_OUTPUT_ROWS(ab_args, cmp),
    {0},
};

extern const tkb__command tkb__command_ab, tkb__command_run;

/* ---- the command line ---- */

/* run's row for a passed flag's name (up to '='), or NULL. */
static const tkb__flag *passed_row(const char *arg) {
  const size_t len = strcspn(arg, "=");
  for (size_t i = 0; i < TKB_ARRAY_LEN(passed); i++) {
    if (strlen(passed[i]) != len || strncmp(arg, passed[i], len) != 0) continue;
    for (const tkb__flag *r = tkb__command_run.flags; r->name || r->heading; r++)
      if (r->name && strcmp(r->name, passed[i]) == 0) return r;
  }
  return NULL;
}

/* ab's experiments per entry unless --experiments is given: each round is a pair of
 * adjacent experiments and the interval rests on the pairs, so more and shorter rounds
 * follow the machine's drift more closely (the stopping rule shares its minimum time
 * among them; run's default of 3 leaves a bootstrap of 3 pairs, which cannot resolve a
 * few percent on a busy machine: docs/PERFORMANCE.md). */
#define AB_EXPERIMENTS "20"

/* Moves the measurement flags (and their values) from argv to a->pass; *argc shrinks. */
static int take_passed(ab_args *a, int *argc, char **argv) {
  a->pass = calloc((size_t)*argc + 3, sizeof *a->pass);
  if (!a->pass) return tkb__usage(CMD, "out of memory");
  bool experiments = false;
  int kept = 1;
  for (int i = 1; i < *argc; i++) {
    const tkb__flag *row = passed_row(argv[i]);
    if (!row) {
      argv[kept++] = argv[i];
      continue;
    }
    const char *value = strchr(argv[i], '=') ? strchr(argv[i], '=') + 1 : NULL;
    a->pass[a->n_pass++] = argv[i];
    experiments |= strcmp(row->name, "--experiments") == 0;
    if (row->kind != TKB__FLAG_SWITCH && !value) {
      if (i + 1 == *argc) return tkb__usage(CMD, "%s needs a value", row->name);
      value = a->pass[a->n_pass++] = argv[++i];
    }
    if (strcmp(row->name, "--seed") == 0) {
      char *end;
      errno = 0;
      a->seed = strtoull(value, &end, 10);
      if (!*value || *end || errno || strchr(value, '-'))
        return tkb__usage(CMD, "--seed '%s' is not a number; expected an integer 0 to "
                          "18446744073709551615", value);
    }
  }
  if (!experiments) {
    a->pass[a->n_pass++] = "--experiments";
    a->pass[a->n_pass++] = AB_EXPERIMENTS;
  }
  *argc = kept;
  return 0;
}

/* ---- the workers ---- */

typedef struct side {
  char label;               /* 'A', 'B' */
  const char *plugin, *program;
  pid_t pid;
  FILE *to, *from;
  char **names;             /* its entries, in its order */
  size_t n;
  bool alive;
  char why[400];            /* how it ended, once it has */
  cJSON *doc, *rows;        /* its results file, as it grows */
  size_t failed;
} side;

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
  if (interrupted) { /* a second Ctrl-C: the user means it */
    signal(sig, SIG_DFL);
    raise(sig);
  }
  interrupted = 1;
}

/* How a child ended, into s->why. */
static void reap(side *s) {
  if (s->to) fclose(s->to);
  if (s->from) fclose(s->from);
  s->to = s->from = NULL;
  int status = 0;
  while (s->pid > 0 && waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {}
  if (s->pid > 0 && WIFSIGNALED(status))
    snprintf(s->why, sizeof s->why, "side %c's worker was killed by signal %d (%s)", s->label,
             WTERMSIG(status), strsignal(WTERMSIG(status)));
  else if (s->pid > 0)
    snprintf(s->why, sizeof s->why, "side %c's worker exited with status %d", s->label, WEXITSTATUS(status));
  s->pid = 0;
  s->alive = false;
}

static void free_names(side *s) {
  for (size_t i = 0; i < s->n; i++) free(s->names[i]);
  free(s->names);
  s->names = NULL;
  s->n = 0;
}

/* The worker's command line: run --serve, the side's plugin, the selection, the
 * measurement flags. */
static char **worker_argv(const ab_args *a, const side *s) {
  const tkb__select_args *sel = &a->sel;
  size_t cap = 8 + 2 * (sel->tags.n + sel->ops.n + sel->modes.n + sel->impls.n) + (size_t)a->n_pass + 8;
  char **v = calloc(cap, sizeof *v);
  if (!v) return NULL;
  size_t k = 0;
  v[k++] = (char *)(s->program ? s->program : tkb__exe);
  v[k++] = "run";
  v[k++] = "--serve";
  if (s->plugin) v[k++] = "--load", v[k++] = (char *)s->plugin;
  if (sel->filter) v[k++] = "--filter", v[k++] = (char *)sel->filter;
  const struct {
    const char *flag;
    const tkb__strlist *l;
  } lists[] = {{"--tag", &sel->tags}, {"--op", &sel->ops}, {"--mode", &sel->modes}, {"--impl", &sel->impls}};
  for (size_t l = 0; l < TKB_ARRAY_LEN(lists); l++)
    for (size_t i = 0; i < lists[l].l->n; i++) v[k++] = (char *)lists[l].flag, v[k++] = (char *)lists[l].l->items[i];
  if (sel->device) v[k++] = "--device", v[k++] = (char *)sel->device;
  for (int i = 0; i < a->n_pass; i++) v[k++] = a->pass[i];
  v[k] = NULL;
  return v;
}

/* One line of the worker's into buf (its end cut off when longer, never left to be read
 * as the next reply), without the newline; false at the end of its output. */
static bool read_line(FILE *f, char *buf, size_t cap) {
  if (!fgets(buf, (int)cap, f)) return false;
  const size_t n = strcspn(buf, "\n");
  if (buf[n] == '\n') {
    buf[n] = '\0';
    return true;
  }
  for (int ch; (ch = fgetc(f)) != EOF && ch != '\n';) {}
  return true;
}

static void cloexec(int fd) { fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC); }

/* Starts the side's worker and reads its list of entries; false (s->why says why) when
 * it could not start or list them. */
static bool spawn(const ab_args *a, side *s) {
  free_names(s);
  s->why[0] = '\0';
  char **argv = worker_argv(a, s);
  int to[2], from[2];
  if (!argv || pipe(to) != 0) {
    snprintf(s->why, sizeof s->why, "cannot start side %c's worker: %s", s->label, strerror(errno));
    free(argv);
    return false;
  }
  if (pipe(from) != 0) {
    snprintf(s->why, sizeof s->why, "cannot start side %c's worker: %s", s->label, strerror(errno));
    close(to[0]), close(to[1]);
    free(argv);
    return false;
  }
  /* the other worker must not hold these ends, or neither sees the other's end */
  cloexec(to[1]);
  cloexec(from[0]);
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGINT, SIG_IGN); /* Ctrl-C is the parent's to handle, between experiments */
    signal(SIGPIPE, SIG_DFL);
    dup2(to[0], STDIN_FILENO);
    dup2(from[1], STDOUT_FILENO);
    close(to[0]), close(to[1]), close(from[0]), close(from[1]);
    if (s->program) {
      execvp(s->program, argv);
    } else {
      execv("/proc/self/exe", argv);
      execvp(tkb__exe, argv); /* no /proc: the name it was started by */
    }
    fprintf(stderr, "%s %s: cannot run %s: %s\n", tkb__prog, CMD, s->program ? s->program : tkb__exe,
            strerror(errno));
    _exit(127);
  }
  free(argv);
  close(to[0]);
  close(from[1]);
  if (pid < 0) {
    snprintf(s->why, sizeof s->why, "cannot start side %c's worker: %s", s->label, strerror(errno));
    close(to[1]), close(from[0]);
    return false;
  }
  s->pid = pid;
  s->to = fdopen(to[1], "w");
  s->from = fdopen(from[0], "r");
  s->alive = s->to && s->from;
  char line[1024];
  size_t n = 0;
  if (!s->alive || !read_line(s->from, line, sizeof line) || sscanf(line, "entries %zu", &n) != 1 ||
      !(s->names = calloc(n ? n : 1, sizeof *s->names))) {
    reap(s);
    return false;
  }
  for (; s->n < n && read_line(s->from, line, sizeof line); s->n++)
    if (!(s->names[s->n] = tkb__strdup(line))) break;
  if (s->n < n) {
    reap(s);
    return false;
  }
  return true;
}

/* Sends a request and reads its one-line reply; false when the worker has died (it is
 * reaped and s->why says how). */
static bool ask(side *s, const char *request, char *reply, size_t cap) {
  if (!s->alive) return false;
  fprintf(s->to, "%s\n", request);
  fflush(s->to);
  if (!read_line(s->from, reply, cap)) {
    reap(s);
    return false;
  }
  return true;
}

static void quit(side *s) {
  if (s->alive) {
    fputs("quit\n", s->to);
    fflush(s->to);
    reap(s);
  }
  free_names(s);
}

static long find_name(const side *s, const char *name) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->names[i], name) == 0) return (long)i;
  return -1;
}

/* ---- the results of a side ---- */

static void set_family(cJSON *row, int family_index) {
  cJSON *f = cJSON_GetObjectItemCaseSensitive(row, "family_index");
  if (cJSON_IsNumber(f)) cJSON_SetNumberValue(f, family_index);
}

/* A failed entry's row, as `run` writes one. */
static void add_failed(side *s, const char *name, int family_index, const char *why) {
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "name", name);
  cJSON_AddNumberToObject(row, "family_index", family_index);
  cJSON_AddNumberToObject(row, "per_family_instance_index", 0);
  cJSON_AddStringToObject(row, "run_name", name);
  cJSON_AddStringToObject(row, "run_type", "iteration");
  cJSON_AddNumberToObject(row, "repetitions", 1);
  cJSON_AddNumberToObject(row, "repetition_index", 0);
  cJSON_AddNumberToObject(row, "threads", 1);
  cJSON_AddTrueToObject(row, "error_occurred");
  cJSON_AddStringToObject(row, "error_message", why);
  cJSON_AddNumberToObject(row, "iterations", 0);
  cJSON_AddNumberToObject(row, "real_time", 0);
  cJSON_AddNumberToObject(row, "cpu_time", 0);
  cJSON_AddStringToObject(row, "time_unit", "ns");
  cJSON *t = cJSON_AddObjectToObject(row, "tkbench");
  cJSON_AddStringToObject(t, "status", "failed");
  cJSON_AddStringToObject(t, "error", why);
  cJSON_AddItemToArray(s->rows, row);
  s->failed++;
}

/* Reads a "result LEN" reply's document into the side's file; false (why set) when it
 * is not one. */
static bool take_result(side *s, const char *reply, int family_index, char *why, size_t cap) {
  size_t len;
  if (sscanf(reply, "result %zu", &len) != 1) {
    snprintf(why, cap, "%s", strncmp(reply, "error ", 6) == 0 ? reply + 6 : reply);
    return false;
  }
  char *text = malloc(len + 1);
  if (!text || fread(text, 1, len, s->from) != len) {
    free(text);
    reap(s);
    snprintf(why, cap, "%s", s->why[0] ? s->why : "out of memory reading a result");
    return false;
  }
  cJSON *doc = cJSON_ParseWithLength(text, len);
  free(text);
  cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "benchmarks");
  if (!cJSON_IsArray(rows)) {
    cJSON_Delete(doc);
    snprintf(why, cap, "side %c's worker sent a result that is not a results file", s->label);
    return false;
  }
  if (!cJSON_GetObjectItemCaseSensitive(s->doc, "context")) {
    cJSON *ctx = cJSON_DetachItemFromObjectCaseSensitive(doc, "context");
    if (ctx) cJSON_AddItemToObject(s->doc, "context", ctx);
  }
  while (rows->child) {
    cJSON *row = cJSON_DetachItemViaPointer(rows, rows->child);
    set_family(row, family_index);
    cJSON_AddItemToArray(s->rows, row);
  }
  cJSON_Delete(doc);
  return true;
}

/* The side's context: its worker's, with how ab ran it; `run` names this run in both
 * sides' files, so that compare knows their experiments ran in pairs. */
static void finish_context(side *s, const ab_args *a, const char *run, bool stopped) {
  cJSON *ctx = cJSON_GetObjectItemCaseSensitive(s->doc, "context");
  if (!ctx) {
    ctx = cJSON_AddObjectToObject(s->doc, "context");
    cJSON_AddStringToObject(ctx, "library", "tkbench");
    cJSON_AddStringToObject(ctx, "library_version", tkb_version());
  }
  cJSON_DeleteItemFromObjectCaseSensitive(ctx, "interrupted");
  cJSON_AddBoolToObject(ctx, "interrupted", stopped);
  cJSON *ab = cJSON_AddObjectToObject(ctx, "ab");
  cJSON_AddStringToObject(ab, "side", s->label == 'A' ? "A" : "B");
  cJSON_AddStringToObject(ab, "run", run);
  cJSON_AddStringToObject(ab, s->plugin ? "plugin" : "program", s->plugin ? s->plugin : s->program);
  cJSON_AddStringToObject(ab, "order", "experiments alternating ABBA per entry, first side drawn from the seed");
  cJSON_AddNumberToObject(ab, "seed", (double)a->seed);
  /* the context first, as run writes it */
  cJSON *rows = cJSON_DetachItemFromObjectCaseSensitive(s->doc, "benchmarks");
  if (rows) cJSON_AddItemToObject(s->doc, "benchmarks", rows);
}

/* Writes the side's file whole (or not at all); false after saying why. */
static bool write_side(const side *s, const char *path) {
  char *text = cJSON_Print(s->doc);
  tkb__outfile o;
  tkb_status st = text ? tkb__outfile_open(&o, path) : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  if (!st) {
    fputs(text, o.f);
    fputc('\n', o.f);
    st = tkb__outfile_commit(&o);
  }
  cJSON_free(text);
  if (st) fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
  return st == TKB_OK;
}

/* ---- the run ---- */

/* splitmix64 of the seed and the entry's name: which side goes first in its round 0. */
static int first_side(uint64_t seed, const char *name) {
  uint64_t z = seed;
  for (const char *p = name; *p; p++) z = (z ^ (unsigned char)*p) * 1099511628211ull;
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (int)((z ^ (z >> 31)) & 1);
}

/* One entry on the sides that have it. */
static void run_entry(const ab_args *a, side *sd[2], const char *name, const bool has[2], int family_index) {
  enum { IDLE, OPEN, DONE, FAILED };
  int state[2] = {IDLE, IDLE};
  char why[2][1100] = {"", ""}, reply[1100], req[64];
  for (int s = 0; s < 2; s++) {
    if (!has[s]) continue;
    if (!sd[s]->alive && !spawn(a, sd[s])) {
      state[s] = FAILED;
      snprintf(why[s], sizeof why[s], "not run: %s", sd[s]->why);
      continue;
    }
    const long ks = find_name(sd[s], name); /* a restarted worker lists its entries again */
    snprintf(req, sizeof req, "open %ld", ks);
    if (ks < 0) {
      state[s] = FAILED;
      snprintf(why[s], sizeof why[s], "side %c's restarted worker has no entry %s", sd[s]->label, name);
    } else if (!ask(sd[s], req, reply, sizeof reply)) {
      state[s] = FAILED;
      snprintf(why[s], sizeof why[s], "%s while opening the entry", sd[s]->why);
    } else if (strcmp(reply, "ok") != 0) {
      state[s] = FAILED;
      snprintf(why[s], sizeof why[s], "%s", strncmp(reply, "error ", 6) == 0 ? reply + 6 : reply);
    } else {
      state[s] = OPEN;
    }
  }
  const int first = first_side(a->seed, name);
  for (int round = 0; !interrupted && (state[0] == OPEN || state[1] == OPEN); round++)
    for (int t = 0; t < 2 && !interrupted; t++) {
      const int s = t ^ first ^ (round & 1); /* F O, O F, F O, ...: ABBA */
      if (state[s] != OPEN) continue;
      if (!ask(sd[s], "run", reply, sizeof reply)) {
        state[s] = FAILED;
        snprintf(why[s], sizeof why[s], "%s during experiment %d", sd[s]->why, round + 1);
      } else if (strcmp(reply, "done") == 0) {
        state[s] = DONE;
      } else if (strcmp(reply, "more") != 0) {
        state[s] = FAILED;
        snprintf(why[s], sizeof why[s], "%s", strncmp(reply, "error ", 6) == 0 ? reply + 6 : reply);
      }
    }
  for (int s = 0; s < 2; s++) {
    if (state[s] == IDLE) continue;
    if (interrupted && state[s] != FAILED) { /* an unfinished entry is dropped */
      if (state[s] == OPEN || state[s] == DONE) ask(sd[s], "close", reply, sizeof reply);
      continue;
    }
    if (state[s] == DONE) {
      if (!ask(sd[s], "finish", reply, sizeof reply)) {
        snprintf(why[s], sizeof why[s], "%s while finishing the entry", sd[s]->why);
        state[s] = FAILED;
      } else if (!take_result(sd[s], reply, family_index, why[s], sizeof why[s])) {
        state[s] = FAILED;
      }
    }
    if (state[s] == FAILED) add_failed(sd[s], name, family_index, why[s]);
  }
}

/* Every entry of either side: A's in its order, then those only B has. */
static bool run_all(const ab_args *a, side *sd[2]) {
  /* who has what is settled by the first lists (a worker restarted later lists again) */
  const size_t total = sd[0]->n + sd[1]->n;
  char **order = calloc(total ? total : 1, sizeof *order);
  bool (*has)[2] = calloc(total ? total : 1, sizeof *has);
  if (!order || !has) {
    free(order);
    free(has);
    return false;
  }
  size_t n = 0;
  for (size_t i = 0; i < sd[0]->n; i++) {
    has[n][0] = true;
    has[n][1] = find_name(sd[1], sd[0]->names[i]) >= 0;
    order[n++] = tkb__strdup(sd[0]->names[i]);
  }
  for (size_t i = 0; i < sd[1]->n; i++)
    if (find_name(sd[0], sd[1]->names[i]) < 0) {
      has[n][1] = true;
      order[n++] = tkb__strdup(sd[1]->names[i]);
    }
  tkb__progress progress;
  tkb__progress_begin(&progress, stderr, !a->cmp.quiet && isatty(fileno(stderr)), n);
  bool ok = true;
  for (size_t i = 0; i < n && !interrupted; i++) {
    if (!order[i]) {
      ok = false;
      break;
    }
    tkb__progress_show(&progress, i, order[i]);
    run_entry(a, sd, order[i], has[i], (int)i);
  }
  tkb__progress_clear(&progress);
  for (size_t i = 0; i < n; i++) free(order[i]);
  free(order);
  free(has);
  return ok;
}

/* The sides as compare's input; false after saying why. */
static bool adopt(side *s, const char *path, tkb__results_file *rf) {
  char label[600];
  if (path) snprintf(label, sizeof label, "%s", path);
  else snprintf(label, sizeof label, "%c (%s)", s->label, s->plugin ? s->plugin : s->program);
  cJSON *doc = s->doc;
  s->doc = NULL;
  if (tkb__results_file_adopt(doc, label, rf) == TKB_OK) return true;
  fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
  return false;
}

static int check_sides(const ab_args *a) {
  if (!a->a == !a->a_cmd)
    return tkb__usage(CMD, a->a ? "--a and --a-cmd both name side A; give one" :
                      "needs side A: --a LIB.so (a plugin) or --a-cmd PROGRAM (built on TKB_MAIN)");
  if (!a->b == !a->b_cmd)
    return tkb__usage(CMD, a->b ? "--b and --b-cmd both name side B; give one" :
                      "needs side B: --b LIB.so (a plugin) or --b-cmd PROGRAM (built on TKB_MAIN)");
  const char *files[] = {a->out_a, a->out_b};
  const char *flags[] = {"--out-a", "--out-b"};
  for (int i = 0; i < 2; i++)
    if (files[i] && tkb__outfile_check(files[i]) != TKB_OK)
      return tkb__usage(CMD, "%s: %s", flags[i], tkb_last_error());
  return tkb__compare_outputs_check(CMD, &a->cmp);
}

static int ab(const ab_args *a) {
  if (check_sides(a)) return TKB_EXIT_USAGE;
  tkb__history_sink hist;
  if (tkb__history_begin(CMD, &a->hist, &hist)) return TKB_EXIT_USAGE;
  side A = {.label = 'A', .plugin = a->a, .program = a->a_cmd};
  side B = {.label = 'B', .plugin = a->b, .program = a->b_cmd};
  side *sd[2] = {&A, &B};
  /* SA_RESTART: a Ctrl-C must not cut a read from a worker short */
  struct sigaction old_int, old_pipe, sa = {.sa_handler = on_sigint, .sa_flags = SA_RESTART},
                                      ign = {.sa_handler = SIG_IGN};
  sigemptyset(&sa.sa_mask);
  sigemptyset(&ign.sa_mask);
  interrupted = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGPIPE, &ign, &old_pipe); /* a dead worker's pipe: an error, not our end */
  int rc = TKB_EXIT_OK;
  for (int s = 0; s < 2 && !rc; s++)
    if (!spawn(a, sd[s])) {
      fprintf(stderr, "%s %s: %s before listing its entries%s\n", tkb__prog, CMD, sd[s]->why,
              strstr(sd[s]->why, "status 2") ? " (its message above says why)" : "");
      rc = strstr(sd[s]->why, "status 2") ? TKB_EXIT_USAGE : TKB_EXIT_FAILED;
    }
  size_t common = 0;
  for (size_t i = 0; !rc && i < A.n; i++) common += find_name(&B, A.names[i]) >= 0;
  if (!rc && !common)
    rc = tkb__usage(CMD, "no entry is on both sides (A selects %zu, B %zu, none of the same name): "
                    "nothing to compare", A.n, B.n);
  for (int s = 0; s < 2 && !rc; s++) {
    sd[s]->doc = cJSON_CreateObject();
    sd[s]->rows = cJSON_AddArrayToObject(sd[s]->doc, "benchmarks");
    if (!sd[s]->rows) rc = TKB_EXIT_FAILED;
  }
  if (!rc && !run_all(a, sd)) rc = TKB_EXIT_FAILED;
  const bool stopped = interrupted;
  quit(&A);
  quit(&B);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGPIPE, &old_pipe, NULL);
  if (rc) {
    cJSON_Delete(A.doc);
    cJSON_Delete(B.doc);
    tkb__history_abandon(&hist);
    return rc;
  }
  const size_t failed = A.failed + B.failed;
  char run[80], date[40];
  tkb__iso_date(date, sizeof date);
  snprintf(run, sizeof run, "%s pid %ld", date, (long)getpid());
  finish_context(&A, a, run, stopped);
  finish_context(&B, a, run, stopped);
  const side *sides[2] = {&A, &B};
  const char *paths[2] = {a->out_a, a->out_b};
  bool wrote[2] = {false, false};
  for (int s = 0; s < 2; s++)
    if (paths[s] && !(wrote[s] = write_side(sides[s], paths[s]))) rc = TKB_EXIT_FAILED;
  tkb__results_file rf[2] = {{0}, {0}};
  const bool have_a = adopt(&A, a->out_a, &rf[0]), have_b = adopt(&B, a->out_b, &rf[1]);
  /* each side as a run; the code named is side B's */
  if (have_a && tkb__history_end_file(&hist, &rf[0], "ab:A", false, stopped, a->cmp.quiet)) rc = TKB_EXIT_FAILED;
  if (have_b && tkb__history_end_file(&hist, &rf[1], "ab:B", true, stopped, a->cmp.quiet)) rc = TKB_EXIT_FAILED;
  tkb__history_abandon(&hist);
  if (have_a && have_b) {
    tkb__compare_opts o = tkb__compare_opts_from(&a->cmp, a->seed);
    o.paired = true;
    tkb__comparison c;
    if (tkb__compare(&rf[0], &rf[1], &o, &c) != TKB_OK) {
      fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
      rc = TKB_EXIT_FAILED;
    } else {
      const int emitted = tkb__compare_emit(CMD, &c, &a->cmp);
      if (!rc) rc = emitted;
    }
    tkb__comparison_free(&c);
  } else {
    rc = TKB_EXIT_FAILED;
  }
  tkb__results_file_free(&rf[0]);
  tkb__results_file_free(&rf[1]);
  /* said under the console's table only: JSON or Markdown on stdout stays whole */
  const bool console = !a->cmp.format || a->cmp.out || !strcmp(a->cmp.format, "console");
  for (int s = 0; s < 2 && !a->cmp.quiet && console; s++)
    if (wrote[s]) printf("wrote %s (side %c)\n", paths[s], sides[s]->label);
  if (failed && !rc) rc = TKB_EXIT_FAILED;
  if (stopped) {
    fprintf(stderr, "%s %s: interrupted: the entries that finished are compared and written\n", tkb__prog, CMD);
    rc = TKB_EXIT_INTERRUPTED;
  }
  return rc;
}

static int ab_main(int argc, char **argv) {
  ab_args a = {0};
  int rc = take_passed(&a, &argc, argv);
  if (!rc) rc = tkb__flags_parse(&tkb__command_ab, argc, argv, &a, &a.sel);
  if (rc == TKB__PARSED) rc = ab(&a);
  tkb__flags_free(&tkb__command_ab, &a, &a.sel);
  free(a.pass);
  return rc;
}

const tkb__command tkb__command_ab = {
    .name = CMD,
    .summary = "Time two builds against each other, experiments interleaved, and compare them",
    .handler = ab_main,
    .usage = "--a LIB.so|--a-cmd PROGRAM --b LIB.so|--b-cmd PROGRAM [flags]",
    .about = "Runs the entries of two builds against each other: each side in a worker process "
             "of its own (so both may register the same names, and a crash fails one side's "
             "entry while the run goes on), entry by entry, alternating the two sides' "
             "experiments in the order ABBA, the first side drawn from --seed, so that a drift "
             "of the machine lands on both alike. Then prints the comparison as '{prog} compare' "
             "does (the same verdicts, outputs and --fail-on), and writes each side's results "
             "for compare to read again. Entries one side lacks run alone and are listed as "
             "added or removed. run's measurement flags go to both sides as given: --method, "
             "--stop, --iterations, --experiments (default here " AB_EXPERIMENTS ": each round "
             "is a pair, and the interval rests on the pairs), --threads, --warmup, "
             "--interval-ms, --seed (also the order's and the bootstrap's), --cold-cache, "
             "--event-filter, --no-blocking-kernel ('{prog} help run' describes them).",
    .selection = TKB__SELECT_FILTER | TKB__SELECT_TAG | TKB__SELECT_OP | TKB__SELECT_MODE |
                 TKB__SELECT_IMPL | TKB__SELECT_DEVICE,
    .default_tag = true,
    .flags = ab_flags,
    .epilogue = "Exit status: 0 compared, 1 an entry failed on a side or --fail-on's condition was "
                "met, 2 usage error (nothing ran), 130 interrupted by Ctrl-C (the entries that "
                "finished are compared and written).\n"
                "\n"
                "Examples:\n"
                "  {prog} ab --a ./old.so --b ./new.so --filter relu --out-a a.json --out-b b.json\n"
                "  {prog} ab --a-cmd ./bench_main --b-cmd ./bench_pr --fail-on slower\n"
                "  {prog} ab --a ./old.so --b ./new.so --stop fixed --iterations 50 --experiments 8",
    .positional = " (the sides are --a/--a-cmd and --b/--b-cmd)",
};
