/* builtin.h - the ops shipped with tkbench: how an op declares itself (once, in its
 * folder's specs.c) and how the suite registers it (builtin.c's op list). Internal.
 *
 * An op's declaration names its implementations and the suite entries of its specs.
 * Every entry is registered once per implementation, with the same spec name,
 * arguments (or factory), mode, counts and tags: that sharing is what lets `tkbench
 * check --device K` compare each implementation with the reference (run on the cpu
 * with the same Philox inputs). Registration happens in the core, not in the device
 * plugins, so entries are listed, selected and reported the same on a machine without
 * a GPU or a plugin; there, running one fails with the device's reason. */
#ifndef TKB_BUILTIN_H
#define TKB_BUILTIN_H

#include "internal.h"

/* One implementation of an op: a row of its declaration. */
typedef struct tkb__op_impl {
  const char *name;        /* the entries' impl: "reference", "cpu", "opencl", "cuda" */
  const tkb_fn *fn;
  const char *device_kind; /* the kind of device it runs on: "cpu", "opencl", "cuda" */
} tkb__op_impl;

/* Where an op's entries go while it is registered (builtin.c). */
typedef struct tkb__op_specs tkb__op_specs;

typedef struct tkb__op_decl {
  const char *name;            /* the entries' op */
  const tkb__op_impl *impls;   /* "reference" first: the truth the others are checked against */
  size_t n_impls;
  /* Hands every suite entry of the op to tkb__op_add, once per (spec, mode), in the
   * order they are listed. May run more than once: it must give the same entries, and
   * what they point at (arguments, names) must stay alive and unchanged. */
  tkb_status (*specs)(tkb__op_specs *out);
} tkb__op_decl;

/* Registers `entry` (its name, args or factory and user, mode, counts and tags) for the
 * op's implementations that `out` collects: op, impl_name, fn and device_kind are
 * filled from the declaration. Called by an op's specs hook only. */
tkb_status tkb__op_add(tkb__op_specs *out, const tkb_benchmark_def *entry);

#endif
