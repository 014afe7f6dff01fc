/*
 * emu_runtime.cpp (tkbench's CUDA emulator) - the CUDA runtime API on the host: one
 * emulated device, its stream, memory, events, errors and launches (which the machine
 * may show as several GPUs: see visible()).
 *
 * The stream is a queue that a device thread empties in order, so host and device
 * overlap as on a GPU: a kernel launch or an async copy returns at once; cudaMemcpy,
 * cudaMemset, cudaFree, cudaDeviceSynchronize and cudaEventSynchronize wait, as CUDA's
 * do. Events take the emulator's clock when the device thread reaches them.
 *
 * Errors as CUDA reports them: a bad launch configuration is the launch's error (read
 * with cudaGetLastError, per host thread); a kernel that fails on the device (see
 * emu_device.cpp) makes the error sticky, returned by every later call, as a faulted
 * context does. Device memory is a heap block per cudaMalloc, filled with 0xff (NaN for
 * floats) since a GPU's fresh memory holds whatever was there; copies and memsets must
 * lie inside an allocation (or in mapped host memory) or they fail with
 * cudaErrorInvalidValue instead of writing somewhere.
 *
 * The emulated device: 2 SMs, 227 KiB of shared memory per block with the opt-in
 * attribute (48 KiB without), compute capability 9.0 (so the sm_90 paths run), 2 MiB of
 * L2, 16 GiB of memory (TKB_EMU_MEMORY_BYTES sets another figure, to test running out).
 */
#include "emu_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <thread>
#include <vector>
#include <time.h>

struct tkb_emu_event {
  uint64_t recorded = 0; /* generations: host side, bumped by cudaEventRecord */
  std::atomic<uint64_t> reached{0}; /* device side: the generation the stream reached */
  uint64_t t_ns = 0;
};

namespace tkb_emu {
namespace {

/* Few SMs: persistent grids (fill's 16-bit draws, normalization's bulk-copy rows) are
 * sized by them, so a small grid loops over its tiles and refills its stages at the
 * sizes a test can afford. */
constexpr int SMS = 2;
constexpr size_t SMEM_DEFAULT = 48 << 10, SMEM_OPTIN = 232448, SMEM_PER_SM = 233472;
constexpr int L2_BYTES = 2 << 20;

struct task {
  activity a;
  uint32_t correlation;
  std::function<void()> work;
};

/* Process-wide state, never destroyed: the device thread may still be waiting on it
 * when the process exits. */
struct device_state {
  std::mutex lock;
  std::condition_variable cv_work, cv_done;
  std::deque<task> queue;
  uint64_t queued = 0, done = 0;
  bool thread_started = false;
  std::mutex mem_lock;
  std::map<uintptr_t, size_t> dev_allocs, host_allocs; /* start -> bytes */
  size_t in_use = 0, total = (size_t)16 << 30;
  std::map<const void *, int> max_dyn_smem; /* cudaFuncAttributeMaxDynamicSharedMemorySize */
  std::atomic<int> sticky{cudaSuccess};
  std::atomic<uint64_t> kernels{0};
};

device_state &st() {
  static device_state *s = [] {
    auto *d = new device_state;
    if (const char *m = getenv("TKB_EMU_MEMORY_BYTES")) d->total = (size_t)strtoull(m, nullptr, 10);
    return d;
  }();
  return *s;
}

thread_local cudaError_t last_error = cudaSuccess;

cudaError_t set_error(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

void device_thread() {
  device_state &s = st();
  for (;;) {
    task t;
    {
      std::unique_lock<std::mutex> g(s.lock);
      s.cv_work.wait(g, [&] { return !s.queue.empty(); });
      t = std::move(s.queue.front());
      s.queue.pop_front();
    }
    const uint64_t t0 = now_ns();
    if (s.sticky.load() == cudaSuccess || t.a.kind == ACT_NONE) t.work();
    const uint64_t t1 = now_ns();
    if (t.correlation) cupti_on_activity(t.a, t.correlation, t0, t1);
    {
      std::lock_guard<std::mutex> g(s.lock);
      s.done++;
    }
    s.cv_done.notify_all();
  }
}

/* The device allocation (or mapped host block) holding [p, p + bytes), if any. */
bool inside(const std::map<uintptr_t, size_t> &m, const void *p, size_t bytes) {
  uintptr_t a = (uintptr_t)p;
  auto it = m.upper_bound(a);
  if (it == m.begin()) return false;
  --it;
  return a >= it->first && a - it->first <= it->second && bytes <= it->second - (a - it->first);
}

bool device_accessible(const void *p, size_t bytes) {
  device_state &s = st();
  std::lock_guard<std::mutex> g(s.mem_lock);
  return inside(s.dev_allocs, p, bytes) || inside(s.host_allocs, p, bytes);
}

cudaError_t check_copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return cudaSuccess;
  if (!dst || !src) return cudaErrorInvalidValue;
  bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind > cudaMemcpyDefault || kind < cudaMemcpyHostToHost) return cudaErrorInvalidMemcpyDirection;
  if (kind == cudaMemcpyDefault) {
    dst_dev = device_accessible(dst, 1);
    src_dev = device_accessible(src, 1);
  }
  if ((dst_dev && !device_accessible(dst, bytes)) || (src_dev && !device_accessible(src, bytes)))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

/* The symbol of the function at fn in its object's symbol table (local symbols too: the
 * plugin's kernels are hidden or in anonymous namespaces), or NULL. */
const char *elf_symbol(const void *fn) {
  Dl_info info;
  if (!dladdr(fn, &info) || !info.dli_fname) return nullptr;
  if (info.dli_sname && info.dli_saddr == fn) return strdup(info.dli_sname);
  const char *path = info.dli_fname[0] ? info.dli_fname : "/proc/self/exe";
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat sb;
  const char *found = nullptr;
  void *map = fstat(fd, &sb) == 0 ? mmap(nullptr, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return nullptr;
  const unsigned char *base = static_cast<const unsigned char *>(map);
  const size_t size = (size_t)sb.st_size;
  const Elf64_Ehdr *eh = reinterpret_cast<const Elf64_Ehdr *>(base);
  const uintptr_t want = (uintptr_t)fn - (eh->e_type == ET_DYN ? (uintptr_t)info.dli_fbase : 0);
  if (size >= sizeof *eh && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size) {
    const Elf64_Shdr *sh = reinterpret_cast<const Elf64_Shdr *>(base + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum && !found; i++) {
      if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
      const Elf64_Shdr &str = sh[sh[i].sh_link];
      if (sh[i].sh_offset + sh[i].sh_size > size || str.sh_offset + str.sh_size > size) continue;
      const Elf64_Sym *sym = reinterpret_cast<const Elf64_Sym *>(base + sh[i].sh_offset);
      for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++)
        if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_value == want && sym[k].st_name < str.sh_size) {
          found = strdup(reinterpret_cast<const char *>(base + str.sh_offset + sym[k].st_name));
          break;
        }
    }
  }
  munmap(map, size);
  return found;
}

/* A kernel's name as CUPTI reports it, its mangled symbol (records.c demangles it), from
 * the symbol table once per kernel; the launch's source text when there is none. */
const char *kernel_name(const void *fn, const char *fallback) {
  static std::mutex lock;
  static std::map<const void *, const char *> *names = new std::map<const void *, const char *>;
  std::lock_guard<std::mutex> g(lock);
  auto it = names->find(fn);
  if (it != names->end()) return it->second;
  const char *n = elf_symbol(fn);
  (*names)[fn] = n ? n : fallback;
  return n ? n : fallback;
}

} // namespace

uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void fail(cudaError_t err, const char *fmt, ...) {
  int expected = cudaSuccess;
  if (!st().sticky.compare_exchange_strong(expected, (int)err)) return; /* the first failure stays */
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "tkbench CUDA emulator: %s\n", msg);
}

cudaError_t sticky() { return (cudaError_t)st().sticky.load(); }

uint32_t enqueue(const activity &a, std::function<void()> work) {
  device_state &s = st();
  const uint32_t corr = a.kind == ACT_NONE ? 0 : cupti_on_api(a.kind);
  {
    std::lock_guard<std::mutex> g(s.lock);
    if (!s.thread_started) {
      std::thread(device_thread).detach();
      s.thread_started = true;
    }
    s.queue.push_back(task{a, corr, std::move(work)});
    s.queued++;
  }
  s.cv_work.notify_one();
  return corr;
}

cudaError_t drain() {
  device_state &s = st();
  std::unique_lock<std::mutex> g(s.lock);
  const uint64_t target = s.queued;
  s.cv_done.wait(g, [&] { return s.done >= target; });
  return sticky();
}

void launch(const char *name, const void *kernel, dim3 grid, dim3 block, size_t smem, std::function<void()> body) {
  device_state &s = st();
  if (sticky()) {
    set_error(sticky());
    return;
  }
  const uint64_t threads = (uint64_t)block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
    set_error(cudaErrorInvalidConfiguration);
    return;
  }
  /* CUDA: dynamic shared memory up to the kernel's MaxDynamicSharedMemorySize (48 KiB
   * unless raised); static and dynamic together up to 48 KiB, or up to the opt-in
   * maximum once the attribute was set (checked per block, where the static size is
   * known) */
  size_t max_dyn = SMEM_DEFAULT, limit = SMEM_DEFAULT;
  {
    std::lock_guard<std::mutex> g(s.mem_lock);
    auto it = s.max_dyn_smem.find(kernel);
    if (it != s.max_dyn_smem.end()) {
      max_dyn = (size_t)it->second;
      limit = SMEM_OPTIN;
    }
  }
  if (smem > max_dyn) {
    set_error(cudaErrorInvalidValue);
    return;
  }
  s.kernels++;
  name = kernel_name(kernel, name);
  auto b = std::make_shared<std::function<void()>>(std::move(body));
  enqueue(activity{ACT_KERNEL, name, 0, 0},
          [name, b, grid, block, smem, limit] { run_grid(name, *b, grid, block, smem, limit); });
}

cudaError_t func_set_attribute(const void *kernel, cudaFuncAttribute attr, int value) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 || (size_t)value > SMEM_OPTIN)
    return set_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> g(st().mem_lock);
  st().max_dyn_smem[kernel] = value;
  return cudaSuccess;
}

cudaError_t func_get_attributes(cudaFuncAttributes *a, const void *kernel) {
  if (!a) return set_error(cudaErrorInvalidValue);
  memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = 1024;
  a->numRegs = 32;
  a->ptxVersion = 90;
  a->binaryVersion = 90; /* the sm_90 code paths (bulk copies) are the ones emulated */
  std::lock_guard<std::mutex> g(st().mem_lock);
  auto it = st().max_dyn_smem.find(kernel);
  a->maxDynamicSharedSizeBytes = it != st().max_dyn_smem.end() ? it->second : (int)SMEM_DEFAULT;
  return cudaSuccess;
}

cudaError_t occupancy(int *blocks, const void *kernel, int threads, size_t smem) {
  if (!blocks || threads <= 0 || threads > 1024) return set_error(cudaErrorInvalidValue);
  size_t limit = SMEM_DEFAULT;
  {
    std::lock_guard<std::mutex> g(st().mem_lock);
    auto it = st().max_dyn_smem.find(kernel);
    if (it != st().max_dyn_smem.end()) limit = (size_t)it->second > limit ? (size_t)it->second : limit;
  }
  if (smem > limit) {
    *blocks = 0;
    return cudaSuccess;
  }
  int by_threads = 2048 / threads, by_smem = (int)(SMEM_PER_SM / (smem + 1024));
  *blocks = by_threads < by_smem ? by_threads : by_smem;
  if (*blocks > 32) *blocks = 32;
  return cudaSuccess;
}

/* The machine's GPUs: TKB_EMU_DEVICES of them (default 1), of which CUDA_VISIBLE_DEVICES
 * shows those it lists, in its order, up to the first index that names none, as CUDA's
 * runtime does. They are one emulated device under several identities (ordinal, UUID):
 * a process that uses one of them, as each worker of `run --device cuda:all` does, sees
 * what a GPU would give it; two used at once would share one stream and one memory.
 * visible()[k] is the machine's index of the process's device k. */
const std::vector<int> &visible() {
  static const std::vector<int> v = [] {
    std::vector<int> out;
    const char *n = getenv("TKB_EMU_DEVICES");
    int machine = n && *n ? atoi(n) : 1;
    const char *list = getenv("CUDA_VISIBLE_DEVICES");
    if (!list) {
      for (int i = 0; i < machine; i++) out.push_back(i);
      return out;
    }
    for (const char *p = list; *p;) {
      char *end;
      long i = strtol(p, &end, 10);
      if (end == p || i < 0 || i >= machine || (*end && *end != ',')) break;
      out.push_back((int)i);
      p = *end ? end + 1 : end;
    }
    return out;
  }();
  return v;
}

bool valid_device(int device) { return device >= 0 && device < (int)visible().size(); }

thread_local int current_device = 0;

} // namespace tkb_emu

using namespace tkb_emu;

extern "C" {

cudaError_t cudaGetDeviceCount(int *count) {
  if (!count) return set_error(cudaErrorInvalidValue);
  *count = (int)visible().size();
  return *count ? cudaSuccess : set_error(cudaErrorNoDevice);
}
cudaError_t cudaGetDevice(int *device) {
  if (!device) return set_error(cudaErrorInvalidValue);
  *device = current_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  if (!valid_device(device)) return set_error(cudaErrorInvalidDevice);
  current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device) {
  if (!p) return set_error(cudaErrorInvalidValue);
  if (!valid_device(device)) return set_error(cudaErrorInvalidDevice);
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "tkbench CUDA emulator (host CPU)");
  /* an identity of the machine's GPU, the same in every process that sees it */
  char uuid[16] = {'t', 'k', 'b', 'e', 'm', 'u', 0, 0, 0, 0, 0, 0, 0, 0, 0, (char)visible()[(size_t)device]};
  memcpy(p->uuid.bytes, uuid, sizeof uuid);
  p->totalGlobalMem = st().total;
  p->sharedMemPerBlock = SMEM_DEFAULT;
  p->sharedMemPerBlockOptin = SMEM_OPTIN;
  p->sharedMemPerMultiprocessor = SMEM_PER_SM;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->multiProcessorCount = SMS;
  p->major = 9;
  p->minor = 0;
  p->l2CacheSize = L2_BYTES;
  p->clockRate = 1000000;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr attr, int device) {
  if (!v) return set_error(cudaErrorInvalidValue);
  if (!valid_device(device)) return set_error(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = (int)SMEM_DEFAULT; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    case cudaDevAttrClockRate: *v = 1000000; break;
    case cudaDevAttrMultiProcessorCount: *v = SMS; break;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
    case cudaDevAttrL2CacheSize: *v = L2_BYTES; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = (int)SMEM_OPTIN; break;
    default: return set_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int device) {
  if (!id || len <= 0) return set_error(cudaErrorInvalidValue);
  if (!valid_device(device)) return set_error(cudaErrorInvalidDevice);
  snprintf(id, (size_t)len, "0000:00:00.0"); /* no such GPU: NVML says it does not know it */
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v) {
  if (v) *v = CUDART_VERSION;
  return v ? cudaSuccess : set_error(cudaErrorInvalidValue);
}
cudaError_t cudaDriverGetVersion(int *v) {
  if (v) *v = CUDART_VERSION;
  return v ? cudaSuccess : set_error(cudaErrorInvalidValue);
}

cudaError_t cudaDeviceSynchronize(void) { return set_error(drain()); }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return set_error(drain()); }

cudaError_t cudaGetLastError(void) {
  cudaError_t e = sticky() ? sticky() : last_error;
  last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return sticky() ? sticky() : last_error; }

const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
    case cudaErrorMisalignedAddress: return "cudaErrorMisalignedAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown";
  }
}

const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorLaunchFailure: return "unspecified launch failure (the emulator printed why)";
    default: return cudaGetErrorName(e);
  }
}

cudaError_t cudaMalloc(void **ptr, size_t bytes) {
  if (!ptr) return set_error(cudaErrorInvalidValue);
  *ptr = nullptr;
  if (sticky()) return set_error(sticky());
  if (bytes == 0) return cudaSuccess;
  device_state &s = st();
  {
    std::lock_guard<std::mutex> g(s.mem_lock);
    if (bytes > s.total - s.in_use) return set_error(cudaErrorMemoryAllocation);
  }
  void *p = ::operator new(bytes, std::align_val_t(256), std::nothrow);
  if (!p) return set_error(cudaErrorMemoryAllocation);
  memset(p, 0xff, bytes);
  std::lock_guard<std::mutex> g(s.mem_lock);
  s.dev_allocs[(uintptr_t)p] = bytes;
  s.in_use += bytes;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void *ptr) {
  cudaError_t e = drain(); /* CUDA's cudaFree waits for the device */
  if (e) return set_error(e);
  if (!ptr) return cudaSuccess;
  device_state &s = st();
  std::lock_guard<std::mutex> g(s.mem_lock);
  auto it = s.dev_allocs.find((uintptr_t)ptr);
  if (it == s.dev_allocs.end()) return set_error(cudaErrorInvalidValue);
  s.in_use -= it->second;
  s.dev_allocs.erase(it);
  ::operator delete(ptr, std::align_val_t(256));
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes) {
  if (!free_bytes || !total_bytes) return set_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> g(st().mem_lock);
  *total_bytes = st().total;
  *free_bytes = st().total - st().in_use;
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags) {
  (void)flags;
  if (!ptr) return set_error(cudaErrorInvalidValue);
  void *p = ::operator new(bytes ? bytes : 1, std::align_val_t(256), std::nothrow);
  if (!p) return set_error(cudaErrorMemoryAllocation);
  memset(p, 0, bytes ? bytes : 1);
  std::lock_guard<std::mutex> g(st().mem_lock);
  st().host_allocs[(uintptr_t)p] = bytes;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void *ptr) {
  if (!ptr) return cudaSuccess;
  drain();
  std::lock_guard<std::mutex> g(st().mem_lock);
  auto it = st().host_allocs.find((uintptr_t)ptr);
  if (it == st().host_allocs.end()) return set_error(cudaErrorInvalidValue);
  st().host_allocs.erase(it);
  ::operator delete(ptr, std::align_val_t(256));
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void **dev_ptr, void *host_ptr, unsigned int flags) {
  if (!dev_ptr || flags != 0) return set_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> g(st().mem_lock);
  if (!inside(st().host_allocs, host_ptr, 1)) return set_error(cudaErrorInvalidValue);
  *dev_ptr = host_ptr; /* mapped memory: one address for both */
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t) {
  if (sticky()) return set_error(sticky());
  cudaError_t e = check_copy(dst, src, bytes, kind);
  if (e) return set_error(e);
  if (bytes == 0) return cudaSuccess;
  if (kind == cudaMemcpyHostToDevice) {
    /* pageable host memory is staged when the call is made, as CUDA does */
    auto staged = std::make_shared<std::vector<unsigned char>>((const unsigned char *)src,
                                                               (const unsigned char *)src + bytes);
    enqueue(activity{ACT_MEMCPY, "memcpy", (int)kind, bytes},
            [dst, staged] { memcpy(dst, staged->data(), staged->size()); });
  } else {
    enqueue(activity{ACT_MEMCPY, "memcpy", (int)kind, bytes}, [dst, src, bytes] { memcpy(dst, src, bytes); });
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind) {
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
  if (e) return e;
  return set_error(drain());
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t) {
  if (sticky()) return set_error(sticky());
  if (bytes == 0) return cudaSuccess;
  if (!device_accessible(dst, bytes)) return set_error(cudaErrorInvalidValue);
  enqueue(activity{ACT_MEMSET, "memset", 0, bytes}, [dst, value, bytes] { memset(dst, value, bytes); });
  return cudaSuccess;
}

cudaError_t cudaMemset(void *dst, int value, size_t bytes) {
  cudaError_t e = cudaMemsetAsync(dst, value, bytes, nullptr);
  if (e) return e;
  return set_error(drain());
}

cudaError_t cudaMemset2DAsync(void *dst, size_t pitch, int value, size_t width, size_t height, cudaStream_t) {
  if (sticky()) return set_error(sticky());
  if (width == 0 || height == 0) return cudaSuccess;
  if (width > pitch || !device_accessible(dst, pitch * (height - 1) + width)) return set_error(cudaErrorInvalidValue);
  enqueue(activity{ACT_MEMSET, "memset", 0, width * height}, [dst, pitch, value, width, height] {
    for (size_t r = 0; r < height; r++) memset((unsigned char *)dst + r * pitch, value, width);
  });
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) {
  if (!event) return set_error(cudaErrorInvalidValue);
  *event = new tkb_emu_event;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!event) return set_error(cudaErrorInvalidResourceHandle);
  drain(); /* the stream may still hold a record of it */
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  if (!event) return set_error(cudaErrorInvalidResourceHandle);
  if (sticky()) return set_error(sticky());
  const uint64_t gen = ++event->recorded;
  enqueue(activity{ACT_NONE, nullptr, 0, 0}, [event, gen] {
    event->t_ns = now_ns();
    event->reached.store(gen);
  });
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!event) return set_error(cudaErrorInvalidResourceHandle);
  return event->reached.load() >= event->recorded ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!event) return set_error(cudaErrorInvalidResourceHandle);
  device_state &s = st();
  std::unique_lock<std::mutex> g(s.lock);
  s.cv_done.wait(g, [&] { return event->reached.load() >= event->recorded; });
  return sticky() ? set_error(sticky()) : cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms) return set_error(cudaErrorInvalidValue);
  if (!start || !end) return set_error(cudaErrorInvalidResourceHandle);
  if (start->recorded == 0 || end->recorded == 0) return set_error(cudaErrorInvalidResourceHandle);
  if (start->reached.load() < start->recorded || end->reached.load() < end->recorded)
    return set_error(cudaErrorNotReady);
  *ms = (float)((double)((int64_t)(end->t_ns - start->t_ns)) / 1e6);
  return cudaSuccess;
}

uint64_t tkb_emu_kernels_launched(void) { return st().kernels.load(); }

} /* extern "C" */
