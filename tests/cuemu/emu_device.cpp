/*
 * emu_device.cpp (tkbench's CUDA emulator) - runs a kernel's grid on the device thread:
 * blocks one after another, a block's threads as fibers with their own stacks.
 *
 * A fiber runs until it reaches __syncthreads, a warp intrinsic (__syncwarp, shuffles,
 * ballots) or an mbarrier wait, and is resumed once the others it waits for arrived:
 *  - __syncthreads completes when every thread of the block that has not exited waits
 *    at one (exited threads count as arrived, as on sm_70 and later);
 *  - a warp intrinsic with mask m completes when every lane of m that has not exited
 *    called the same intrinsic with the same mask (CUDA: otherwise undefined); a lane
 *    reading from a lane that is not taking part, a mask without the caller's bit, or two
 *    lanes of one mask at different intrinsics fail the launch;
 *  - an mbarrier's bulk copies land only once no thread can move otherwise (as late as
 *    CUDA allows), so a thread that reads their memory without waiting sees the old
 *    bytes; TKB_EMU_BULK=early lands them as they are issued (as early as CUDA allows),
 *    so a refill issued before every reader is done overwrites what they still read;
 *  - when no thread can move, the block is deadlocked: the launch fails and the message
 *    lists where the threads wait.
 * Warps run one after another, each as far as it can go (its own intrinsics complete as
 * its lanes meet), threads in index order, so a run is deterministic; TKB_EMU_ORDER=
 * reverse runs warps and lanes last to first. A missing barrier (a read before another
 * warp's write, or a rewrite before another warp's read) changes a result in one of the
 * two orders: the Release build's tests run the first, the sanitizer build's the second.
 *
 * The switch between fibers is 15 instructions of assembly on x86-64 (swapcontext costs
 * a system call per switch, and a block switches at every barrier of every thread);
 * elsewhere ucontext. It leaves by an indirect jump, not `ret`: a return to another
 * stack's caller is mispredicted every time, where the jump's alternating targets are
 * learned (with the stacks' colors below, `tkbench check` of 40 emulated entries took
 * 18-20 s of CPU instead of 26: `TKB_PLUGIN_PATH=build/tests/cuemu/libtkbench-cuda-emu.so
 * TKB_EMU_BULK=early /usr/bin/time build/tkbench check --device cuda:0 --shard 0/2`). Under AddressSanitizer the switches are announced to it.
 */
#include "emu_internal.h"

#include <cxxabi.h>
#include <sys/mman.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define TKB_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TKB_EMU_ASAN 1
#endif
#endif
#ifdef TKB_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

namespace tkb_emu {
namespace {

/* ---- fibers ---- */

enum fiber_state { F_RUN, F_SYNC, F_WARP, F_SPIN, F_DONE };

struct fiber {
  void *sp = nullptr;        /* saved stack pointer (x86-64) */
#if !defined(__x86_64__)
  ucontext_t uc;
#endif
  unsigned char *stack = nullptr;
  size_t stack_bytes = 0;
  void *asan_fake = nullptr;
  uint3 tid{0, 0, 0};
  int lane = 0, warp = 0;
  fiber_state state = F_RUN;
  /* the warp intrinsic it waits at */
  warp_op op = W_SYNC;
  unsigned mask = 0;
  uint64_t value = 0, result = 0;
  int arg = 0, width = 32;
};

/* Stack per fiber: kernels keep arrays of a few KiB in registers on a GPU, which are
 * stack here; AddressSanitizer's redzones make frames several times larger. */
#ifdef TKB_EMU_ASAN
constexpr size_t STACK_BYTES = 512 << 10;
#else
constexpr size_t STACK_BYTES = 128 << 10;
#endif
constexpr size_t GUARD_BYTES = 4096;

#if defined(__x86_64__)
extern "C" void tkb_emu_switch(void **save_sp, void *to_sp);
extern "C" void tkb_emu_fiber_entry();
/* tkb_emu_switch(save, to): pushes the callee-saved registers, stores the stack
 * pointer in *save, switches to `to`, pops the registers saved there and jumps to the
 * address under them. A new fiber's
 * stack holds zeros for them, with r12 = its fiber and r13 = the function to run, under
 * the address of tkb_emu_fiber_entry, which calls r13(r12) on an aligned stack. */
asm(R"(
  .text
  .globl tkb_emu_switch
  .hidden tkb_emu_switch
  .type tkb_emu_switch, @function
tkb_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  popq %rcx
  jmp *%rcx
  .size tkb_emu_switch, .-tkb_emu_switch
  .globl tkb_emu_fiber_entry
  .hidden tkb_emu_fiber_entry
  .type tkb_emu_fiber_entry, @function
tkb_emu_fiber_entry:
  movq %r12, %rdi
  andq $-16, %rsp
  call *%r13
  ud2
  .size tkb_emu_fiber_entry, .-tkb_emu_fiber_entry
)");
#endif

/* ---- the block being run (device thread only) ---- */

struct mbar_copy {
  void *dst;
  const void *src;
  unsigned bytes;
};
struct mbar_state {
  unsigned expected = 0, pending = 0, phase = 0;
  int64_t tx = 0;
  std::vector<mbar_copy> copies;
};

struct block_run {
  const char *kernel = nullptr;
  std::vector<fiber> *fibers = nullptr;
  int n = 0;
  fiber *cur = nullptr;
  void *sched_sp = nullptr;
#if !defined(__x86_64__)
  ucontext_t sched_uc;
#endif
  const std::function<void()> *body = nullptr;
  unsigned char *dyn = nullptr;
  size_t dyn_bytes = 0, static_bytes = 0, smem_limit = 0;
  std::vector<std::pair<const void *, unsigned char *>> statics;
  std::map<uint64_t *, mbar_state> mbars;
  bool failed = false;
  bool land = false; /* bulk copies land in this pass (no thread could move in the last) */
  const void *sched_stack_bottom = nullptr; /* AddressSanitizer's view of the device thread */
  size_t sched_stack_size = 0;
};

block_run *blk; /* the block running now */

void block_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void block_fail(const char *fmt, ...) {
  if (blk->failed) return;
  blk->failed = true;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int status = -1;
  char *readable = abi::__cxa_demangle(blk->kernel, nullptr, nullptr, &status);
  fail(cudaErrorLaunchFailure, "kernel %s, block (%u,%u,%u): %s", status == 0 && readable ? readable : blk->kernel,
       blockIdx.x, blockIdx.y, blockIdx.z, msg);
  free(readable);
}

/* Switches from the running fiber to the scheduler. */
void to_scheduler(bool exiting) {
  fiber *f = blk->cur;
#ifdef TKB_EMU_ASAN
  __sanitizer_start_switch_fiber(exiting ? nullptr : &f->asan_fake, blk->sched_stack_bottom, blk->sched_stack_size);
#else
  (void)exiting;
#endif
#if defined(__x86_64__)
  tkb_emu_switch(&f->sp, blk->sched_sp);
#else
  swapcontext(&f->uc, &blk->sched_uc);
#endif
#ifdef TKB_EMU_ASAN
  __sanitizer_finish_switch_fiber(f->asan_fake, &blk->sched_stack_bottom, &blk->sched_stack_size);
#endif
}

extern "C" void tkb_emu_fiber_main(fiber *f) {
#ifdef TKB_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &blk->sched_stack_bottom, &blk->sched_stack_size);
#endif
  (*blk->body)();
  f->state = F_DONE;
  to_scheduler(true);
  __builtin_trap(); /* a finished fiber is never resumed */
}

#if !defined(__x86_64__)
void uc_entry(unsigned lo, unsigned hi) {
  tkb_emu_fiber_main(reinterpret_cast<fiber *>(((uintptr_t)hi << 32) | lo));
}
#endif

/* A fiber's first frame starts `color` cache lines below its stack's top. The stacks are
 * mappings of their own, so their tops share one offset in a page and, without it, one
 * set of the first-level cache: the 32 lanes of a warp, switched in turn at every warp
 * intrinsic, evicted each other's frames there (perf: most of the emulator's time on the
 * instruction after each switch). 64 colors of 64 bytes cover a 4 KiB page's sets. */
constexpr size_t STACK_COLORS = 64, COLOR_BYTES = 64;

void fiber_start(fiber &f, unsigned color) {
  if (!f.stack) {
    void *m = mmap(nullptr, STACK_BYTES + GUARD_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      fprintf(stderr, "tkbench CUDA emulator: out of memory for a thread's stack\n");
      abort();
    }
    mprotect(m, GUARD_BYTES, PROT_NONE); /* an overflow faults instead of corrupting */
    f.stack = static_cast<unsigned char *>(m) + GUARD_BYTES;
    f.stack_bytes = STACK_BYTES;
  }
#ifdef TKB_EMU_ASAN
  __asan_unpoison_memory_region(f.stack, f.stack_bytes); /* a failed block's frames */
#endif
  f.asan_fake = nullptr;
#if defined(__x86_64__)
  uint64_t *sp = reinterpret_cast<uint64_t *>(
      (uintptr_t)(f.stack + f.stack_bytes - color % STACK_COLORS * COLOR_BYTES) & ~(uintptr_t)15);
  *--sp = 0;                                                 /* alignment */
  *--sp = reinterpret_cast<uint64_t>(&tkb_emu_fiber_entry); /* ret */
  *--sp = 0;                                                 /* rbp */
  *--sp = 0;                                                 /* rbx */
  *--sp = reinterpret_cast<uint64_t>(&f);                    /* r12: the argument */
  *--sp = reinterpret_cast<uint64_t>(&tkb_emu_fiber_main);  /* r13: the function */
  *--sp = 0;                                                 /* r14 */
  *--sp = 0;                                                 /* r15 */
  f.sp = sp;
#else
  getcontext(&f.uc);
  f.uc.uc_stack.ss_sp = f.stack;
  f.uc.uc_stack.ss_size = f.stack_bytes - color % STACK_COLORS * COLOR_BYTES;
  f.uc.uc_link = nullptr;
  uintptr_t p = reinterpret_cast<uintptr_t>(&f);
  makecontext(&f.uc, reinterpret_cast<void (*)()>(uc_entry), 2, (unsigned)(p & 0xffffffffu), (unsigned)(p >> 32));
#endif
}

void resume(fiber &f) {
  blk->cur = &f;
  threadIdx = f.tid;
#ifdef TKB_EMU_ASAN
  void *fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f.stack, f.stack_bytes);
#endif
#if defined(__x86_64__)
  tkb_emu_switch(&blk->sched_sp, f.sp);
#else
  swapcontext(&blk->sched_uc, &f.uc);
#endif
#ifdef TKB_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  blk->cur = nullptr;
}

const char *op_name(warp_op op) {
  switch (op) {
    case W_SYNC: return "__syncwarp";
    case W_SHFL: return "__shfl_sync";
    case W_SHFL_UP: return "__shfl_up_sync";
    case W_SHFL_DOWN: return "__shfl_down_sync";
    case W_SHFL_XOR: return "__shfl_xor_sync";
    case W_BALLOT: return "__ballot_sync";
  }
  return "?";
}

fiber *lane_fiber(int warp, int lane) {
  int i = warp * 32 + lane;
  return i < blk->n ? &(*blk->fibers)[i] : nullptr;
}

/* Completes the warp intrinsics of threads [lo, hi) (one warp) whose lanes have all
 * arrived; false when none did. */
bool release_warp(int lo, int hi) {
  bool any = false;
  std::vector<fiber> &fs = *blk->fibers;
  for (int i = lo; i < hi && !blk->failed; i++) {
    fiber &f = fs[i];
    if (f.state != F_WARP) continue;
    const unsigned m = f.mask;
    if (!(m >> f.lane & 1u)) {
      block_fail("thread %u calls %s with mask %08x, which lacks its own lane %d", f.tid.x, op_name(f.op), m, f.lane);
      return false;
    }
    bool ready = true;
    for (int l = 0; l < 32 && ready; l++) {
      if (!(m >> l & 1u)) continue;
      fiber *g = lane_fiber(f.warp, l);
      if (!g || g->state == F_DONE) continue; /* exited lanes are not waited for */
      if (g->state != F_WARP) {
        ready = false; /* not there yet */
      } else if (g->mask != m || g->op != f.op) {
        block_fail("lanes %d and %d of warp %d meet at %s (mask %08x) and %s (mask %08x): CUDA requires "
                   "every lane a mask names to call the same intrinsic with the same mask",
                   f.lane, l, f.warp, op_name(f.op), m, op_name(g->op), g->mask);
        return false;
      }
    }
    if (!ready) continue;
    /* every lane of m still running is here: compute each one's result */
    unsigned ballot = 0, present = 0;
    for (int l = 0; l < 32; l++) {
      fiber *g = lane_fiber(f.warp, l);
      if ((m >> l & 1u) && g && g->state == F_WARP) {
        present |= 1u << l;
        if (g->value) ballot |= 1u << l;
      }
    }
    for (int l = 0; l < 32 && !blk->failed; l++) {
      if (!(present >> l & 1u)) continue;
      fiber *g = lane_fiber(f.warp, l);
      const int w = g->width;
      if (g->op != W_SYNC && g->op != W_BALLOT && (w < 1 || w > 32 || (w & (w - 1)))) {
        block_fail("thread %u calls %s with width %d (a power of 2 up to 32)", g->tid.x, op_name(g->op), w);
        break;
      }
      const int seg = l & ~(w - 1);
      int src = l;
      switch (g->op) {
        case W_SYNC: break;
        case W_BALLOT: break;
        case W_SHFL: src = seg + (g->arg & (w - 1)); break;
        case W_SHFL_UP: src = (l - seg) >= g->arg ? l - g->arg : l; break;
        case W_SHFL_DOWN: src = (l - seg) + g->arg < w ? l + g->arg : l; break;
        case W_SHFL_XOR: src = l ^ (g->arg & 31); src = src >= seg && src < seg + w ? src : l; break;
      }
      if (g->op == W_SYNC) g->result = 0;
      else if (g->op == W_BALLOT) g->result = ballot;
      else if (present >> src & 1u) g->result = lane_fiber(f.warp, src)->value;
      else {
        block_fail("thread %u (lane %d) reads lane %d with %s(mask %08x), and lane %d is not taking part "
                   "(outside the mask or exited): CUDA leaves the value undefined",
                   g->tid.x, l, src, op_name(g->op), m, src);
        break;
      }
    }
    for (int l = 0; l < 32; l++)
      if (present >> l & 1u) lane_fiber(f.warp, l)->state = F_RUN;
    any = true;
  }
  return any;
}

/* Completes __syncthreads when every thread still running waits at it. */
bool release_barrier() {
  std::vector<fiber> &fs = *blk->fibers;
  int waiting = 0;
  for (int i = 0; i < blk->n; i++) {
    if (fs[i].state == F_DONE) continue;
    if (fs[i].state != F_SYNC) return false;
    waiting++;
  }
  for (int i = 0; i < blk->n; i++)
    if (fs[i].state == F_SYNC) fs[i].state = F_RUN;
  return waiting > 0;
}

/* One line per group of threads waiting at the same place, for a deadlock's message. */
std::string describe_waits() {
  std::string s;
  std::vector<fiber> &fs = *blk->fibers;
  int shown = 0;
  for (int i = 0; i < blk->n && shown < 8; i++) {
    const fiber &f = fs[i];
    if (f.state == F_DONE) continue;
    int j = i;
    while (j + 1 < blk->n && fs[j + 1].state == f.state && fs[j + 1].op == f.op && fs[j + 1].mask == f.mask) j++;
    char line[200];
    const char *where = f.state == F_SYNC ? "__syncthreads" : f.state == F_SPIN ? "an mbarrier wait" : op_name(f.op);
    if (f.state == F_WARP) snprintf(line, sizeof line, "; threads %d-%d at %s(mask %08x)", i, j, where, f.mask);
    else snprintf(line, sizeof line, "; threads %d-%d at %s", i, j, where);
    s += line;
    shown++;
    i = j;
  }
  int done = 0;
  for (int i = 0; i < blk->n; i++) done += fs[i].state == F_DONE;
  char tail[64];
  snprintf(tail, sizeof tail, "; %d exited", done);
  return s + tail;
}

bool reverse_order() {
  static const bool r = [] {
    const char *o = getenv("TKB_EMU_ORDER");
    return o && strcmp(o, "reverse") == 0;
  }();
  return r;
}

bool bulk_early() {
  static const bool e = [] {
    const char *o = getenv("TKB_EMU_BULK");
    return o && strcmp(o, "early") == 0;
  }();
  return e;
}

void run_block(const char *name, const std::function<void()> &body, unsigned nthreads, size_t dyn_bytes,
               size_t smem_limit, std::vector<fiber> &fs) {
  block_run b;
  b.kernel = name;
  b.fibers = &fs;
  b.n = (int)nthreads;
  b.body = &body;
  b.dyn_bytes = dyn_bytes;
  b.smem_limit = smem_limit;
  /* exactly the bytes asked for (AddressSanitizer sees an overrun), as 0xff */
  b.dyn = static_cast<unsigned char *>(::operator new(dyn_bytes ? dyn_bytes : 1, std::align_val_t(128)));
  memset(b.dyn, 0xff, dyn_bytes ? dyn_bytes : 1);
  blk = &b;
  for (unsigned t = 0; t < nthreads; t++) {
    fiber &f = fs[t];
    f.tid = uint3{t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y)};
    f.lane = (int)(t % 32);
    f.warp = (int)(t / 32);
    f.state = F_RUN;
    fiber_start(f, t);
  }
  int idle_passes = 0;
  for (;;) {
    b.land = idle_passes > 0;
    bool moved = false;
    const bool rev = reverse_order();
    const int warps = (int)(nthreads + 31) / 32;
    /* Warp by warp: a warp's intrinsics complete as soon as its lanes meet, so each warp
     * runs ahead of the later ones to its next __syncthreads or mbarrier wait, as warps
     * do on a GPU; a race between warps, a read before another's write or a rewrite
     * before another's read, then changes a result in one order or the other. Threads
     * polling an mbarrier get one turn per pass. */
    for (int wk = 0; wk < warps && !b.failed; wk++) {
      const int w = rev ? warps - 1 - wk : wk;
      const int lo = w * 32, hi = lo + 32 < (int)nthreads ? lo + 32 : (int)nthreads;
      for (bool first = true;; first = false) {
        for (int k = 0; k < hi - lo && !b.failed; k++) {
          fiber &f = fs[rev ? hi - 1 - k : lo + k];
          if (f.state != F_RUN && !(first && f.state == F_SPIN)) continue;
          const bool spinning = f.state == F_SPIN;
          f.state = F_RUN;
          resume(f);
          if (!(spinning && f.state == F_SPIN)) moved = true;
        }
        if (b.failed || !release_warp(lo, hi)) break;
        moved = true;
      }
    }
    if (b.failed) break;
    bool all_done = true;
    for (unsigned t = 0; t < nthreads; t++) all_done = all_done && fs[t].state == F_DONE;
    if (all_done) break;
    if (release_barrier()) {
      idle_passes = 0;
      continue;
    }
    if (b.failed) break;
    if (moved) {
      idle_passes = 0;
      continue;
    }
    /* Only threads waiting on mbarriers are left: the next pass lands their bulk copies
     * (as late as possible, so a read that should have waited sees the old bytes); a
     * pass after that with still no move is a deadlock. */
    if (++idle_passes < 3) continue;
    block_fail("deadlock: no thread can go on%s", describe_waits().c_str());
    break;
  }
  for (auto &s : b.statics) ::operator delete(s.second, std::align_val_t(128));
  ::operator delete(b.dyn, std::align_val_t(128));
  blk = nullptr;
}

std::vector<fiber> *fiber_pool; /* reused by every launch: the stacks stay mapped */

} // namespace

/* ---- what kernels call (the running fiber) ---- */

uint64_t warp_collective(warp_op op, unsigned mask, uint64_t value, int arg, int width) {
  fiber *f = blk->cur;
  f->state = F_WARP;
  f->op = op;
  f->mask = mask;
  f->value = value;
  f->arg = arg;
  f->width = width;
  to_scheduler(false);
  return f->result;
}

void block_barrier() {
  blk->cur->state = F_SYNC;
  to_scheduler(false);
}

void sleep_yield(unsigned ns) {
  struct timespec ts = {0, (long)(ns < 1000 ? 1000 : ns)};
  nanosleep(&ts, nullptr);
  blk->cur->state = F_RUN; /* runs again in the next pass: no barrier to wait for */
  to_scheduler(false);
}

unsigned char *dyn_smem() { return blk->dyn; }

unsigned char *static_smem(const void *key, size_t bytes, size_t align) {
  for (auto &s : blk->statics)
    if (s.first == key) return s.second;
  blk->static_bytes += bytes;
  if (blk->static_bytes + blk->dyn_bytes > blk->smem_limit)
    block_fail("%zu bytes of static and %zu of dynamic shared memory exceed the %zu a block may have",
               blk->static_bytes, blk->dyn_bytes, blk->smem_limit);
  if (align > 128)
    block_fail("a __shared__ declaration asks for %zu-byte alignment; the emulator gives 128", align);
  unsigned char *p = static_cast<unsigned char *>(::operator new(bytes ? bytes : 1, std::align_val_t(128)));
  memset(p, 0xff, bytes ? bytes : 1);
  blk->statics.emplace_back(key, p);
  return p;
}

void mbar_init(uint64_t *bar, unsigned count) {
  mbar_state &s = blk->mbars[bar];
  s = mbar_state{};
  s.expected = s.pending = count;
  *bar = 0;
}

static void mbar_complete(mbar_state &s) {
  if (s.pending == 0 && s.tx == 0) {
    s.phase ^= 1u;
    s.pending = s.expected;
  }
}

void mbar_arrive_tx(uint64_t *bar, unsigned bytes) {
  auto it = blk->mbars.find(bar);
  if (it == blk->mbars.end()) {
    block_fail("thread %u arrives at an mbarrier that was never initialized", threadIdx.x);
    return;
  }
  if (it->second.pending == 0) {
    block_fail("thread %u arrives at an mbarrier whose arrivals are all in", threadIdx.x);
    return;
  }
  it->second.tx += bytes;
  it->second.pending--;
  mbar_complete(it->second);
}

void bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar) {
  auto it = blk->mbars.find(bar);
  if (it == blk->mbars.end()) {
    block_fail("thread %u starts a bulk copy on an mbarrier that was never initialized", threadIdx.x);
    return;
  }
  /* cp.async.bulk: 16-byte aligned addresses, a multiple of 16 bytes */
  if ((uintptr_t)dst % 16 || (uintptr_t)src % 16 || bytes % 16 || bytes == 0) {
    block_fail("thread %u starts a bulk copy of %u bytes from %p to %p: cp.async.bulk needs 16-byte "
               "aligned addresses and a non-zero multiple of 16 bytes", threadIdx.x, bytes, src, dst);
    return;
  }
  if (bulk_early()) { /* TKB_EMU_BULK=early: the copy lands as it is issued */
    memcpy(dst, src, bytes);
    it->second.tx -= bytes;
    mbar_complete(it->second);
    return;
  }
  it->second.copies.push_back(mbar_copy{dst, src, bytes});
}

void mbar_wait(uint64_t *bar, unsigned phase) {
  for (;;) {
    auto it = blk->mbars.find(bar);
    if (it == blk->mbars.end()) {
      block_fail("thread %u waits on an mbarrier that was never initialized", threadIdx.x);
      return;
    }
    mbar_state &s = it->second;
    if (blk->land && !s.copies.empty()) { /* in the order they were issued */
      for (const mbar_copy &c : s.copies) {
        memcpy(c.dst, c.src, c.bytes);
        s.tx -= c.bytes;
      }
      s.copies.clear();
      mbar_complete(s);
    }
    if (s.phase != (phase & 1u)) return; /* the phase of that parity has completed */
    blk->cur->state = F_SPIN;
    to_scheduler(false);
    if (blk->failed) return;
  }
}

uint64_t device_clock() { return now_ns(); }

/* Runs a launch's whole grid on the device thread. */
void run_grid(const char *name, const std::function<void()> &body, dim3 grid, dim3 block, size_t smem,
              size_t smem_limit) {
  if (!fiber_pool) fiber_pool = new std::vector<fiber>(1024);
  const unsigned nthreads = block.x * block.y * block.z;
  gridDim = grid;
  blockDim = block;
  for (unsigned z = 0; z < grid.z; z++)
    for (unsigned y = 0; y < grid.y; y++)
      for (unsigned x = 0; x < grid.x; x++) {
        if (sticky() != cudaSuccess) return; /* a failed block ends the launch */
        blockIdx = uint3{x, y, z};
        run_block(name, body, nthreads, smem, smem_limit, *fiber_pool);
      }
}

} // namespace tkb_emu
