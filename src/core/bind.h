/* bind.h - argument binding (Python's Signature.bind + apply_defaults). Internal. */
#ifndef TKB_BIND_H
#define TKB_BIND_H

#include <stdio.h>

#include "internal.h"

/*
 * Binds args/kwargs to f's parameters. On success *bound is a new array of
 * f->n_params values in parameter order, defaults applied, strings copied; free it
 * with tkb__bound_free. Arrays are borrowed from the caller.
 */
tkb_status tkb__bind(const tkb_fn *f, const tkb_value *args, size_t nargs,
                     const tkb_kwarg *kwargs, size_t nkwargs, tkb_value **bound);
void tkb__bound_free(tkb_value *bound, size_t n);

#endif
