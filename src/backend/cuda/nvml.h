/*
 * nvml.h - what tkbench reads from NVML (clocks, clocks-event reasons, temperature,
 * power), loaded with dlopen so that the plugin runs without the NVIDIA management
 * library, and declared here by hand (no nvml.h is installed with the toolkit). Read only:
 * tkbench never changes clocks, power limits or any other GPU setting.
 * Host only (no CUDA header): tests/test_cuda_nogpu.c checks the absent-library path.
 */
#ifndef TKB_CU_NVML_H
#define TKB_CU_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* nvmlClocksEventReasons bits (nvml.h's nvmlClocksEventReason*, formerly
 * nvmlClocksThrottleReason*). */
#define TKB_NVML_REASON_GPU_IDLE 0x1ull
#define TKB_NVML_REASON_APP_CLOCKS 0x2ull
#define TKB_NVML_REASON_SW_POWER_CAP 0x4ull
#define TKB_NVML_REASON_HW_SLOWDOWN 0x8ull
#define TKB_NVML_REASON_SYNC_BOOST 0x10ull
#define TKB_NVML_REASON_SW_THERMAL 0x20ull
#define TKB_NVML_REASON_HW_THERMAL 0x40ull
#define TKB_NVML_REASON_HW_POWER_BRAKE 0x80ull
/* The reasons that mean the GPU runs slower than asked because of heat or power. */
#define TKB_NVML_THROTTLE_MASK                                                              \
  (TKB_NVML_REASON_SW_POWER_CAP | TKB_NVML_REASON_HW_SLOWDOWN | TKB_NVML_REASON_SW_THERMAL | \
   TKB_NVML_REASON_HW_THERMAL | TKB_NVML_REASON_HW_POWER_BRAKE)

typedef struct tkb_nvml_sample {
  bool valid;              /* false: NVML absent or the query failed (why: tkb_nvml_why) */
  unsigned sm_clock_mhz;
  unsigned temperature_c;
  double power_w;
  uint64_t reasons;        /* clocks-event reasons */
} tkb_nvml_sample;

typedef struct tkb_nvml tkb_nvml;

/* Loads NVML from `library` (NULL: "libnvidia-ml.so.1") and finds the GPU whose PCI bus
 * id is pci_bus_id ("0000:3b:00.0", from cudaDeviceGetPCIBusId). Never fails: an absent
 * library or device gives a handle whose samples are invalid and whose tkb_nvml_why
 * says why in one sentence. NULL only when out of memory. */
tkb_nvml *tkb_nvml_open(const char *library, const char *pci_bus_id);
bool tkb_nvml_available(const tkb_nvml *n);
const char *tkb_nvml_why(const tkb_nvml *n);
/* One reading (a few ioctls; allocates nothing). */
tkb_nvml_sample tkb_nvml_read(tkb_nvml *n);
/* True when a thermal or power reason is active in s. */
bool tkb_nvml_throttled(const tkb_nvml_sample *s);
/* "sw_power_cap,hw_thermal" for the bits of reasons ("none" for 0) into buf. */
void tkb_nvml_reason_names(uint64_t reasons, char *buf, size_t cap);
void tkb_nvml_close(tkb_nvml *n);

#endif /* TKB_CU_NVML_H */
