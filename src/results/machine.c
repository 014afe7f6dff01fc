/*
 * machine.c - which machine a run measured: its fingerprint (host, CPU model and the
 * kernels' ISA path, cores, memory, kernel, the device's model, UUID and driver where
 * known) and the stable key its series are kept under.
 *
 * The key is "<host>-<8 hex digits>", the digits an FNV-1a hash of what does not change
 * when the machine is updated: the host name, the CPU model, the number of logical CPUs,
 * the device's kind (cpu, cuda, opencl) and, off the cpu, the device's model (the part of
 * its description before the parenthesis, which holds driver and runtime versions and
 * clocks). Left out on purpose: the kernel, drivers, tkbench's version and the memory
 * reported (all change with updates: a kernel reserves a little more or less memory),
 * the GPU's UUID (a replaced card of the same model continues the series; the UUID is
 * in the run) and the ISA path (a setting, TKB_CPU_ISA, kept in the run). A different
 * GPU model, CPU or core count is another machine. These change with updates and are
 * kept per run, so a step in a series can be told from a machine change. TKB_MACHINE
 * names the key outright (CI runners whose host names change every job).
 */
#include "history.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The device's model: its description up to " (" (cpu: none, the CPU model is kept). */
static void device_model(const char *device, const char *description, char *buf, size_t cap) {
  buf[0] = '\0';
  if (!description || !device || !strncmp(device, "cpu", 3)) return;
  const size_t len = strcspn(description, "(");
  snprintf(buf, cap, "%.*s", (int)len, description);
  for (size_t n = strlen(buf); n && buf[n - 1] == ' '; n--) buf[n - 1] = '\0';
}

/* The driver where the description names one: "driver 12.4" (cuda), else an OpenCL
 * platform's version, the first item in the parentheses. */
static void driver_of(const char *device, const char *description, char *buf, size_t cap) {
  buf[0] = '\0';
  if (!description || !device) return;
  const char *d = strstr(description, "driver ");
  if (d) {
    d += 7;
    snprintf(buf, cap, "%.*s", (int)strcspn(d, ",)"), d);
    return;
  }
  const char *open = strchr(description, '(');
  if (open && !strncmp(device, "opencl", 6)) snprintf(buf, cap, "%.*s", (int)strcspn(open + 1, ",)"), open + 1);
}

void tkb__machine_describe(tkb__machine *m, const char *device, const char *description, const char *uuid) {
  snprintf(m->device, sizeof m->device, "%s", device ? device : "cpu");
  device_model(m->device, description, m->device_name, sizeof m->device_name);
  if (!m->device_name[0]) snprintf(m->device_name, sizeof m->device_name, "%s", m->cpu_model);
  snprintf(m->device_uuid, sizeof m->device_uuid, "%s", uuid ? uuid : "");
  driver_of(m->device, description, m->driver, sizeof m->driver);
}

void tkb__machine_read(tkb__machine *m, const char *device, const char *description, const char *uuid) {
  *m = (tkb__machine){0};
  if (gethostname(m->host, sizeof m->host) != 0 || !m->host[0]) snprintf(m->host, sizeof m->host, "unknown");
  m->host[sizeof m->host - 1] = '\0';
  snprintf(m->cpu_model, sizeof m->cpu_model, "%s", tkb__cpu_model());
  snprintf(m->cpu_isa, sizeof m->cpu_isa, "%s", tkb_cpu_isa());
  struct utsname u;
  if (uname(&u) == 0) snprintf(m->kernel, sizeof m->kernel, "%.40s %.80s", u.sysname, u.release);
  m->cores = tkb__num_cpus();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  m->memory_bytes = pages > 0 && page > 0 ? (int64_t)pages * page : 0;
  tkb__machine_describe(m, device, description, uuid);
  tkb__machine_key(m);
}

static uint64_t fnv1a(uint64_t h, const char *s) {
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull; /* a separator: "ab"+"c" differs from "a"+"bc" */
}

void tkb__machine_key(tkb__machine *m) {
  const char *fixed = getenv("TKB_MACHINE");
  if (fixed && *fixed) {
    snprintf(m->key, sizeof m->key, "%s", fixed);
    return;
  }
  char kind[32], cores[16];
  snprintf(kind, sizeof kind, "%.*s", (int)strcspn(m->device, ":"), m->device);
  snprintf(cores, sizeof cores, "%d", m->cores);
  uint64_t h = 14695981039346656037ull;
  h = fnv1a(h, m->host);
  h = fnv1a(h, m->cpu_model);
  h = fnv1a(h, cores);
  h = fnv1a(h, kind);
  if (strcmp(kind, "cpu") != 0) h = fnv1a(h, m->device_name);
  /* the host's first label, in characters a key may hold */
  char host[64];
  size_t n = 0;
  for (const char *p = m->host; *p && *p != '.' && n + 1 < sizeof host; p++)
    host[n++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                               *p == '-' || *p == '_' ? *p : '_');
  host[n] = '\0';
  snprintf(m->key, sizeof m->key, "%s-%08x", n ? host : "machine", (unsigned)(h ^ (h >> 32)));
}
