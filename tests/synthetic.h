/*
 * synthetic.h - seeded random numbers for the synthetic samples and series of tests and
 * bench programs, whose truth is known: splitmix64, one stream per state variable, and
 * standard normals by Box-Muller. Not tkbench's own generator (Philox, src/core), which
 * fills the arrays that benchmarks read.
 */
#ifndef TKB_TESTS_SYNTHETIC_H
#define TKB_TESTS_SYNTHETIC_H

#include <math.h>
#include <stdint.h>

static inline uint64_t synth_next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* In (0, 1]: never 0, so its log is finite. */
static inline double synth_uniform01(uint64_t *s) {
  return (double)((synth_next_u64(s) >> 11) + 1) / 9007199254740993.0;
}

static inline double synth_normal01(uint64_t *s) {
  const double u = synth_uniform01(s), v = synth_uniform01(s);
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

#endif
