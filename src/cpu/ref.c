// Reference kernels, float and double: the same template body (ref_impl.h) compiled twice.
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu/kernels.h"

#define T float
#define CB_REF(name) cb_ref_##name
#include "cpu/ref_impl.h"
#include "cpu/channel_impl.h"
#undef T
#undef CB_REF

#define T double
#define CB_REF(name) cb_ref64_##name
#include "cpu/ref_impl.h"
#include "cpu/channel_impl.h"
#undef T
#undef CB_REF
