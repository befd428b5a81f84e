// Free page reporting (virtio-balloon): a VM whose balloon reports free blocks of 2^order pages
// to the host, which takes them back. A buffered write of a new file takes its page cache in
// folios as large as the request allows (2 MiB on ext4 with large folios); a folio of the
// reported blocks' size comes from memory the host took back, and each of its pages faults in
// the host. Measured on this project's 2-core VM (2026-11-28, kernel 6.18, ext4): 255 MiB into a
// new file in requests of 2, 4 or 8 MiB took 0.57–0.79 s, in requests of 256 KiB to 2044 KiB
// 0.05–0.06 s (the same requests a moment after a delete, before any reporting: 0.06 s).
#pragma once

#include <cstdint>

namespace strata {

// The reported blocks' size in bytes, when the machine reports free pages to a host (a virtio
// balloon offering the feature and the kernel's page_reporting order); 0 otherwise. Read once.
uint64_t reported_block_bytes();

// The longest write request worth issuing into the page cache here: an eighth of a reported
// block, 0 (no limit) where nothing is reported. STRATA_WRITE_PIECE=<bytes> sets it (0: no
// limit). Measured on the same VM (a replayed Darshan log, 255 MiB from 4 ranks into a new file,
// requests of about 5 MiB, each launch after a delete): whole requests 0.39–0.77 s, cut to 1 MiB
// 0.08–0.31 s, to 256 KiB 0.082–0.087 s, to 64 KiB 0.10–0.11 s (`posix`, 40 KiB requests: 0.10–0.11 s).
// Smaller folios come from the free lists' fragments, which are never reported.
uint64_t page_cache_write_limit();

}  // namespace strata
