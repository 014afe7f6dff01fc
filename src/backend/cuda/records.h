/*
 * records.h - CUPTI-like activity records and their attribution to timed calls, host only
 * (no CUDA or CUPTI header), so tests/test_cuda_nogpu.c checks it on machines without a
 * GPU. cupti_timer.c feeds it from CUPTI's buffers; nothing here knows CUPTI.
 *
 * A call's records are found one of two ways (Tokamax's cupti does either):
 *   by correlation: timer_start pushes an external correlation id (the call number) and
 *     timer_stop pops it; CUPTI then reports a link (call number -> correlation id) for
 *     every CUDA API call made in between, and a kernel/copy/fill record belongs to the
 *     call when its correlation id is one of those;
 *   by time window: when the call has no links at all (external correlation not
 *     reported), a record belongs to it when it started inside [win_start, win_end).
 * CUPTI emits those links only while an API activity kind is enabled too (cupti_timer.c
 * enables RUNTIME and DRIVER for that and ignores their records). tkbench runs one
 * call at a time, so with links present a record that started inside the window but
 * is not linked (a "stray") means a link went missing or another thread used the GPU:
 * attribution reports it rather than return a silently short time. So does a record
 * of the call without valid timestamps (CUPTI writes 0 when it could not time it).
 *
 * Names are copied into the store's table (interned), never kept as CUPTI-owned pointers:
 * CUPTI frees its buffers, and a name must outlive them in the intervals and the trace.
 * CUPTI gives C++ kernels' mangled names; the table keeps them demangled (as Nsight and
 * XLA's profiler show them: "void (anonymous namespace)::tkb_fill<0, 10>(
 * tkb_cu_fill_args, bool)"), which is what the profiler methods' event filter and the Chrome trace see.
 * The store is allocated once (tkb_cu_store_new) and then allocates nothing.
 */
#ifndef TKB_CU_RECORDS_H
#define TKB_CU_RECORDS_H

#include "backend.h"

#include <pthread.h>
#include <stdint.h>

typedef enum tkb_cu_kind { TKB_CU_KERNEL = 0, TKB_CU_MEMCPY = 1, TKB_CU_MEMSET = 2 } tkb_cu_kind;
#define TKB_CU_KIND_BIT(k) (1u << (k))
#define TKB_CU_ALL_KINDS 7u

typedef struct tkb_cu_record {
  uint64_t start_ns, end_ns;
  uint32_t correlation;
  uint8_t kind;
  const char *name; /* interned in the store */
} tkb_cu_record;

typedef struct tkb_cu_link {
  uint64_t external; /* the call number pushed by timer_start */
  uint32_t correlation;
} tkb_cu_link;

#define TKB_CU_MAX_RECORDS 65536
#define TKB_CU_MAX_LINKS 65536
#define TKB_CU_MAX_NAMES 1024
#define TKB_CU_NAME_LEN 128

typedef struct tkb_cu_store {
  pthread_mutex_t lock; /* CUPTI's buffer thread adds while timer_stop reads */
  tkb_cu_record rec[TKB_CU_MAX_RECORDS];
  size_t n_rec, lost_rec;       /* lost: records past the store's end */
  tkb_cu_link link[TKB_CU_MAX_LINKS];
  size_t n_link, lost_link;
  uint32_t corr_scratch[TKB_CU_MAX_LINKS]; /* a call's correlation ids, sorted */
  char keys[TKB_CU_MAX_NAMES][TKB_CU_NAME_LEN];  /* names as CUPTI gives them (cut) */
  char names[TKB_CU_MAX_NAMES][TKB_CU_NAME_LEN]; /* the same, demangled (cut) */
  int n_names;
} tkb_cu_store;

/* NULL when out of memory. Free with tkb_cu_store_free. */
tkb_cu_store *tkb_cu_store_new(void);
void tkb_cu_store_free(tkb_cu_store *s);
/* Forgets the records and links (names stay interned for the life of the store). */
void tkb_cu_store_reset(tkb_cu_store *s);

/* A copy of name living as long as the store (equal names share one copy), demangled
 * by the C++ runtime's __cxa_demangle when it is a mangled C++ name ("_Z..."; one that
 * does not demangle is kept as given). Names longer than TKB_CU_NAME_LEN - 1
 * are cut; "(name table full)" when the table is full; NULL reads as "?". Caller holds the
 * lock (or is the only user). */
const char *tkb_cu_intern(tkb_cu_store *s, const char *name);

/* Adds one record (name copied) / one link. Take the lock around them. A full store
 * counts the loss (lost_rec, lost_link), which attribution then reports. */
void tkb_cu_add_record(tkb_cu_store *s, tkb_cu_kind kind, uint64_t start_ns, uint64_t end_ns,
                       uint32_t correlation, const char *name);
void tkb_cu_add_link(tkb_cu_store *s, uint64_t external, uint32_t correlation);

/* Which records make one call. */
typedef struct tkb_cu_select {
  uint64_t call;                 /* the external correlation id of the call */
  uint64_t win_start, win_end;   /* the call's window on CUPTI's clock */
  unsigned kinds;                /* TKB_CU_KIND_BIT mask: cupti keeps kernels only */
} tkb_cu_select;

typedef enum tkb_cu_attr_result {
  TKB_CU_ATTR_OK = 0,
  TKB_CU_ATTR_LOST,     /* the store overflowed: records of the call may be missing */
  TKB_CU_ATTR_BAD_TIME, /* a record of the call has no valid timestamps (start 0 or end < start) */
  TKB_CU_ATTR_STRAY,    /* links exist, yet records started in the window unlinked */
  TKB_CU_ATTR_TOO_MANY  /* more than cap intervals for the call */
} tkb_cu_attr_result;

/* What attribution saw, for the messages of a failed call. */
typedef struct tkb_cu_attr_info {
  size_t n;              /* the call's intervals (on TOO_MANY, how many matched in all) */
  bool by_correlation;   /* links chose them (else the window did) */
  size_t links;          /* the call's links (CUDA API calls made during it) */
  size_t bad_time;       /* the call's records without valid timestamps (never in out) */
  size_t strays;         /* unlinked records of the selected kinds inside the window */
  const char *stray_name;/* the first stray's name, or NULL */
} tkb_cu_attr_info;

/*
 * The call's records of the selected kinds as intervals (in the store's order), into
 * out[0..cap), and what attribution saw into *info. Results are checked in the order
 * LOST, BAD_TIME, STRAY, TOO_MANY. Caller holds the lock.
 */
tkb_cu_attr_result tkb_cu_attribute(tkb_cu_store *s, const tkb_cu_select *sel, tkb_interval *out,
                                    size_t cap, tkb_cu_attr_info *info);

#endif /* TKB_CU_RECORDS_H */
