/*
 * nvml.c - NVML through dlopen (nvml.h). The few entry points are declared by hand with
 * the types of NVML's ABI: nvmlReturn_t is an int, nvmlDevice_t an opaque pointer, the
 * enums ints (NVML_CLOCK_SM = 1, NVML_TEMPERATURE_GPU = 0).
 */
#define _GNU_SOURCE
#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret;
typedef void *nvml_dev;

struct tkb_nvml {
  void *lib;
  nvml_dev dev;
  bool ok;
  char why[400];
  nvml_ret (*shutdown)(void);
  nvml_ret (*clock)(nvml_dev, int, unsigned *);
  nvml_ret (*reasons)(nvml_dev, unsigned long long *);
  nvml_ret (*temperature)(nvml_dev, int, unsigned *);
  nvml_ret (*power)(nvml_dev, unsigned *);
};

static void *sym(void *lib, const char *a, const char *b) {
  void *p = dlsym(lib, a);
  return p || !b ? p : dlsym(lib, b);
}

tkb_nvml *tkb_nvml_open(const char *library, const char *pci_bus_id) {
  tkb_nvml *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  const char *file = library ? library : "libnvidia-ml.so.1";
  n->lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!n->lib) {
    const char *e = dlerror();
    snprintf(n->why, sizeof n->why, "NVML (%s) could not be loaded, so clocks, throttling, "
             "temperature and power are not recorded: %s", file, e ? e : "unknown error");
    return n;
  }
  /* ISO C has no object-to-function pointer cast: store dlsym's pointer through one */
  nvml_ret (*init)(void) = NULL;
  nvml_ret (*by_pci)(const char *, nvml_dev *) = NULL;
#define LOAD(fp, a, b) (*(void **)&(fp) = sym(n->lib, (a), (b)))
  LOAD(init, "nvmlInit_v2", "nvmlInit");
  LOAD(by_pci, "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
  LOAD(n->shutdown, "nvmlShutdown", NULL);
  LOAD(n->clock, "nvmlDeviceGetClockInfo", NULL);
  LOAD(n->reasons, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons");
  LOAD(n->temperature, "nvmlDeviceGetTemperature", NULL);
  LOAD(n->power, "nvmlDeviceGetPowerUsage", NULL);
#undef LOAD
  if (!init || !by_pci || !n->shutdown || !n->clock || !n->reasons || !n->temperature || !n->power) {
    snprintf(n->why, sizeof n->why, "%s lacks an NVML function tkbench reads (nvmlInit_v2, "
             "nvmlDeviceGetHandleByPciBusId_v2, nvmlDeviceGetClockInfo, "
             "nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetTemperature, "
             "nvmlDeviceGetPowerUsage): it is not NVML or too old", file);
    dlclose(n->lib);
    n->lib = NULL;
    return n;
  }
  nvml_ret r = init();
  if (r != 0) {
    snprintf(n->why, sizeof n->why, "nvmlInit failed (NVML error %d): the NVIDIA driver is not "
             "loaded, so clocks and throttling are not recorded", r);
    dlclose(n->lib);
    n->lib = NULL;
    return n;
  }
  r = by_pci(pci_bus_id ? pci_bus_id : "", &n->dev);
  if (r != 0) {
    snprintf(n->why, sizeof n->why, "NVML knows no GPU at PCI bus id \"%s\" (NVML error %d)",
             pci_bus_id ? pci_bus_id : "", r);
    n->shutdown();
    dlclose(n->lib);
    n->lib = NULL;
    return n;
  }
  n->ok = true;
  return n;
}

bool tkb_nvml_available(const tkb_nvml *n) { return n && n->ok; }
const char *tkb_nvml_why(const tkb_nvml *n) { return !n ? "NVML was not opened" : n->ok ? "" : n->why; }

tkb_nvml_sample tkb_nvml_read(tkb_nvml *n) {
  tkb_nvml_sample s = {0};
  if (!tkb_nvml_available(n)) return s;
  unsigned clock = 0, temp = 0, mw = 0;
  unsigned long long reasons = 0;
  s.valid = n->clock(n->dev, 1 /* NVML_CLOCK_SM */, &clock) == 0 &&
            n->reasons(n->dev, &reasons) == 0 &&
            n->temperature(n->dev, 0 /* NVML_TEMPERATURE_GPU */, &temp) == 0;
  /* power is not reported on every board; the rest is still worth having */
  s.power_w = n->power(n->dev, &mw) == 0 ? mw / 1000.0 : -1.0;
  s.sm_clock_mhz = clock;
  s.temperature_c = temp;
  s.reasons = reasons;
  return s;
}

bool tkb_nvml_throttled(const tkb_nvml_sample *s) {
  return s->valid && (s->reasons & TKB_NVML_THROTTLE_MASK) != 0;
}

void tkb_nvml_reason_names(uint64_t reasons, char *buf, size_t cap) {
  static const struct { uint64_t bit; const char *name; } names[] = {
      {TKB_NVML_REASON_GPU_IDLE, "gpu_idle"},         {TKB_NVML_REASON_APP_CLOCKS, "applications_clocks"},
      {TKB_NVML_REASON_SW_POWER_CAP, "sw_power_cap"}, {TKB_NVML_REASON_HW_SLOWDOWN, "hw_slowdown"},
      {TKB_NVML_REASON_SYNC_BOOST, "sync_boost"},     {TKB_NVML_REASON_SW_THERMAL, "sw_thermal"},
      {TKB_NVML_REASON_HW_THERMAL, "hw_thermal"},     {TKB_NVML_REASON_HW_POWER_BRAKE, "hw_power_brake"}};
  size_t len = 0;
  if (cap == 0) return;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if ((reasons & names[i].bit) && len < cap)
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? "," : "", names[i].name);
  uint64_t other = reasons & ~(uint64_t)0xff;
  if (other && len < cap)
    len += (size_t)snprintf(buf + len, cap - len, "%sother(0x%llx)", len ? "," : "",
                            (unsigned long long)other);
  if (len == 0) snprintf(buf, cap, "none");
}

void tkb_nvml_close(tkb_nvml *n) {
  if (!n) return;
  if (n->lib) {
    n->shutdown();
    dlclose(n->lib);
  }
  free(n);
}
