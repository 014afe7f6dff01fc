/*
 * memlimit.c - how much memory this process may really hold, for the checks made before
 * anything large is allocated: the smallest of the machine's physical memory, the
 * memory limit of every cgroup the process is in (v2 memory.max, v1
 * memory.limit_in_bytes, at each level up to the hierarchy's root: a parent's limit
 * binds its children) and the address-space limit RLIMIT_AS. Comparing with physical
 * memory alone lets an entry that cannot fit in its container start anyway and be
 * killed by the kernel's out-of-memory killer instead of failing with a message.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Keeps the smaller limit and what it is. */
static void consider(tkb__mem_limit *m, size_t bytes, const char *what, const char *where) {
  if (bytes >= m->bytes) return;
  m->bytes = bytes;
  snprintf(m->source, sizeof m->source, "%s%s%s%s", what, *where ? " (" : "", where, *where ? ")" : "");
}

/* A limit file's value: a byte count, or "max" / a huge number (none). */
static bool read_limit(const char *path, size_t *bytes) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char buf[64] = "";
  bool ok = fgets(buf, sizeof buf, f) != NULL;
  fclose(f);
  if (!ok || strncmp(buf, "max", 3) == 0) return false;
  char *end;
  unsigned long long v = strtoull(buf, &end, 10);
  if (end == buf) return false;
  *bytes = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
  return true;
}

/* The mount point of the cgroup2 hierarchy (v2) or of v1's memory controller. */
static bool mount_point(bool v2, char *out, size_t cap) {
  FILE *f = fopen("/proc/self/mountinfo", "r");
  if (!f) return false;
  char line[1024];
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    char root[256], point[512], fstype[64], super[256];
    /* id parent major:minor root mount-point options [optional fields] - fstype source super */
    const char *dash = strstr(line, " - ");
    if (!dash || sscanf(line, "%*s %*s %*s %255s %511s", root, point) != 2 ||
        sscanf(dash + 3, "%63s %*s %255s", fstype, super) != 2)
      continue;
    if (strcmp(root, "/") != 0) continue; /* a bind of a sub-tree: paths would not line up */
    if (v2 ? strcmp(fstype, "cgroup2") == 0
           : strcmp(fstype, "cgroup") == 0 && strstr(super, "memory") != NULL) {
      snprintf(out, cap, "%s", point);
      found = true;
    }
  }
  fclose(f);
  return found;
}

/* Every level of the process's cgroup in one hierarchy, leaf to root. */
static void cgroup_limits(tkb__mem_limit *m, bool v2) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (!f) return;
  char line[1024], path[768] = "";
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    *c1 = '\0';
    *c2 = '\0';
    const char *controllers = c1 + 1;
    bool memory = false;
    for (const char *p = controllers; *p;) {
      size_t n = strcspn(p, ",");
      memory |= n == 6 && strncmp(p, "memory", 6) == 0;
      p += n + (p[n] == ',');
    }
    if (v2 ? strcmp(line, "0") == 0 && *controllers == '\0' : memory) {
      snprintf(path, sizeof path, "%s", c2 + 1);
      found = true;
    }
  }
  fclose(f);
  char mount[512];
  if (!found || !mount_point(v2, mount, sizeof mount)) return;
  const char *file = v2 ? "memory.max" : "memory.limit_in_bytes";
  for (;;) {
    char full[1400];
    snprintf(full, sizeof full, "%s%s/%s", mount, strcmp(path, "/") == 0 ? "" : path, file);
    size_t bytes;
    if (read_limit(full, &bytes))
      consider(m, bytes, v2 ? "the cgroup's memory.max" : "the cgroup's memory.limit_in_bytes", full);
    char *slash = strrchr(path, '/');
    if (!slash || strcmp(path, "/") == 0) break;
    if (slash == path) slash[1] = '\0';
    else *slash = '\0';
  }
}

void tkb__memory_limit(tkb__mem_limit *m) {
  *m = (tkb__mem_limit){.bytes = SIZE_MAX};
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) consider(m, (size_t)pages * (size_t)page, "the machine's physical memory", "");
  cgroup_limits(m, true);
  cgroup_limits(m, false);
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    consider(m, rl.rlim_cur > SIZE_MAX ? SIZE_MAX : (size_t)rl.rlim_cur,
             "the address-space limit RLIMIT_AS", "ulimit -v");
  if (m->bytes == SIZE_MAX) snprintf(m->source, sizeof m->source, "no known limit");
}
