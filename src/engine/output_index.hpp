// Writing the output index (the reading side is public, in strata/strata.hpp).
#pragma once

#include <string>

#include "strata/strata.hpp"

namespace strata::engine {

// Writes PATH.strata-index.json atomically (temporary file, then rename).
void write_output_index(const std::string& output, const OutputIndex& index);
// Writes an index to `path` atomically (PATH.tmp, then rename), or straight into `path` when not
// `atomic` (a commit's intent record: one that does not parse was never acted on); with `sync`,
// the file is fsynced before the rename (the directory is the caller's to sync). With `staging`,
// the text goes into that file instead of PATH.tmp — an existing one is overwritten and cut to
// length, reusing its inode, which costs a fraction of creating one — then renamed to `path`.
void write_index_file(const std::string& path, const OutputIndex& index, bool sync, bool atomic = true,
                      const std::string& staging = {});
// A file named in the index, relative to the output's folder.
std::string resolve_indexed_path(const std::string& output, const std::string& relative);

}  // namespace strata::engine
