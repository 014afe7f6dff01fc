/* builtin.h - registration functions of the ops shipped with tkbench. Internal. */
#ifndef TKB_BUILTIN_H
#define TKB_BUILTIN_H

#include "internal.h"

tkb_status tkb__register_normalization(void);

#endif
