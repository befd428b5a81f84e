// The drop-in layer's pieces against MPI itself: the decoded type map of random datatypes
// packs the same bytes as MPI_Pack, and a status filled with its bytes counts the caller's instances;
// a file view placed by FileView::file_runs puts the bytes where MPI's datatype engine (MPI_Unpack)
// and MPI-IO's own write put them;
// and the pending runs of gathered writes equal a byte-by-byte model (the later write wins),
// consecutive transfers merged into one run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "preload/file_view.hpp"
#include "preload/pending.hpp"
#include "preload/type_map.hpp"

using namespace strata::preload;

namespace {

// A random datatype, `depth` constructors deep; `monotonic`: only constructors whose type map
// is in increasing order (a valid file type).
MPI_Datatype random_type(std::mt19937& rng, int depth, bool monotonic) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const MPI_Datatype basics[] = {MPI_BYTE, MPI_INT, MPI_DOUBLE, MPI_SHORT};
  MPI_Datatype base = basics[pick(4)];
  if (depth > 0 && pick(3) != 0) base = random_type(rng, depth - 1, monotonic);
  MPI_Aint lb = 0, ext = 0;
  MPI_Type_get_extent(base, &lb, &ext);
  MPI_Datatype t = MPI_DATATYPE_NULL;
  switch (pick(11)) {
    case 0: MPI_Type_contiguous(1 + pick(4), base, &t); break;
    case 1: MPI_Type_vector(1 + pick(4), 1 + pick(3), 4 + pick(3), base, &t); break;
    case 2: MPI_Type_create_hvector(1 + pick(4), 1 + pick(2), ext * (3 + pick(3)) + pick(5), base, &t); break;
    case 3: {
      int n = 1 + pick(4), bl[4], d[4], at = pick(3);
      for (int i = 0; i < n; ++i) {
        bl[i] = 1 + pick(3);
        d[i] = at;
        at += bl[i] + pick(3);
      }
      MPI_Type_indexed(n, bl, d, base, &t);
      break;
    }
    case 4: {
      int n = 1 + pick(4), bl[4];
      MPI_Aint d[4], at = pick(9);
      for (int i = 0; i < n; ++i) {
        bl[i] = 1 + pick(3);
        d[i] = at;
        at += bl[i] * ext + pick(9);
      }
      MPI_Type_create_hindexed(n, bl, d, base, &t);
      break;
    }
    case 5: {
      int n = 1 + pick(4), d[4], at = 0;
      for (int i = 0; i < n; ++i) {
        d[i] = at;
        at += 2 + pick(3);
      }
      MPI_Type_create_indexed_block(n, 2, d, base, &t);
      break;
    }
    case 6: {
      int n = 1 + pick(4);
      MPI_Aint d[4], at = 0;
      for (int i = 0; i < n; ++i) {
        d[i] = at;
        at += 2 * ext + pick(7);
      }
      MPI_Type_create_hindexed_block(n, 2, d, base, &t);
      break;
    }
    case 7: {
      int bl[2] = {1 + pick(2), 1 + pick(3)};
      MPI_Aint d[2] = {0, 0};
      MPI_Datatype ts[2] = {base, MPI_INT};
      d[1] = bl[0] * ext + pick(5);
      MPI_Type_create_struct(2, bl, d, ts, &t);
      break;
    }
    case 8: {
      const int order = pick(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
      int nd = 1 + pick(3), sizes[3], subs[3], starts[3];
      for (int i = 0; i < nd; ++i) {
        sizes[i] = 2 + pick(5);
        subs[i] = 1 + pick(sizes[i]);
        starts[i] = pick(sizes[i] - subs[i] + 1);
      }
      MPI_Type_create_subarray(nd, sizes, subs, starts, order, base, &t);
      break;
    }
    case 9: {
      const int order = pick(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
      int nd = 1 + pick(2), g[2], dist[2], darg[2], ps[2], size = 1;
      for (int i = 0; i < nd; ++i) {
        g[i] = 3 + pick(8);
        ps[i] = 1 + pick(3);
        size *= ps[i];
        dist[i] = pick(3) == 0 ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
        darg[i] = pick(2) ? MPI_DISTRIBUTE_DFLT_DARG : 1 + pick(2);
        if (dist[i] == MPI_DISTRIBUTE_BLOCK && darg[i] != MPI_DISTRIBUTE_DFLT_DARG && darg[i] * ps[i] < g[i])
          darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
      }
      MPI_Type_create_darray(size, pick(size), nd, g, dist, darg, ps, order, base, &t);
      break;
    }
    default: {
      MPI_Datatype r;
      MPI_Type_create_resized(base, monotonic ? 0 : -pick(3), ext + pick(9), &r);
      MPI_Type_dup(r, &t);
      MPI_Type_free(&r);
      break;
    }
  }
  if (base != MPI_BYTE && base != MPI_INT && base != MPI_DOUBLE && base != MPI_SHORT) MPI_Type_free(&base);
  MPI_Type_commit(&t);
  return t;
}

TEST(PreloadTypeMap, PacksAsMpiPackDoes) {
  std::mt19937 rng(29);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    MPI_Datatype t = random_type(rng, 2, false);
    const TypeMap m = flatten(t);
    ASSERT_TRUE(m.ok) << m.problem;
    const int count = 1 + static_cast<int>(rng() % 3);
    MPI_Aint lb = 0, ext = 0, tlb = 0, text = 0;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    // Memory covering every instance (true extent from the true lower bound).
    const MPI_Aint span = text + (count - 1) * ext + 64;
    std::vector<unsigned char> memory(static_cast<size_t>(span));
    for (size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<unsigned char>(i * 31 + 7);
    unsigned char* origin = memory.data() + 32 - tlb;
    int packed_size = 0;
    MPI_Pack_size(count, t, MPI_COMM_SELF, &packed_size);
    std::vector<char> theirs(static_cast<size_t>(packed_size)), mine(m.size * static_cast<size_t>(count));
    int at = 0;
    MPI_Pack(origin, count, t, theirs.data(), packed_size, &at, MPI_COMM_SELF);
    ASSERT_EQ(static_cast<size_t>(at), mine.size());
    pack(m, origin, static_cast<uint64_t>(count), mine.data());
    ASSERT_EQ(0, std::memcmp(theirs.data(), mine.data(), mine.size())) << "trial " << trial;
    // The status the layer fills for this write (its bytes, as MPI_BYTE) counts `count` instances
    // of the caller's type and those bytes, under both MPIs.
    MPI_Status st;
    MPI_Status_set_elements_x(&st, MPI_BYTE, static_cast<MPI_Count>(mine.size()));
    int instances = -1;
    MPI_Get_count(&st, t, &instances);
    EXPECT_EQ(instances, m.size > 0 ? count : 0) << "trial " << trial;
    MPI_Count bytes = -1;
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    EXPECT_EQ(static_cast<size_t>(bytes), mine.size()) << "trial " << trial;
    // unpack is pack's inverse
    std::vector<unsigned char> back(memory.size(), 0);
    unpack(m, mine.data(), static_cast<uint64_t>(count), back.data() + 32 - tlb);
    std::vector<char> again(mine.size());
    pack(m, back.data() + 32 - tlb, static_cast<uint64_t>(count), again.data());
    EXPECT_EQ(mine, again);
    MPI_Type_free(&t);
    ++checked;
  }
  EXPECT_EQ(checked, 400);
}

std::vector<char> read_file(const std::string& path) {
  std::vector<char> out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return out;
}

// The file `pattern` becomes when `data`, `skip` bytes into the data stream of a view (`disp`,
// file type `ft`), is written through it, by MPI's own datatype engine: the stream unpacked
// (MPI_Unpack) through whole instances of the file type onto an image of the file, where only the
// bytes of [skip, skip + length) are taken (a second unpack, of a mask, says which).
std::vector<char> placed_by_mpi(MPI_Datatype ft, uint64_t disp, uint64_t skip, const std::vector<char>& data,
                                const std::vector<char>& pattern) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  MPI_Type_size(ft, &size);
  MPI_Type_get_extent(ft, &lb, &extent);
  MPI_Type_get_true_extent(ft, &tlb, &textent);
  const uint64_t instances = (skip + data.size() + static_cast<uint64_t>(size) - 1) / static_cast<uint64_t>(size);
  std::vector<char> stream(instances * static_cast<uint64_t>(size), 0), mask(stream.size(), 0);
  for (uint64_t i = 0; i < data.size(); ++i) {
    stream[skip + i] = data[i];
    mask[skip + i] = 1;
  }
  const uint64_t image_bytes = std::max<uint64_t>(
      pattern.size(), disp + static_cast<uint64_t>(tlb + textent + extent * static_cast<MPI_Aint>(instances)));
  std::vector<char> values(image_bytes, 0), taken(image_bytes, 0);
  int at = 0;
  MPI_Unpack(stream.data(), static_cast<int>(stream.size()), &at, values.data() + disp, static_cast<int>(instances), ft,
             MPI_COMM_SELF);
  at = 0;
  MPI_Unpack(mask.data(), static_cast<int>(mask.size()), &at, taken.data() + disp, static_cast<int>(instances), ft,
             MPI_COMM_SELF);
  std::vector<char> file = pattern;
  for (uint64_t i = 0; i < image_bytes; ++i) {
    if (taken[i] == 0) continue;
    if (i >= file.size()) file.resize(i + 1, 0);
    file[i] = values[i];
  }
  return file;
}

// ROMIO before MPICH 4.1 (MPICH 4.0.2 here, Open MPI 4.1's romio321) flattens an (h)indexed file
// type of derived types wrong (pmodels/mpich#7169, fixed when 4.1 flattened with MPIX_Type_iov):
// an hindexed of darrays wrote later instances elsewhere and past the view, an indexed of
// darrays never returned from MPI_File_write_at. Such views are placed by the layer and checked
// against MPI's datatype engine only; MPI-IO is not handed them.
bool romio_misflattens(MPI_Datatype ft) {
  int ints = 0, aints = 0, types = 0, combiner = 0;
  MPI_Type_get_envelope(ft, &ints, &aints, &types, &combiner);
  if (combiner != MPI_COMBINER_INDEXED && combiner != MPI_COMBINER_HINDEXED && combiner != MPI_COMBINER_INDEXED_BLOCK &&
      combiner != MPI_COMBINER_HINDEXED_BLOCK)
    return false;
  std::vector<int> i(static_cast<size_t>(ints));
  std::vector<MPI_Aint> a(static_cast<size_t>(aints));
  std::vector<MPI_Datatype> t(static_cast<size_t>(types));
  MPI_Type_get_contents(ft, ints, aints, types, i.data(), a.data(), t.data());
  int inner = 0;
  MPI_Type_get_envelope(t[0], &ints, &aints, &types, &inner);
  if (inner == MPI_COMBINER_NAMED) return false;
  MPI_Type_free(&t[0]);
  return true;
}

// The layer places the bytes where MPI's datatype engine does (above), and where MPI-IO's own
// write does.
TEST(PreloadFileView, PlacesBytesWhereMpiIoDoes) {
  std::mt19937 rng(31);
  const std::string dir = ::testing::TempDir();
  const std::string theirs_path = dir + "/preload_view_mpiio.bin", mine_path = dir + "/preload_view_runs.bin";
  int compared = 0, placed = 0;
  for (int trial = 0; trial < 120; ++trial) {
    MPI_Datatype ft = random_type(rng, 1, true);
    auto map = std::make_shared<const TypeMap>(flatten(ft));
    FileView view;
    view.disp = rng() % 100;
    view.filetype = map;
    if (!view.problem().empty() || map->size == 0) {  // not a valid file type: MPI-IO would refuse it
      MPI_Type_free(&ft);
      continue;
    }
    const uint64_t skip = rng() % (2 * map->size + 1), length = 1 + rng() % (3 * map->size);
    std::vector<char> data(length);
    for (uint64_t i = 0; i < length; ++i) data[i] = static_cast<char>(rng());
    std::vector<FileRun> runs;
    view.file_runs(skip, length, runs);
    // Both files start as the same pattern past the last byte written: what lies between the
    // view's runs must stay as it was (ROMIO's data sieving, MPICH's default, rewrites the holes it
    // reads; on a new file their bytes would be ROMIO's buffer's).
    uint64_t end = 0;
    for (const FileRun& r : runs) end = std::max(end, r.offset + r.length);
    const std::vector<char> pattern(end + 64, static_cast<char>(0xa5));
    for (const std::string& p : {theirs_path, mine_path}) {
      FILE* f = std::fopen(p.c_str(), "wb");
      ASSERT_NE(f, nullptr);
      ASSERT_EQ(pattern.size(), std::fwrite(pattern.data(), 1, pattern.size(), f));
      std::fclose(f);
    }
    const bool through_mpiio = !romio_misflattens(ft);
    if (through_mpiio) {
      MPI_File fh;
      ASSERT_EQ(MPI_SUCCESS, MPI_File_open(MPI_COMM_SELF, theirs_path.c_str(), MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
      MPI_File_set_view(fh, static_cast<MPI_Offset>(view.disp), MPI_BYTE, ft, "native", MPI_INFO_NULL);
      MPI_File_write_at(fh, static_cast<MPI_Offset>(skip), data.data(), static_cast<int>(length), MPI_BYTE,
                        MPI_STATUS_IGNORE);
      MPI_File_close(&fh);
    }
    const int fd = ::open(mine_path.c_str(), O_WRONLY);
    uint64_t at = 0;
    for (const FileRun& r : runs) {
      ASSERT_EQ(static_cast<ssize_t>(r.length), ::pwrite(fd, data.data() + at, r.length, static_cast<off_t>(r.offset)));
      at += r.length;
    }
    ::close(fd);
    ASSERT_EQ(at, length);
    const std::vector<char> mpi = placed_by_mpi(ft, view.disp, skip, data, pattern), mine = read_file(mine_path);
    ASSERT_EQ(mpi, mine) << "trial " << trial << ": the layer places bytes elsewhere than MPI's datatype engine";
    if (through_mpiio) {
      ASSERT_EQ(read_file(theirs_path), mine) << "trial " << trial << ": the layer places bytes elsewhere than MPI-IO";
      ++compared;
    }
    MPI_Type_free(&ft);
    ++placed;
  }
  EXPECT_GT(compared, 40);
  EXPECT_GT(placed - compared, 5);  // (h)indexed views of derived types, MPI's datatype engine the only judge
}

TEST(PreloadPending, LaterWritesWinAndTouchingRunsMerge) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    PendingRuns p;
    std::vector<int> model(600, -1);  // the byte's value, -1: never written
    // Odd trials write forward (touching or a few bytes apart: appends), and every fourth of them
    // turns back at its last write; even trials, one in three of them in disjoint slots of 25
    // bytes taken in a shuffled order (HDF5's datasets: unsorted, no overlap), the others anywhere.
    uint64_t cursor = 0;
    std::vector<uint64_t> slots(20);
    for (uint64_t s = 0; s < slots.size(); ++s) slots[s] = 25 * s;
    std::shuffle(slots.begin(), slots.end(), rng);
    const bool slotted = trial % 2 == 0 && trial % 3 == 0;
    for (int w = 0; w < 20; ++w) {
      const bool forward = trial % 2 == 1 && !(trial % 4 == 3 && w == 19);
      uint64_t len = forward ? 1 + rng() % 20 : 1 + rng() % 90;
      uint64_t off = forward ? cursor + rng() % 3 : rng() % 500;
      if (slotted) {
        len = 1 + rng() % 25;
        off = slots[w] + (25 - len) * (rng() % 2);
      }
      cursor = off + len;
      std::vector<char> data(len);
      for (uint64_t i = 0; i < len; ++i) {
        data[i] = static_cast<char>(rng() % 100);
        model[off + i] = data[i];
      }
      p.insert(off, len, data.data());
    }
    std::vector<int> seen(600, -1);
    uint64_t previous_end = 0, bytes = 0;
    bool first = true;
    p.for_each([&](uint64_t off, uint64_t len, const char* d) {
      EXPECT_TRUE(first || off >= previous_end) << "runs overlap";
      first = false;
      previous_end = off + len;
      bytes += len;
      for (uint64_t i = 0; i < len; ++i) seen[off + i] = d[i];
    });
    ASSERT_EQ(model, seen) << "trial " << trial;
    for (int q = 0; q < 20; ++q) {  // overlaps() against the model
      const uint64_t off = rng() % 600, len = rng() % 40;
      bool any = false;
      for (uint64_t i = off; i < std::min<uint64_t>(off + len, 600); ++i) any = any || model[i] != -1;
      ASSERT_EQ(any, p.overlaps(off, len)) << off << "+" << len;
    }
    ASSERT_EQ(bytes, p.bytes());
    ASSERT_GE(p.held(), p.bytes());
    EXPECT_EQ(p.end(), previous_end);
  }
  PendingRuns ior;  // IOR's transfers: one block of 64 x 4 KiB becomes one run
  std::vector<char> t(4096, 'x');
  for (int i = 0; i < 64; ++i) ior.insert(uint64_t{4096} * i, 4096, t.data());
  EXPECT_EQ(ior.runs(), 1u);
  EXPECT_EQ(ior.bytes(), uint64_t{64} * 4096);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
