// XXH3, the engine's checksum, at the speed of the CPU's vector unit: where libxxhash exports its
// run-time dispatch (CMakeLists.txt checks: STRATA_HAVE_XXH3_DISPATCH), XXH3_64bits and
// XXH3_64bits_update are its AVX2 or AVX-512 versions (the same hashes, 2-3x the speed of the
// portable ones: 28 against 10 GB/s on this project's VM); else the portable ones. Include this
// instead of <xxhash.h>.
#pragma once

#include <xxhash.h>

#if defined(STRATA_HAVE_XXH3_DISPATCH)
#include <xxh_x86dispatch.h>
#endif
