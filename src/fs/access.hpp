// Whether a file is opened to be written or read: the direction of a transfer, shared by the
// MPI-IO file, the open check, the backends and the kernels that do their own MPI-IO.
#pragma once

namespace strata {

enum class Access { write, read };

}  // namespace strata
