/* device_facts.c - what a run needs to know of its device before any entry runs (its
 * name, description and the method the options resolve to), found where opening the
 * device is safe: in this process, or for an isolated run on a device whose runtime does
 * not survive fork (CUDA, OpenCL), in a worker of its own whose answer comes back over
 * the worker's pipe. */
#include "bench.h"
#include "cli.h"

#include <string.h>

/* The facts, or the usage error's message (status nonzero). */
typedef struct answer {
  int status; /* 0 facts; TKB_EXIT_USAGE message */
  tkb__device_facts facts;
  char message[1024];
} answer;

typedef struct probe {
  const char *device;
  const tkb_bench_opts *opts;
  bool peaks;
  answer a;
  bool answered;
} probe;

static void find(const char *device, const tkb_bench_opts *o, bool peaks, answer *a) {
  tkb_device *dev;
  const tkb__method *m = NULL;
  if (tkb_device_get(device, &dev) != TKB_OK) {
    a->status = TKB_EXIT_USAGE;
    snprintf(a->message, sizeof a->message, "--device: %s", tkb_last_error());
  } else if (o && tkb__bench_check(dev, o, TKB__NAME_FLAGS, &m, NULL) != TKB_OK) {
    a->status = TKB_EXIT_USAGE;
    snprintf(a->message, sizeof a->message, "%s", tkb_last_error());
  } else {
    snprintf(a->facts.name, sizeof a->facts.name, "%s", tkb_device_name(dev));
    snprintf(a->facts.description, sizeof a->facts.description, "%s", tkb_device_description(dev));
    snprintf(a->facts.method, sizeof a->facts.method, "%s", m ? m->name : "");
    snprintf(a->facts.uuid, sizeof a->facts.uuid, "%s", tkb_device_uuid(dev));
    a->facts.have_peaks = peaks && tkb__peaks_measure(dev, &a->facts.peaks) == TKB_OK;
  }
}

static void probe_body(void *arg) {
  probe *p = arg;
  answer a = {0};
  find(p->device, p->opts, p->peaks, &a);
  tkb__worker_send((const char *)&a, sizeof a); /* the same program reads it */
}

static void probe_message(void *user, const char *text, size_t len) {
  probe *p = user;
  if (len != sizeof p->a) return;
  memcpy(&p->a, text, sizeof p->a);
  p->a.message[sizeof p->a.message - 1] = '\0';
  p->answered = true;
}

int tkb__device_find(const char *cmd, const char *device, const tkb_bench_opts *o, bool peaks,
                     bool isolate,
                      double timeout_s, tkb__device_facts *d) {
  char kind[32];
  tkb__device_kind(device, kind, sizeof kind);
  probe p = {.device = device, .opts = o, .peaks = peaks};
  if (!isolate || strcmp(kind, "cpu") == 0) {
    find(device, o, peaks, &p.a);
  } else {
    tkb__worker_job job = {.body = probe_body, .arg = &p, .on_message = probe_message,
                           .user = &p, .timeout_s = timeout_s};
    tkb__worker_end end;
    if (tkb__worker_run(&job, &end) != TKB_OK) return tkb__usage(cmd, "--device: %s", tkb_last_error());
    if (!p.answered) {
      char why[600];
      tkb__worker_describe(&end, device, timeout_s, why, sizeof why);
      fprintf(stderr, "%s %s: --device %s: opening the device failed: %s\n", tkb__prog, cmd,
              device, why);
      return TKB_EXIT_FAILED;
    }
  }
  if (p.a.status) return tkb__usage(cmd, "%s", p.a.message);
  *d = p.a.facts;
  return 0;
}
