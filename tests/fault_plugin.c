/*
 * fault_plugin.c - a plugin (`tkbench run --load`) whose entries do what a real suite's
 * entries sometimes do, one fault each, for the tests of isolation, timeouts, signals
 * and the journal. Every entry is op "fault", impl "c", tag "fault", mode forward, on a
 * float32[256] input, with a healthy "reference" impl of the same spec after it (for
 * `check`), and for fault_ok_first, fault_crash, fault_hang and fault_ok_last an "ocl"
 * impl on the opencl device kind too (an isolated run on a device shares one worker among
 * its entries); they register in this order:
 *
 *   fault_ok_first    a healthy entry
 *   fault_crash       forward dereferences NULL (SIGSEGV)
 *   fault_abort       forward calls abort() (SIGABRT)
 *   fault_prepare     prepare dereferences NULL (SIGSEGV in prepare)
 *   fault_exit        forward calls exit(3)
 *   fault_garbage     forward prints to stdout on every call
 *   fault_nomem       forward asks malloc for 2^50 bytes and reports it failed
 *   fault_huge        an input of 2^40 float32 (4 TiB): refused before allocation
 *   fault_hang        forward never returns
 *   fault_slow        forward sleeps 150 ms per call (signal tests stop it midway)
 *   fault_eat         forward touches memory until FAULT_EAT_MIB (default 64) is held
 *   fault_ok_last     a healthy entry
 *
 * and then entries tagged "hostile" instead of "fault" (so runs of --tag fault never meet
 * them), which attack what isolation rests on rather than fail:
 *
 *   fault_helper      forward starts a helper process (fork) that sleeps 60 s and
 *                     returns, leaving it running
 *   fault_daemon      forward starts a daemon (fork, setsid, fork again) that sleeps 60 s
 *   fault_hang_helper forward starts a helper as fault_helper does, then never returns
 *   fault_stale_fd    forward writes garbage to every descriptor from 3 to 255 (a write
 *                     through a stale descriptor), then returns as the healthy entry does
 *   fault_exit0       forward calls exit(0)
 *
 * FAULT_INIT in the environment makes tkb_plugin_init misbehave before it registers
 * anything: "exit0" (exit(0)), "hang" (never returns), "print" (writes to stdout, then
 * registers as usual) or "crash" (dereferences NULL).
 */
#include <tkbench.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

typedef enum fault {
  OK, CRASH, ABORT, PREPARE, EXIT, GARBAGE, NOMEM, HUGE, HANG, SLOW, EAT,
  HELPER, DAEMON, HANG_HELPER, STALE_FD, EXIT0
} fault;

/* The fault an entry's first static argument names. */
static fault which(const tkb_args *a) { return (fault)tkb_args_int(a, "fault"); }

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A helper process that sleeps 60 s, holding whatever the entry's process holds (its pipe
 * to tkbench included); with daemon, one that leaves the entry's session first. Started
 * once per process: the entry is called several times. */
static void start_helper(bool daemon) {
  static bool started;
  if (started) return;
  started = true;
  const pid_t pid = fork();
  if (pid != 0) {
    if (daemon && pid > 0) waitpid(pid, NULL, 0); /* the middle process exits at once */
    return;
  }
  if (daemon) {
    setsid();
    if (fork() != 0) _exit(0);
  }
  sleep_ms(60000);
  _exit(0);
}

static tkb_status fault_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)state;
  const tkb_array *x = tkb_args_array(a, "x");
  float *y = outputs[0]->data;
  switch (which(a)) {
    case CRASH: {
      volatile int *null = NULL;
      *null = 1;
      break;
    }
    case ABORT: abort();
    case EXIT: exit(3);
    case GARBAGE: printf("garbage from an entry \x01\xff{\"not\": json\n"); fflush(stdout); break;
    case NOMEM: {
      void *p = malloc((size_t)1 << 50);
      if (!p) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "fault_nomem: malloc of 2^50 bytes failed");
      free(p);
      break;
    }
    case HANG:
      for (;;) sleep_ms(1000);
    case SLOW: sleep_ms(150); break;
    case EAT: {
      const char *mib = getenv("FAULT_EAT_MIB");
      size_t want = (size_t)(mib ? atol(mib) : 64) << 20;
      for (size_t held = 0; held < want; held += (size_t)64 << 20) {
        char *p = malloc((size_t)64 << 20);
        if (!p) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "fault_eat: malloc failed at %zu MiB", held >> 20);
        memset(p, 1, (size_t)64 << 20); /* never freed: the process holds it */
      }
      break;
    }
    case HELPER: start_helper(false); break;
    case DAEMON: start_helper(true); break;
    case HANG_HELPER:
      start_helper(false);
      for (;;) sleep_ms(1000);
    case STALE_FD: {
      /* a descriptor inherited from whoever started tkbench may be a pipe nobody reads:
       * the write is the fault here, not the SIGPIPE it would bring */
      struct sigaction ign = {.sa_handler = SIG_IGN}, old;
      sigemptyset(&ign.sa_mask);
      sigaction(SIGPIPE, &ign, &old);
      for (int fd = 3; fd < 256; fd++)
        if (write(fd, "stale\n{not json", 15) < 0) { /* most are not open: that is the point */ }
      sigaction(SIGPIPE, &old, NULL);
      break;
    }
    case EXIT0: exit(0);
    default: break;
  }
  /* on a device, data is no host address: the output is filled there */
  if (strcmp(tkb_device_name(x->device), "cpu") != 0) {
    const tkb_init zero = TKB_INIT_CONSTANT_(0);
    return tkb_fill(outputs[0], &zero, 0, 0);
  }
  const float *xp = x->data;
  for (int64_t i = 0; i < x->numel; i++) y[i] = xp[i];
  return TKB_OK;
}

static tkb_status fault_prepare(const tkb_args *a, void **state) {
  *state = NULL;
  if (which(a) == PREPARE) {
    volatile int *null = NULL;
    *null = 2;
  }
  return TKB_OK;
}

static tkb_status fault_infer(const tkb_args *a, tkb_shapes *shapes) {
  shapes->n_outputs = 1;
  shapes->outputs[0] = *tkb_args_spec(a, "x");
  shapes->output_names[0] = "y";
  return TKB_OK;
}

static const tkb_param params[] = {{.name = "x", .kind = TKB_KIND_ARRAY},
                                   {.name = "fault", .kind = TKB_KIND_INT}};

static const tkb_fn fault_fn = {.name = "fault", .params = params, .n_params = 2,
                                .infer = fault_infer, .prepare = fault_prepare,
                                .forward = fault_forward};

static const char *const names[] = {"fault_ok_first", "fault_crash", "fault_abort", "fault_prepare",
                                    "fault_exit", "fault_garbage", "fault_nomem", "fault_huge",
                                    "fault_hang", "fault_slow", "fault_eat", "fault_ok_last",
                                    "fault_helper", "fault_daemon", "fault_hang_helper",
                                    "fault_stale_fd", "fault_exit0"};
static const fault faults[] = {OK, CRASH, ABORT, PREPARE, EXIT, GARBAGE, NOMEM, HUGE, HANG, SLOW, EAT, OK,
                               HELPER, DAEMON, HANG_HELPER, STALE_FD, EXIT0};
#define N_ENTRIES (int)(sizeof faults / sizeof faults[0])
static tkb_value args[N_ENTRIES][2];

static tkb_value healthy[N_ENTRIES][2];

/* FAULT_INIT's misbehaviour, before anything is registered. */
static void init_fault(void) {
  const char *f = getenv("FAULT_INIT");
  if (!f) return;
  if (!strcmp(f, "exit0")) exit(0);
  if (!strcmp(f, "hang"))
    for (;;) sleep_ms(1000);
  if (!strcmp(f, "print")) {
    printf("garbage from a plugin's init {\"not\": json\n");
    fflush(stdout);
  }
  if (!strcmp(f, "crash")) {
    volatile int *null = NULL;
    *null = 3;
  }
}

tkb_status tkb_plugin_init(void) {
  init_fault();
  for (int k = 0; k < N_ENTRIES; k++) {
    tkb_spec spec = faults[k] == HUGE ? (tkb_spec)TKB_SPEC_INIT(TKB_FLOAT32, (int64_t)1 << 40)
                                      : (tkb_spec)TKB_SPEC_INIT(TKB_FLOAT32, 256);
    args[k][0] = healthy[k][0] = TKB_ABSTRACT(spec);
    args[k][1] = TKB_INT(faults[k]);
    healthy[k][1] = TKB_INT(OK);
    for (int impl = 0; impl < 2; impl++) {
      tkb_benchmark_def def = {.op = "fault", .name = names[k], .impl_name = impl ? "reference" : "c",
                               .fn = &fault_fn, .args = impl ? healthy[k] : args[k], .n_args = 2,
                               .mode = TKB_MODE_FORWARD, .tags = k < 12 ? "fault" : "hostile",
                               .device_kind = "cpu"};
      tkb_status st = tkb_register_benchmark(&def);
      if (st) return st;
    }
    if (faults[k] == OK || faults[k] == CRASH || faults[k] == HANG) {
      tkb_benchmark_def def = {.op = "fault", .name = names[k], .impl_name = "ocl", .fn = &fault_fn,
                               .args = args[k], .n_args = 2, .mode = TKB_MODE_FORWARD,
                               .tags = "fault", .device_kind = "opencl"};
      tkb_status st = tkb_register_benchmark(&def);
      if (st) return st;
    }
  }
  return TKB_OK;
}
