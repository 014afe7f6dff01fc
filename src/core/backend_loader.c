/*
 * backend_loader.c - finds, loads and opens the accelerator backends, which are plugins
 * (libtkbench-opencl.so, libtkbench-cuda.so), so that libtkbench and tkbench run on
 * machines without those drivers and say why a device is missing.
 *
 * Where a plugin is looked for, in order: every folder of TKB_PLUGIN_PATH (colon
 * separated; an entry naming the .so itself is taken as is); then for the folder of the
 * object holding libtkbench's code (dladdr: libtkbench.so, or the executable it is
 * linked into) and the folder of /proc/self/exe, that folder itself (a build tree), its
 * "tkbench" subfolder (an installed <libdir>/libtkbench.so finds <libdir>/tkbench/) and
 * the plugin folder as seen from the install's bin folder (an installed bin/tkbench finds
 * ../lib/tkbench/); then the plugin folder the build was configured to install into (a
 * program linking libtkbench.a, wherever it lives); last the dynamic linker's own search
 * (LD_LIBRARY_PATH, ldconfig). The install's layout enters as paths relative to the
 * binaries, so an installed tree still works after it is moved. A plugin is loaded once
 * and stays loaded; its devices are opened on first use and live as long as the
 * process, like the cpu device.
 */
#define _GNU_SOURCE /* dladdr, realpath */
#include "internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The install layout (CMakeLists.txt writes them from GNUInstallDirs): the plugins'
 * folder below <libdir>, the same folder relative to <bindir>, and its absolute path. */
#include "tkb_install_paths.h"
#ifndef TKB_PLUGIN_SUBDIR
#define TKB_PLUGIN_SUBDIR "tkbench"
#endif
#ifndef TKB_PLUGIN_FROM_BINDIR
#define TKB_PLUGIN_FROM_BINDIR "../lib/" TKB_PLUGIN_SUBDIR
#endif

#define MAX_DEVICES 64

const tkb_plugin_host tkb__plugin_host = {
    .abi = TKB_BACKEND_ABI,
    .set_error_v = tkb__set_error_v,
    .now_ns = tkb__now_ns,
    .fill_plan = tkb__fill_plan,
};

typedef struct plugin {
  const char *kind;      /* "opencl" */
  const char *file;      /* "libtkbench-opencl.so" */
  const char *build_hint;/* how to get the plugin built */
  const char *dep_lib;   /* the driver library it links, as dlerror names it */
  const char *dep_hint;  /* how to get that library */
  bool tried;
  const tkb_backend *backend;
  tkb_status status;
  char why[900];         /* the reason when loading failed */
  char path[PATH_MAX];   /* where it was loaded from */
  tkb_device *devices[MAX_DEVICES];
} plugin;

static plugin plugins[] = {
    {.kind = "opencl",
     .file = "libtkbench-opencl.so",
     .build_hint = "this build of tkbench has no OpenCL backend: install ocl-icd-opencl-dev and "
                   "opencl-headers (Debian) and rebuild, or set TKB_PLUGIN_PATH to the folder "
                   "holding libtkbench-opencl.so",
     .dep_lib = "libOpenCL",
     .dep_hint = "the OpenCL ICD loader libOpenCL.so.1 is missing: install ocl-icd-libopencl1 "
                 "and an OpenCL driver (pocl-opencl-icd runs on the CPU)"},
    {.kind = "cuda",
     .file = "libtkbench-cuda.so",
     .build_hint = "this build of tkbench has no CUDA backend: install the CUDA toolkit and "
                   "rebuild, or set TKB_PLUGIN_PATH to the folder holding libtkbench-cuda.so",
     .dep_lib = "libcuda",
     .dep_hint = "no CUDA driver found (libcuda.so.1): install the NVIDIA driver"},
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* snprintf that may truncate (paths and dlerror texts are long; a cut message is fine) */
static int put(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int put(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
  return n;
}

static void dir_of(const char *path, char *dir, size_t cap) {
  put(dir, cap, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else put(dir, cap, ".");
}

/* Appends "dir" (and with install_layout the plugin folder seen from dir as a libdir
 * and as a bindir) to the candidate list. */
static int add_dirs(char (*cands)[PATH_MAX], int n, int cap, const char *dir, bool install_layout) {
  if (n < cap) put(cands[n++], PATH_MAX, "%s", dir);
  if (install_layout && n < cap) put(cands[n++], PATH_MAX, "%s/%s", dir, TKB_PLUGIN_SUBDIR);
  if (install_layout && n < cap) put(cands[n++], PATH_MAX, "%s/%s", dir, TKB_PLUGIN_FROM_BINDIR);
  return n;
}

/* Tries to load p from the candidates; fills p->backend or p->why. */
static void load(plugin *p) {
  enum { CAP = 24 };
  static char cands[CAP][PATH_MAX]; /* under the loader lock; too big for a thread stack */
  int n = 0;
  const char *env = getenv("TKB_PLUGIN_PATH");
  if (env && *env) {
    char *copy = tkb__strdup(env), *save = NULL;
    for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t; t = strtok_r(NULL, ":", &save))
      n = add_dirs(cands, n, CAP, t, false);
    free(copy);
  }
  Dl_info info;
  char dir[PATH_MAX];
  if (dladdr(&tkb__plugin_host, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
    char real[PATH_MAX];
    dir_of(realpath(info.dli_fname, real) ? real : info.dli_fname, dir, sizeof dir);
    n = add_dirs(cands, n, CAP, dir, true);
  }
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = '\0';
    dir_of(exe, dir, sizeof dir);
    n = add_dirs(cands, n, CAP, dir, true);
  }
#ifdef TKB_PLUGIN_INSTALL_DIR
  n = add_dirs(cands, n, CAP, TKB_PLUGIN_INSTALL_DIR, false);
#endif

  void *h = NULL;
  for (int i = 0; i < n && !h; i++) {
    char path[PATH_MAX + 64];
    size_t cl = strlen(cands[i]);
    if (cl > 3 && strcmp(cands[i] + cl - 3, ".so") == 0) put(path, sizeof path, "%s", cands[i]);
    else put(path, sizeof path, "%s/%s", cands[i], p->file);
    if (access(path, F_OK) != 0) continue;
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      if (e && strstr(e, p->dep_lib))
        put(p->why, sizeof p->why, "%s (loading %s: %s)", p->dep_hint, path, e);
      else
        put(p->why, sizeof p->why, "%s could not be loaded: %s", path, e ? e : "unknown error");
      p->status = TKB_ERR_DEVICE;
      return;
    }
    put(p->path, sizeof p->path, "%s", path);
  }
  if (!h) { /* the dynamic linker's own search path */
    h = dlopen(p->file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      if (e && strstr(e, p->dep_lib)) {
        put(p->why, sizeof p->why, "%s (loading %s: %s)", p->dep_hint, p->file, e);
      } else {
        put(p->why, sizeof p->why, "%s (%s was not found in TKB_PLUGIN_PATH, next to libtkbench, "
            "in its plugin folder or on the library path)", p->build_hint, p->file);
      }
      p->status = TKB_ERR_DEVICE;
      return;
    }
    put(p->path, sizeof p->path, "%s", p->file);
  }
  tkb_plugin_entry_fn entry;
  *(void **)&entry = dlsym(h, TKB_PLUGIN_ENTRY_NAME);
  if (!entry) {
    put(p->why, sizeof p->why, "%s exports no %s: it is not a tkbench backend", p->path,
             TKB_PLUGIN_ENTRY_NAME);
    p->status = TKB_ERR_DEVICE;
    dlclose(h);
    return;
  }
  const tkb_backend *b = NULL;
  tkb__clear_error();
  tkb_status st = entry(TKB_BACKEND_ABI, &tkb__plugin_host, &b);
  if (st || !b) {
    if (*tkb_last_error())
      put(p->why, sizeof p->why, "%s refused to start: %s", p->path, tkb_last_error());
    else
      put(p->why, sizeof p->why, "%s refused to start: it was built for another version of "
          "libtkbench (backend ABI %d expected); rebuild it with this one", p->path,
          TKB_BACKEND_ABI);
    p->status = TKB_ERR_DEVICE;
    dlclose(h);
    return;
  }
  p->backend = b; /* never unloaded: devices and kernels point into it */
}

static tkb_status open_device(plugin *p, int index, const char *asked, tkb_device **out) {
  if (p->devices[index]) {
    *out = p->devices[index];
    return TKB_OK;
  }
  tkb_device *d = calloc(1, sizeof *d);
  if (!d) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory opening device %s", asked);
  d->backend = p->backend;
  d->ordinal = index;
  atomic_init(&d->bytes_in_use, 0);
  atomic_init(&d->peak_bytes, 0);
  tkb__clear_error();
  tkb_status st = p->backend->open(d, index);
  if (st) {
    free(d);
    char why[900];
    put(why, sizeof why, "%s", tkb_last_error());
    if (st == TKB_ERR_NOT_FOUND)
      return tkb_set_error(st, "device \"%s\" does not exist: %s", asked, why);
    return tkb_set_error(st, "device \"%s\" is not available: %s", asked, why);
  }
  p->devices[index] = d;
  *out = d;
  return TKB_OK;
}

tkb_status tkb__backend_device(const char *kind, int index, const char *asked, tkb_device **out) {
  plugin *p = NULL;
  for (size_t i = 0; i < TKB_ARRAY_LEN(plugins); i++)
    if (strcmp(plugins[i].kind, kind) == 0) p = &plugins[i];
  if (!p)
    return tkb_set_error(TKB_ERR_NOT_FOUND,
                         "device \"%s\" is not a device name; expected cpu, cuda:N or opencl:N", asked);
  if (index < 0 || index >= MAX_DEVICES)
    return tkb_set_error(TKB_ERR_NOT_FOUND, "device \"%s\" does not exist: tkbench opens %s:0 to "
                         "%s:%d", asked, kind, kind, MAX_DEVICES - 1);
  pthread_mutex_lock(&lock);
  if (!p->tried) {
    p->tried = true;
    load(p);
  }
  tkb_status st;
  if (!p->backend)
    st = tkb_set_error(p->status, "device \"%s\" is not available: %s", asked, p->why);
  else
    st = open_device(p, index, asked, out);
  pthread_mutex_unlock(&lock);
  return st;
}

tkb_status tkb__backend_count(const char *kind, int *n) {
  plugin *p = NULL;
  for (size_t i = 0; i < TKB_ARRAY_LEN(plugins); i++)
    if (strcmp(plugins[i].kind, kind) == 0) p = &plugins[i];
  if (!p)
    return tkb_set_error(TKB_ERR_NOT_FOUND, "device kind \"%s\" is not one of cpu, cuda and opencl", kind);
  pthread_mutex_lock(&lock);
  if (!p->tried) {
    p->tried = true;
    load(p);
  }
  tkb_status st;
  if (!p->backend) {
    st = tkb_set_error(p->status, "no %s device is available: %s", kind, p->why);
  } else if (!p->backend->count) {
    st = tkb_set_error(TKB_ERR_UNSUPPORTED, "the %s backend (%s) cannot count its devices", kind, p->path);
  } else {
    tkb__clear_error();
    st = p->backend->count(n);
    if (st) {
      char why[900];
      put(why, sizeof why, "%s", tkb_last_error());
      st = tkb_set_error(st, "no %s device is available: %s", kind, why);
    } else if (*n > MAX_DEVICES) {
      *n = MAX_DEVICES;
    }
  }
  pthread_mutex_unlock(&lock);
  return st;
}

const char *tkb__backend_opened(const char *kind) {
  const char *name = NULL;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < TKB_ARRAY_LEN(plugins) && !name; i++)
    if (strcmp(plugins[i].kind, kind) == 0)
      for (int d = 0; d < MAX_DEVICES && !name; d++)
        if (plugins[i].devices[d]) name = plugins[i].devices[d]->name;
  pthread_mutex_unlock(&lock);
  return name;
}

