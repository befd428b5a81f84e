// A file view as MPI-IO defines it (MPI_File_set_view): a displacement, an elementary type and
// a file type tiled from the displacement on. file_runs() places a stretch of the view's data
// stream on the file: the byte runs, in data order, that MPI-IO would write.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "preload/type_map.hpp"

namespace strata::preload {

struct FileRun {
  uint64_t offset = 0, length = 0;
};

struct FileView {
  uint64_t disp = 0;
  uint64_t etype_size = 1;
  std::shared_ptr<const TypeMap> filetype;  // null: the default view (bytes)
  std::string datarep = "native";

  // The file's byte runs holding `length` data bytes from `position` bytes into the view's data
  // stream (an offset in etypes times the etype's size), in data order, touching runs merged.
  void file_runs(uint64_t position, uint64_t length, std::vector<FileRun>& out) const;
  // Why this view cannot go through the engine ("" when it can).
  std::string problem() const;
};

}  // namespace strata::preload
