/*
 * records.h - CUPTI-like activity records and their attribution to timed calls, host only
 * (no CUDA or CUPTI header), so tests/test_cuda_nogpu.c checks it on machines without a
 * GPU. timer.c feeds it from CUPTI's buffers; nothing here knows CUPTI.
 *
 * A call's records are found one of two ways (Tokamax's cupti does either):
 *   by correlation: timer_start pushes an external correlation id (the call number) and
 *     timer_stop pops it; CUPTI then reports a link (call number -> correlation id) for
 *     every CUDA API call made in between, and a kernel/copy/fill record belongs to the
 *     call when its correlation id is one of those;
 *   by time window: when the call has no links at all (external correlation not
 *     reported), a record belongs to it when it started inside [win_start, win_end).
 *
 * Names are copied into the store's table (interned), never kept as CUPTI-owned pointers:
 * CUPTI frees its buffers, and a name must outlive them in the intervals and the trace.
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
  char names[TKB_CU_MAX_NAMES][TKB_CU_NAME_LEN];
  int n_names;
} tkb_cu_store;

/* NULL when out of memory. Free with tkb_cu_store_free. */
tkb_cu_store *tkb_cu_store_new(void);
void tkb_cu_store_free(tkb_cu_store *s);
/* Forgets the records and links (names stay interned for the life of the store). */
void tkb_cu_store_reset(tkb_cu_store *s);

/* A copy of name living as long as the store (equal names share one copy). Names longer
 * than TKB_CU_NAME_LEN - 1 are cut; "(name table full)" when the table is full; NULL
 * reads as "?". Caller holds the lock (or is the only user). */
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
  TKB_CU_ATTR_LOST,    /* the store overflowed: records of the call may be missing */
  TKB_CU_ATTR_TOO_MANY /* more than cap intervals for the call */
} tkb_cu_attr_result;

/*
 * The call's records of the selected kinds as intervals (in the store's order), into
 * out[0..cap). *n: how many (on TOO_MANY, how many matched in all); *by_correlation:
 * whether links chose them (else the window did). Caller holds the lock.
 */
tkb_cu_attr_result tkb_cu_attribute(tkb_cu_store *s, const tkb_cu_select *sel, tkb_interval *out,
                                    size_t cap, size_t *n, bool *by_correlation);

#endif /* TKB_CU_RECORDS_H */
