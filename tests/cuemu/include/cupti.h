/*
 * cupti.h (tkbench's CUDA emulator, tests/cuemu) - stands in for the CUDA toolkit's CUPTI
 * header when the plugin's sources are compiled for the host: the activity API subset
 * src/backend/cuda/timer.c calls (C and C++), implemented by ../emu_cupti.cpp.
 *
 * Enum values are the toolkit's (cupti_result.h, cupti_activity.h), so messages and
 * status numbers read as on a GPU. The record structs keep the toolkit's names and
 * leading field order but only the fields tkbench reads plus a few natural ones: the
 * emulator both writes and reads them, so their layout is not the toolkit's.
 */
#ifndef TKB_CUEMU_CUPTI_H
#define TKB_CUEMU_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUPTIAPI

/* the toolkit declares it in cuda.h; an identical typedef may repeat */
typedef struct CUctx_st *CUcontext;

typedef enum {
  CUPTI_SUCCESS = 0,
  CUPTI_ERROR_INVALID_PARAMETER = 1,
  CUPTI_ERROR_INVALID_DEVICE = 2,
  CUPTI_ERROR_INVALID_CONTEXT = 3,
  CUPTI_ERROR_INVALID_OPERATION = 7,
  CUPTI_ERROR_OUT_OF_MEMORY = 8,
  CUPTI_ERROR_HARDWARE = 9,
  CUPTI_ERROR_API_NOT_IMPLEMENTED = 11,
  CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
  CUPTI_ERROR_NOT_READY = 13,
  CUPTI_ERROR_NOT_COMPATIBLE = 14,
  CUPTI_ERROR_NOT_INITIALIZED = 15,
  CUPTI_ERROR_QUEUE_EMPTY = 18,
  CUPTI_ERROR_INVALID_HANDLE = 19,
  CUPTI_ERROR_INVALID_STREAM = 20,
  CUPTI_ERROR_INVALID_KIND = 21,
  CUPTI_ERROR_DISABLED = 23,
  CUPTI_ERROR_HARDWARE_BUSY = 26,
  CUPTI_ERROR_NOT_SUPPORTED = 27,
  CUPTI_ERROR_INSUFFICIENT_PRIVILEGES = 35,
  CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39,
  CUPTI_ERROR_UNKNOWN = 999,
  CUPTI_ERROR_FORCE_INT = 0x7fffffff
} CUptiResult;

/* The kinds up to EXTERNAL_CORRELATION (the toolkit numbers more after it). */
typedef enum {
  CUPTI_ACTIVITY_KIND_INVALID = 0,
  CUPTI_ACTIVITY_KIND_MEMCPY = 1,
  CUPTI_ACTIVITY_KIND_MEMSET = 2,
  CUPTI_ACTIVITY_KIND_KERNEL = 3,
  CUPTI_ACTIVITY_KIND_DRIVER = 4,
  CUPTI_ACTIVITY_KIND_RUNTIME = 5,
  CUPTI_ACTIVITY_KIND_EVENT = 6,
  CUPTI_ACTIVITY_KIND_METRIC = 7,
  CUPTI_ACTIVITY_KIND_DEVICE = 8,
  CUPTI_ACTIVITY_KIND_CONTEXT = 9,
  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
  CUPTI_ACTIVITY_KIND_NAME = 11,
  CUPTI_ACTIVITY_KIND_MARKER = 12,
  CUPTI_ACTIVITY_KIND_MARKER_DATA = 13,
  CUPTI_ACTIVITY_KIND_OVERHEAD = 17,
  CUPTI_ACTIVITY_KIND_MEMCPY2 = 22,
  CUPTI_ACTIVITY_KIND_CUDA_EVENT = 36,
  CUPTI_ACTIVITY_KIND_STREAM = 37,
  CUPTI_ACTIVITY_KIND_SYNCHRONIZATION = 38,
  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION = 39,
  CUPTI_ACTIVITY_KIND_FORCE_INT = 0x7fffffff
} CUpti_ActivityKind;

typedef enum {
  CUPTI_ACTIVITY_FLAG_NONE = 0,
  CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1 << 0,
  CUPTI_ACTIVITY_FLAG_FORCE_INT = 0x7fffffff
} CUpti_ActivityFlag;

typedef enum {
  CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN = 0,
  CUPTI_ACTIVITY_MEMCPY_KIND_HTOD = 1,
  CUPTI_ACTIVITY_MEMCPY_KIND_DTOH = 2,
  CUPTI_ACTIVITY_MEMCPY_KIND_HTOA = 3,
  CUPTI_ACTIVITY_MEMCPY_KIND_ATOH = 4,
  CUPTI_ACTIVITY_MEMCPY_KIND_ATOA = 5,
  CUPTI_ACTIVITY_MEMCPY_KIND_ATOD = 6,
  CUPTI_ACTIVITY_MEMCPY_KIND_DTOA = 7,
  CUPTI_ACTIVITY_MEMCPY_KIND_DTOD = 8,
  CUPTI_ACTIVITY_MEMCPY_KIND_HTOH = 9,
  CUPTI_ACTIVITY_MEMCPY_KIND_PTOP = 10,
  CUPTI_ACTIVITY_MEMCPY_KIND_FORCE_INT = 0x7fffffff
} CUpti_ActivityMemcpyKind;

typedef enum {
  CUPTI_EXTERNAL_CORRELATION_KIND_INVALID = 0,
  CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN = 1,
  CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC = 2,
  CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 = 3,
  CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1 = 4,
  CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 = 5,
  CUPTI_EXTERNAL_CORRELATION_KIND_SIZE,
  CUPTI_EXTERNAL_CORRELATION_KIND_FORCE_INT = 0x7fffffff
} CUpti_ExternalCorrelationKind;

/* Records are 8-byte aligned and packed one after another in the client's buffers.
 * deviceId, contextId and streamId are the emulated device's: 0, 1 and 7 (the legacy
 * default stream's id on CUDA 12). */
#define TKB_CUPTI_RECORD __attribute__((aligned(8)))

typedef struct TKB_CUPTI_RECORD {
  CUpti_ActivityKind kind;
} CUpti_Activity;

/* CUPTI_ACTIVITY_KIND_KERNEL and CONCURRENT_KERNEL. name points into the same buffer
 * (the emulator stores it behind the record): valid only until the buffer is reused. */
typedef struct TKB_CUPTI_RECORD {
  CUpti_ActivityKind kind;
  uint64_t start, end;
  uint32_t deviceId, contextId, streamId, correlationId;
  const char *name;
} CUpti_ActivityKernel10;

typedef struct TKB_CUPTI_RECORD {
  CUpti_ActivityKind kind;
  uint8_t copyKind; /* CUpti_ActivityMemcpyKind */
  uint8_t srcKind, dstKind, flags;
  uint64_t bytes;
  uint64_t start, end;
  uint32_t deviceId, contextId, streamId, correlationId;
} CUpti_ActivityMemcpy6;

typedef struct TKB_CUPTI_RECORD {
  CUpti_ActivityKind kind;
  uint64_t bytes;
  uint64_t start, end;
  uint32_t deviceId, contextId, streamId, correlationId;
} CUpti_ActivityMemset4;

/* CUPTI_ACTIVITY_KIND_RUNTIME and DRIVER: one API call (cbid is always 0 here). */
typedef struct TKB_CUPTI_RECORD {
  CUpti_ActivityKind kind;
  uint32_t cbid;
  uint64_t start, end;
  uint32_t processId, threadId, correlationId;
  uint32_t returnValue;
} CUpti_ActivityAPI;

/* Links an API call (correlationId) to the id pushed for externalKind on its thread. */
typedef struct TKB_CUPTI_RECORD {
  CUpti_ActivityKind kind;
  CUpti_ExternalCorrelationKind externalKind;
  uint64_t externalId;
  uint32_t correlationId;
  uint32_t reserved;
} CUpti_ActivityExternalCorrelation;

typedef void(CUPTIAPI *CUpti_BuffersCallbackRequestFunc)(uint8_t **buffer, size_t *size,
                                                          size_t *maxNumRecords);
typedef void(CUPTIAPI *CUpti_BuffersCallbackCompleteFunc)(CUcontext context, uint32_t streamId,
                                                           uint8_t *buffer, size_t size,
                                                           size_t validSize);

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted);
CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind);
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind);
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag);
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
                                                CUpti_Activity **record);
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                       size_t *dropped);
CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                            uint64_t id);
CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                           uint64_t *lastId);
CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp);
CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TKB_CUEMU_CUPTI_H */
