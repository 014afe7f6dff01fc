/*
 * plugin.c - loading benchmark entries from a shared object (`tkbench run --load x.so`).
 * The object exports `tkb_status tkb_plugin_init(void)`, which registers its entries
 * with tkb_register_benchmark. Its tkbench symbols resolve against the host program
 * (the tkbench executable exports them, and so does libtkbench.so), so a plugin links
 * nothing and always talks to the host's one registry.
 */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *loaded[256]; /* handles whose init ran: loading one again is a no-op */
static size_t n_loaded;

static bool already_loaded(void *h) {
  for (size_t i = 0; i < n_loaded; i++)
    if (loaded[i] == h) return true;
  return false;
}

tkb_status tkb_load_plugin(const char *path) {
  tkb__clear_error();
  if (!path || !*path)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "plugin path is empty; give the path of a .so");
  struct stat st;
  if (stat(path, &st) != 0)
    return tkb_set_error(TKB_ERR_NOT_FOUND, "plugin \"%s\": no such file", path);
  if (S_ISDIR(st.st_mode))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "plugin \"%s\" is a directory, not a shared object",
                         path);
  /* dlopen of a FIFO or a device blocks or reads forever: only a file can be a library */
  if (!S_ISREG(st.st_mode))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "plugin \"%s\" is %s; a shared object is a "
                         "regular file", path, S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode)
                         ? "a character device" : S_ISBLK(st.st_mode) ? "a block device"
                         : S_ISSOCK(st.st_mode) ? "a socket" : "not a regular file");
  /* dlopen searches the library path for a bare name; the user means the file here. */
  char local[4096];
  if (!strchr(path, '/')) {
    snprintf(local, sizeof local, "./%s", path);
    path = local;
  }
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "plugin \"%s\" could not be loaded: %s", path,
                         why ? why : "unknown dlopen error");
  }
  void *sym = dlsym(h, TKB_PLUGIN_INIT_NAME);
  if (!sym) {
    dlclose(h);
    return tkb_set_error(TKB_ERR_NOT_FOUND,
                         "plugin \"%s\" exports no function %s; a plugin defines "
                         "`tkb_status %s(void)` (see examples/plugin.c)",
                         path, TKB_PLUGIN_INIT_NAME, TKB_PLUGIN_INIT_NAME);
  }
  pthread_mutex_lock(&lock);
  bool again = already_loaded(h);
  pthread_mutex_unlock(&lock);
  if (again) {
    dlclose(h); /* drops the reference this call added */
    return TKB_OK;
  }
  tkb_plugin_init_fn init;
  memcpy(&init, &sym, sizeof init); /* ISO C has no object-to-function pointer cast */
  tkb_status s = init();
  if (s) {
    char msg[900];
    snprintf(msg, sizeof msg, "%s", tkb_last_error());
    /* Entries it registered before failing point into it: never dlclose it. */
    return tkb_set_error(s, "plugin \"%s\": %s failed with %s: %s", path, TKB_PLUGIN_INIT_NAME,
                         tkb_status_name(s), msg);
  }
  pthread_mutex_lock(&lock);
  if (n_loaded < TKB_ARRAY_LEN(loaded)) loaded[n_loaded++] = h;
  pthread_mutex_unlock(&lock);
  return TKB_OK; /* stays loaded: the registry points into it */
}
