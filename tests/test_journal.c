/*
 * test_journal.c - what keeps a run's finished results: a result written as its JSON
 * rows reads back into the same result (the journal's lines and the workers' messages),
 * the reader's messages for rows that are not what json.c writes, the journal (created,
 * appended, read back, a cut-off last line skipped, a bad line named, a second run
 * refused, reopened after its cut line), worker processes (a crash, an exit, a hang
 * past the time limit, a stop), UTF-8 in JSON strings, the regex check before regcomp,
 * the memory limit, and the small argument errors (tkb_array_wrap, keyword names,
 * TKB_STRING(NULL), an empty device name).
 */
#include "check.h"
#include "jsonw.h"
#include "runner.h"
#include "toy_fn.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static char *path_in(const char *name) {
  static char buf[4][256];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

/* A real result: the toy function benchmarked with 2 experiments of 3 calls. */
static void real_result(tkb__result *r) {
  tkb_value args[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 256))};
  tkb_std_fn *f;
  tkb_arrays *a;
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 1, NULL, 0, NULL, &f, &a));
  tkb_bench_opts o = {.iterations = 3, .experiments = 2, .stop = "fixed"};
  *r = (tkb__result){.name = "toy_256_forward_c", .op = "axpy", .spec = "toy_256", .impl = "c",
                     .tags = "cpu,toy", .mode = TKB_MODE_FORWARD, .family_index = 4,
                     .counts = {.items = 256, .bytes = 2048}};
  CHECK_OK(tkb_benchmark(f, a, &o, &r->bd));
  tkb_std_fn_free(f);
  tkb_arrays_free(a);
}

static char *line_of(const tkb__result *r, size_t *len) {
  char *text;
  CHECK_OK(tkb__entry_line(r, 2, &text, len, NULL));
  return text;
}

static void test_round_trip(void) {
  tkb__result r;
  real_result(&r);
  size_t len, len2;
  char *line = line_of(&r, &len);
  CHECK(len > 0 && line[len - 1] == '\n' && !memchr(line, '\n', len - 1)); /* one line */
  tkb__result back;
  CHECK_OK(tkb__entry_line_read(line, len, &back));
  CHECK(back.bd && back.bd->experiments == 2 && back.bd->n_evaluation_times == r.bd->n_evaluation_times);
  CHECK(back.bd->median_evaluation_time_ms == r.bd->median_evaluation_time_ms);
  CHECK(back.bd->n_warnings == r.bd->n_warnings && back.bd->n_metadata == r.bd->n_metadata);
  for (int i = 0; i < back.bd->n_warnings; i++)
    CHECK(!strcmp(back.bd->warnings[i].kind, r.bd->warnings[i].kind));
  CHECK(!strcmp(back.name, "toy_256_forward_c") && !strcmp(back.tags, "cpu,toy") && back.family_index == 4);
  CHECK(back.counts.items == 256 && back.counts.bytes == 2048 && back.counts.flops == 0);
  char *again = line_of(&back, &len2);
  CHECK(len == len2 && !memcmp(line, again, len));
  free(again);
  tkb__result_clear(&back);
  CHECK(back.name == NULL && back.bd == NULL);
  free(line);
  tkb__result_clear(&r);

  /* a failed entry: status, message and identity */
  tkb__result f = {.name = "bad_forward_c", .op = "bad", .spec = "bad", .impl = "c", .tags = "",
                   .status = TKB_ERR_CRASHED, .error = tkb__strdup("SIGSEGV in forward of bad_forward_c")};
  line = line_of(&f, &len);
  CHECK_OK(tkb__entry_line_read(line, len, &back));
  CHECK(!back.bd && back.status == TKB_ERR_CRASHED && !strcmp(back.error, f.error));
  again = line_of(&back, &len2);
  CHECK(len == len2 && !memcmp(line, again, len));
  free(line);
  free(again);
  tkb__result_clear(&back);
  tkb__result_clear(&f);
}

static void bad_line(const char *text, const char *needle) {
  tkb__result r;
  tkb_status st = tkb__entry_line_read(text, strlen(text), &r);
  CHECK_MSG(st == TKB_ERR_INVALID_ARGUMENT && strstr(tkb_last_error(), needle),
            "%s -> %s", text, tkb_last_error());
}

static void test_read_errors(void) {
  bad_line("not json", "is not JSON");
  bad_line("{\"benchmarks\": []}", "holds no rows");
  bad_line("{\"benchmarks\": [{\"run_name\": \"x\", \"family_index\": 0}]}", "entry \"x\" of the results: \"tkbench\" is not an object");
  bad_line("{\"benchmarks\": [{\"run_name\": \"x\", \"family_index\": -1, \"tkbench\": {}}]}",
           "\"family_index\" is not an integer from 0");
  bad_line("{\"benchmarks\": [{\"run_name\": \"x\", \"family_index\": 0, \"tkbench\": {\"op\": \"o\", "
           "\"spec\": \"s\", \"impl\": \"i\", \"mode\": \"sideways\", \"tags\": []}}]}",
           "\"mode\" is not a mode");
  /* statistics that do not match the experiments */
  tkb__result r;
  real_result(&r);
  size_t len;
  char *line = line_of(&r, &len);
  cJSON *doc = cJSON_ParseWithLength(line, len);
  cJSON *t = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "benchmarks"), 0), "tkbench");
  cJSON_ReplaceItemInObject(t, "experiments", cJSON_CreateNumber(5));
  char *text = cJSON_PrintUnformatted(doc);
  bad_line(text, "does not hold one median and one size per experiment");
  free(text);
  cJSON_Delete(doc);
  free(line);
  tkb__result_clear(&r);
}

static size_t lines_in(const char *path) {
  FILE *f = fopen(path, "r");
  size_t n = 0;
  for (int c; f && (c = fgetc(f)) != EOF;) n += c == '\n';
  if (f) fclose(f);
  return n;
}

static void test_journal(void) {
  const char *out = path_in("run.json");
  char *jpath = tkb__journal_path(out);
  CHECK(jpath && !strcmp(jpath + strlen(jpath) - 14, ".partial.jsonl"));
  tkb__report_ctx ctx = {.executable = "tkbench", .device = "cpu", .device_description = "d",
                         .method = "wallclock", .iterations = 3, .experiments = 2, .stop = "fixed"};
  snprintf(ctx.date, sizeof ctx.date, "2025-01-01T00:00:00+00:00");
  tkb__journal j;
  CHECK_OK(tkb__journal_create(&j, out, NULL, &ctx, NULL));
  CHECK(lines_in(jpath) == 1);
  /* a second run cannot take it: while the first holds it, it says so (not --resume) */
  tkb__journal j2;
  CHECK(tkb__journal_create(&j2, out, NULL, &ctx, NULL) == TKB_ERR_IO &&
        strstr(tkb_last_error(), "is in use: another tkbench run is writing") &&
        !strstr(tkb_last_error(), "--resume"));
  tkb__result r;
  real_result(&r);
  CHECK_OK(tkb__journal_append(&j, &r, 2));
  r.family_index = 5;
  r.name = "toy_256_forward_d";
  CHECK_OK(tkb__journal_append(&j, &r, 2));
  tkb__journal_close(&j);
  CHECK(lines_in(jpath) == 3);
  /* once the run is gone, --resume is what continues it */
  CHECK(tkb__journal_create(&j2, out, NULL, &ctx, NULL) == TKB_ERR_IO && strstr(tkb_last_error(), "--resume"));
  tkb__journal_contents c;
  CHECK_OK(tkb__journal_load(jpath, &c));
  CHECK(c.n == 2 && !c.cut && cJSON_IsObject(c.context));
  CHECK(c.n == 2 && !strcmp(c.results[1].name, "toy_256_forward_d") && c.results[1].family_index == 5);
  struct stat sb;
  stat(jpath, &sb);
  CHECK(c.valid_len == (size_t)sb.st_size);
  tkb__journal_contents_free(&c);
  /* a line cut off by a kill: left out, and cut away when the run goes on */
  FILE *f = fopen(jpath, "a");
  fputs("{\"benchmarks\": [{\"name\"", f);
  fclose(f);
  CHECK_OK(tkb__journal_load(jpath, &c));
  CHECK(c.n == 2 && c.cut && c.valid_len == (size_t)sb.st_size);
  CHECK_OK(tkb__journal_reopen(&j, out, c.valid_len, c.settings_id));
  tkb__journal_contents_free(&c);
  CHECK_OK(tkb__journal_append(&j, &r, 2));
  r.name = "toy_256_forward_e";
  CHECK_OK(tkb__journal_append(&j, &r, 2));
  tkb__journal_close(&j);
  /* an entry's second line is left out, and said */
  CHECK_OK(tkb__journal_load(jpath, &c));
  CHECK(c.n == 3 && !c.cut && c.n_skipped == 1 && !strcmp(c.results[2].name, "toy_256_forward_e"));
  CHECK(c.n_skipped == 1 && strstr(c.skipped[0], "line 4 holds entry toy_256_forward_d again (line 3 has it): left out"));
  tkb__journal_contents_free(&c);
  /* lines a journal cannot use are left out and named, never fatal past line 1: not JSON,
   * not an entry's, another journal's first line, a line of a run with other settings */
  const char *bad = "{\"tkbench_journal\": 1, \"context\": {}, \"settings_id\": \"a\"}\n"
                    "{\"settings_id\": \"a\", \"benchmarks\": 7}\n\nstale\n"
                    "{\"tkbench_journal\": 1, \"context\": {}, \"settings_id\": \"b\"}\n"
                    "{\"settings_id\": \"b\", \"benchmarks\": []}\n";
  CHECK_OK(tkb__journal_parse(bad, strlen(bad), "j", &c));
  CHECK(c.n == 0 && c.n_skipped == 4 && !strcmp(c.settings_id, "a"));
  CHECK(c.n_skipped == 4 && strstr(c.skipped[0], "journal \"j\", line 2 is not an entry's line"));
  CHECK(c.n_skipped == 4 && strstr(c.skipped[1], "line 4 is not JSON (an entry it held runs again): left out"));
  CHECK(c.n_skipped == 4 && strstr(c.skipped[2], "line 5 is another journal's first line"));
  CHECK(c.n_skipped == 4 && strstr(c.skipped[3], "line 6 is from a run with other settings (its settings_id b, the journal's a; its entry runs again)"));
  tkb__journal_contents_free(&c);
  const char *notj = "{\"benchmarks\": []}\n";
  CHECK(tkb__journal_parse(notj, strlen(notj), "j", &c) == TKB_ERR_INVALID_ARGUMENT &&
        strstr(tkb_last_error(), "not a tkbench journal's first line"));
  CHECK(tkb__journal_parse("", 0, "j", &c) == TKB_ERR_INVALID_ARGUMENT && strstr(tkb_last_error(), "is empty"));
  /* a FIFO is not read (it would block) */
  mkfifo(path_in("fifo"), 0600);
  CHECK(tkb__journal_load(path_in("fifo"), &c) == TKB_ERR_IO && strstr(tkb_last_error(), "not a regular file"));
  unlink(jpath);
  free(jpath);
  tkb__result_clear(&r);
}

/* ---- workers ---- */
/* SIGILL: no sanitizer turns it into a report of its own */
static void crash(void *arg) {
  (void)arg;
  tkb__worker_phase(7, "forward", 0);
  raise(SIGILL);
}
static void hang(void *arg) {
  (void)arg;
  tkb__worker_phase(3, "vjp", 0.5);
  for (;;) pause();
}
static void leave(void *arg) {
  tkb__worker_send("hello", 5);
  _exit(*(int *)arg);
}
static char said[64];
static void on_message(void *user, const char *text, size_t len) {
  (void)user;
  snprintf(said, sizeof said, "%.*s", (int)len, text);
}

static void test_workers(void) {
  tkb__worker_end end;
  char why[512];
  tkb__worker_job job = {.body = crash};
  CHECK_OK(tkb__worker_run(&job, &end));
  CHECK(end.how == TKB__WORKER_KILLED && end.code == SIGILL && end.entry == 7 && !strcmp(end.phase, "forward"));
  tkb__worker_describe(&end, "e_forward_c", 0, why, sizeof why);
  CHECK_MSG(!strncmp(why, "SIGILL in forward of e_forward_c (Illegal instruction)", 53), "%s", why);

  int code = 3;
  job = (tkb__worker_job){.body = leave, .arg = &code, .on_message = on_message};
  CHECK_OK(tkb__worker_run(&job, &end));
  CHECK(end.how == TKB__WORKER_EXITED && end.code == 3 && !strcmp(said, "hello"));
  code = 0;
  CHECK_OK(tkb__worker_run(&job, &end));
  CHECK(end.how == TKB__WORKER_FINISHED);

  /* the time limit counts the entry's time before the phase (0.5 s here) */
  job = (tkb__worker_job){.body = hang, .timeout_s = 0.8};
  const int64_t t0 = tkb__now_ns();
  CHECK_OK(tkb__worker_run(&job, &end));
  const double took = (double)(tkb__now_ns() - t0) / 1e9;
  CHECK_MSG(end.how == TKB__WORKER_TIMED_OUT && end.entry == 3 && took < 5, "how %d after %.2f s",
            (int)end.how, took);
  tkb__worker_describe(&end, "e_vjp_c", 0.8, why, sizeof why);
  CHECK_MSG(strstr(why, "timed out in vjp of e_vjp_c") && strstr(why, "--timeout 0.8"), "%s", why);

  static volatile sig_atomic_t stop = 1;
  job = (tkb__worker_job){.body = hang, .stop = &stop};
  CHECK_OK(tkb__worker_run(&job, &end));
  CHECK(end.how == TKB__WORKER_STOPPED);
  CHECK(!tkb__in_worker() && !tkb__worker_send("x", 1)); /* in process: nothing to send */
}

/* ---- text ---- */
static void test_utf8(void) {
  tkb__textbuf b;
  CHECK_OK(tkb__textbuf_open(&b));
  jw w = {.f = b.f, .compact = true};
  jw_begin_object(&w, NULL);
  jw_string(&w, "ok", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  jw_string(&w, "bad", "a\xff" "b\xc3" "c\xed\xa0\x80" "d\xf4\x90\x80\x80" "e\xc0\xaf");
  jw_end_object(&w);
  jw_finish(&w);
  CHECK_OK(tkb__textbuf_close(&b));
  cJSON *doc = cJSON_ParseWithLength(b.text, b.len);
  CHECK(doc != NULL);
  CHECK(b.text[b.len - 1] == '\n' && memchr(b.text, '\n', b.len - 1) == NULL);
  const char *ok = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "ok"));
  CHECK(ok && !strcmp(ok, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  const char *bad = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "bad"));
  CHECK_MSG(bad && !strcmp(bad, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "e\xef\xbf\xbd\xef\xbf\xbd"),
            "%s", bad ? bad : "(null)");
  CHECK(w.replaced == 11);
  cJSON_Delete(doc);
  tkb__textbuf_free(&b);
}

static void regex_ok(const char *p) { CHECK_MSG(tkb__regex_check(p, "filter") == TKB_OK, "%s: %s", p, tkb_last_error()); }
static void regex_bad(const char *p, const char *needle) {
  CHECK_MSG(tkb__regex_check(p, "filter") == TKB_ERR_INVALID_ARGUMENT && strstr(tkb_last_error(), needle),
            "%s: %s", p, tkb_last_error());
}

static void test_regex_check(void) {
  regex_ok("^cpu_96x96x64_(forward|vjp)_[a-z]+$");
  regex_ok("a+b*c?(d{2,5})+");
  regex_ok("[+*?{]+x");       /* in brackets, a repetition sign is a character */
  regex_ok("\\++\\**");       /* escaped */
  regex_ok("[]+]+");          /* ']' first in a bracket is a member */
  regex_ok("[[:alpha:]+]*");
  regex_ok("a{,}");           /* not a bound: regcomp decides */
  regex_ok("((((x+)+)+)+)+"); /* 32 copies */
  regex_bad("x++", "stacks repetitions ('+' right after '+', at character 3)");
  regex_bad("x*{2}", "stacks repetitions");
  regex_bad("a{256}", "a count above 255");
  regex_bad("6{,32676}", "a count above 255"); /* {,n} is {0,n} to glibc (a fuzzer's find: 5 GB) */
  regex_ok("a{,9}");
  regex_bad("(a{40}){40}", "copy one part 1600 times");
  regex_bad("((((((((((x+)+)+)+)+)+)+)+)+)+)+", "1024 times");
  char long_one[600];
  memset(long_one, 'a', sizeof long_one - 1);
  long_one[sizeof long_one - 1] = '\0';
  regex_bad(long_one, "is 599 characters long; at most 512");
  char deep[80] = "";
  for (int i = 0; i < 33; i++) strcat(deep, "(");
  regex_bad(deep, "more than 32 deep");
}

static void test_memory_limit(void) {
  tkb__mem_limit m;
  tkb__memory_limit(&m);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  CHECK(m.bytes > 0 && m.bytes <= (size_t)pages * (size_t)page && *m.source);
  /* a lower RLIMIT_AS is named (in a child: this process keeps its limit) */
#if !defined(__SANITIZE_ADDRESS__)
  int fds[2];
  if (pipe(fds) == 0) {
    pid_t pid = fork();
    if (pid == 0) {
      struct rlimit rl = {(rlim_t)1 << 34, (rlim_t)1 << 34};
      setrlimit(RLIMIT_AS, &rl);
      tkb__memory_limit(&m);
      dprintf(fds[1], "%zu %s", m.bytes, m.source);
      _exit(0);
    }
    close(fds[1]);
    char buf[2000] = "";
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    waitpid(pid, NULL, 0);
    if ((size_t)pages * (size_t)page > ((size_t)1 << 34))
      CHECK_MSG(strstr(buf, "17179869184 the address-space limit RLIMIT_AS"), "%s", buf);
  }
#endif
}

static void test_small_errors(void) {
  tkb_array *a;
  tkb_spec s = TKB_SPEC(TKB_FLOAT32, 4);
  CHECK(tkb_array_wrap(&s, NULL, &a) == TKB_ERR_INVALID_ARGUMENT &&
        strstr(tkb_last_error(), "data is NULL but spec float32[4] holds 16 bytes"));
  tkb_spec empty = TKB_SPEC(TKB_FLOAT32, 0);
  CHECK_OK(tkb_array_wrap(&empty, NULL, &a)); /* nothing to point at */
  tkb_array_free(a);
  tkb_value args[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 8))};
  tkb_kwarg unnamed[] = {{NULL, TKB_FLOAT(2)}};
  tkb_std_fn *f;
  tkb_arrays *arrs;
  tkb_std_opts no_init = {.no_init = true};
  CHECK(tkb_standardize_function(&toy_fn, args, 1, unnamed, 1, &no_init, &f, &arrs) == TKB_ERR_INVALID_ARGUMENT &&
        strstr(tkb_last_error(), "keyword argument 0 of axpy() has no name (NULL)"));
  tkb_kwarg null_string[] = {{"tag", TKB_STRING(NULL)}};
  CHECK(tkb_standardize_function(&toy_fn, args, 1, null_string, 1, &no_init, &f, &arrs) == TKB_ERR_INVALID_ARGUMENT &&
        strstr(tkb_last_error(), "argument 'tag' of axpy() is TKB_STRING(NULL)"));
  tkb_device *dev;
  CHECK(tkb_device_get("", &dev) == TKB_ERR_NOT_FOUND && strstr(tkb_last_error(), "device \"\" is not a device name"));
  CHECK_OK(tkb_device_get(NULL, &dev));
  CHECK(tkb__device_name_check("cuda:x") == TKB_ERR_NOT_FOUND && tkb__device_name_check("opencl:1") == TKB_OK);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/tkb_journal_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  tkb_set_num_threads(1);
  test_round_trip();
  test_read_errors();
  test_journal();
  test_workers();
  test_utf8();
  test_regex_check();
  test_memory_limit();
  test_small_errors();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) return 1;
  return CHECK_DONE();
}
