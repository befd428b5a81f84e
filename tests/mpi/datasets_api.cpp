// The datasets API end to end: three datasets (2-D tiles in reverse memory order, flat runs,
// 3-D slabs; one with an attribute) written in one engine phase through the raw and the HDF5
// container, with the buffer in block order and in file order, read back and compared element
// by element; the two containers hold the same bytes for every dataset; bad declarations fail
// on every rank with one message.
// usage: mpiexec -n K datasets_api DIR
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "backends/collective_calls.hpp"
#include "common/error.hpp"
#include "datasets/datasets.hpp"
#include "decomp/values.hpp"

using namespace strata;

namespace {

int rank = 0, size = 1;

bool everyone(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

struct Declared {
  std::vector<DatasetSpec> specs;
  // Per dataset, this rank's element indices in block (declaration) order.
  std::vector<std::pair<int, uint64_t>> elements;
};

Declared declare(DatasetSet& set, MemoryOrder order) {
  Declared d;
  d.specs = {{"tiles", ElemType::f64, {6, 10}, {{"units", "K"}, {"long_name", "a 2-D field"}}},
             {"flat", ElemType::i32, {50}, {}},
             {"slabs", ElemType::u8, {4, 4, 4}, {}}};
  for (const auto& s : d.specs) set.define(s);
  std::vector<std::vector<std::pair<int, uint64_t>>> per_dataset(3);
  // tiles: 2x5 tiles, tile t to rank t % size, declared in reverse order.
  for (int t = 5; t >= 0; --t) {
    if (t % size != rank) continue;
    const uint64_t r0 = static_cast<uint64_t>(t / 2) * 2, c0 = static_cast<uint64_t>(t % 2) * 5;
    set.add_block(0, {r0, c0}, {2, 5});
    for (uint64_t r = r0; r < r0 + 2; ++r)
      for (uint64_t c = c0; c < c0 + 5; ++c) per_dataset[0].push_back({0, r * 10 + c});
  }
  // flat: runs of 3 (the last of 2), run k to rank k % size, in reverse order.
  for (int k = 16; k >= 0; --k) {
    if (k % size != rank) continue;
    const uint64_t n = k == 16 ? 2 : 3;
    set.add_flat(1, static_cast<uint64_t>(k) * 3, n);
    for (uint64_t i = 0; i < n; ++i) per_dataset[1].push_back({1, static_cast<uint64_t>(k) * 3 + i});
  }
  // slabs: slab z to rank z % size.
  for (uint64_t z = 0; z < 4; ++z) {
    if (static_cast<int>(z % static_cast<uint64_t>(size)) != rank) continue;
    set.add_block(2, {z, 0, 0}, {1, 4, 4});
    for (uint64_t i = 0; i < 16; ++i) per_dataset[2].push_back({2, z * 16 + i});
  }
  if (order == MemoryOrder::blocks) {
    // Declaration order across datasets: tiles, flat, slabs (as declared above).
    for (auto& v : per_dataset) d.elements.insert(d.elements.end(), v.begin(), v.end());
  } else {
    for (auto& v : per_dataset) {
      std::sort(v.begin(), v.end());
      d.elements.insert(d.elements.end(), v.begin(), v.end());
    }
  }
  set.set_memory_order(order);
  return d;
}

std::vector<std::byte> values(const Declared& d) {
  std::vector<std::byte> out;
  for (const auto& [ds, i] : d.elements) {
    const auto& s = d.specs[static_cast<size_t>(ds)];
    std::byte v[8];
    generate_value({s.name, s.type, s.shape}, i, {5, 0}, v);
    out.insert(out.end(), v, v + elem_size(s.type));
  }
  return out;
}

bool round_trip(Engine& engine, const std::string& path, Container c, MemoryOrder order) {
  std::vector<std::byte> expected;
  {
    DatasetSet w(engine, path, PhaseMode::write, c);
    const Declared d = declare(w, order);
    expected = values(d);
    if (expected.size() != w.local_bytes()) return false;
    w.write(expected.data());
    w.close();
  }
  DatasetSet r(engine, path, PhaseMode::read, c);
  declare(r, order);
  std::vector<std::byte> back(expected.size(), std::byte{0xEE});
  r.read(back.data());
  r.close();
  const bool ok = everyone(back == expected);
  if (rank == 0) {
    std::printf("%s round trip, %s container, memory in %s order\n", ok ? "ok  " : "FAIL", container_name(c).c_str(),
                order == MemoryOrder::blocks ? "block" : "file");
  }
  return ok;
}

// One DatasetSet moved three times: its declarations sorted once and kept (three datasets on one
// decomposition, declared out of order, share one sort), new values each time, a dataset
// declared between two moves; read back by a set that also reads twice.
bool moved_again(Engine& engine, const std::string& path, Container c) {
  std::vector<DatasetSpec> specs = {{"a", ElemType::i32, {40}, {}},
                                    {"b", ElemType::i32, {40}, {}},
                                    {"c", ElemType::i32, {40}, {}},
                                    {"late", ElemType::f64, {3, 7}, {}}};
  auto declare_runs = [&](DatasetSet& set, int ds) {
    for (int k = 9; k >= 0; --k)  // runs of 4, run k to rank k % size, in reverse order
      if (k % size == rank) set.add_flat(ds, static_cast<uint64_t>(k) * 4, 4);
  };
  auto fill = [&](int datasets, uint64_t step) {  // in declaration (block) order
    std::vector<std::byte> out;
    for (int ds = 0; ds < datasets; ++ds) {
      const DatasetSpec& s = specs[static_cast<size_t>(ds)];
      std::vector<uint64_t> idx;
      if (ds < 3) {
        for (int k = 9; k >= 0; --k)
          if (k % size == rank)
            for (uint64_t i = 0; i < 4; ++i) idx.push_back(static_cast<uint64_t>(k) * 4 + i);
      } else if (rank == 0) {
        for (uint64_t i = 0; i < 21; ++i) idx.push_back(i);
      }
      for (uint64_t i : idx) {
        std::byte v[8];
        generate_value({s.name, s.type, s.shape}, i, {step, 0}, v);
        out.insert(out.end(), v, v + elem_size(s.type));
      }
    }
    return out;
  };
  auto open_set = [&](PhaseMode mode, int datasets) {
    auto set = std::make_unique<DatasetSet>(engine, path, mode, c);
    for (int ds = 0; ds < datasets; ++ds) set->define(specs[static_cast<size_t>(ds)]);
    for (int ds = 0; ds < 3; ++ds) declare_runs(*set, ds);
    return set;
  };
  bool ok = true;
  auto w = open_set(PhaseMode::write, 3);
  for (uint64_t step : {1, 2}) {
    const auto data = fill(3, step);
    ok = ok && data.size() == w->local_bytes();
    w->write(data.data());
    w->close();
  }
  w->define(specs[3]);
  if (rank == 0) w->add_block(3, {0, 0}, {3, 7});
  const auto last = fill(4, 3);
  ok = ok && last.size() == w->local_bytes();
  w->write(last.data());
  w->close();
  auto r = open_set(PhaseMode::read, 4);
  if (rank == 0) r->add_block(3, {0, 0}, {3, 7});
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<std::byte> back(last.size(), std::byte{0xEE});
    r->read(back.data());
    r->close();
    ok = ok && back == last;
  }
  ok = everyone(ok);
  if (rank == 0) {
    std::printf("%s one set moved three times (a dataset declared between moves), %s container, read twice\n",
                ok ? "ok  " : "FAIL", container_name(c).c_str());
  }
  return ok;
}

std::vector<char> slurp(const std::string& path, uint64_t offset, uint64_t n);

// Each rank's part of a dataset declared back to front in 4 KiB runs, written and read by their
// owners (strata_strategy=direct): the runs touch in the file but not in the buffer, so the engine
// moves each rank's part with vectored calls straight from and into the buffer.
bool gathered_direct(Engine& engine, const std::string& path) {
  const uint64_t run = 4096, runs = 8;
  const DatasetSpec spec{"g", ElemType::u8, {run * runs * static_cast<uint64_t>(size)}, {}};
  const std::vector<Phase::Hint> hints = {{"strata_strategy", "direct"}};
  auto declare_back_to_front = [&](DatasetSet& set) {
    set.define(spec);
    for (uint64_t k = runs; k-- > 0;) set.add_flat(0, (static_cast<uint64_t>(rank) * runs + k) * run, run);
  };
  std::vector<std::byte> data(run * runs);
  for (uint64_t k = runs, at = 0; k-- > 0;) {  // in declaration order: element i of run k
    for (uint64_t i = 0; i < run; ++i) {
      std::byte v[8];
      generate_value({spec.name, spec.type, spec.shape}, (static_cast<uint64_t>(rank) * runs + k) * run + i, {9, 0}, v);
      data[at++] = v[0];
    }
  }
  DatasetSet w(engine, path, PhaseMode::write, Container::raw, hints);
  declare_back_to_front(w);
  w.write(data.data());
  const PhaseStats ws = w.close();
  DatasetSet r(engine, path, PhaseMode::read, Container::raw, hints);
  declare_back_to_front(r);
  std::vector<std::byte> back(data.size(), std::byte{0xEE});
  r.read(back.data());
  r.close();
  // On the file, in file order: every value where the generator puts it.
  bool ok = back == data && ws.direct_bytes == data.size();
  if (rank == 0) {
    const std::vector<char> file = slurp(path, 0, spec.shape[0]);
    for (uint64_t i = 0; i < spec.shape[0] && ok; ++i) {
      std::byte v[8];
      generate_value({spec.name, spec.type, spec.shape}, i, {9, 0}, v);
      ok = static_cast<std::byte>(file[i]) == v[0];
    }
  }
  const bool all = everyone(ok);
  if (rank == 0)
    std::printf("%s runs declared back to front, written and read direct (vectored)\n", all ? "ok  " : "FAIL");
  return all;
}

// add_blocks_like: datasets declared like an earlier one (b like a, c like b) write what
// add_block with each of a's blocks writes for each, byte for byte, from the same buffer.
bool declared_like(Engine& engine, const std::string& dir) {
  auto write = [&](const std::string& path, bool like) {
    DatasetSet s(engine, path, PhaseMode::write, Container::raw);
    for (const char* name : {"a", "b", "c"}) s.define({name, ElemType::f32, {4, 30}, {}});
    const uint64_t row = static_cast<uint64_t>(rank % 4), shift = static_cast<uint64_t>(rank / 4);
    for (int ds = 0; ds < 3; ++ds) {
      if (like && ds > 0) {
        s.add_blocks_like(ds, ds - 1);
        continue;
      }
      for (uint64_t k : {2u, 0u, 1u}) s.add_block(ds, {row, (k * 10 + 7 * shift) % 28}, {1, 2});
    }
    std::vector<std::byte> buffer(s.local_bytes());
    for (size_t i = 0; i < buffer.size(); ++i)
      buffer[i] = static_cast<std::byte>(i * 7 + static_cast<size_t>(rank) * 31 + 1);
    s.write(buffer.data());
    s.close();
  };
  const std::string blocks = dir + "/declared_like.blocks.dat", like = dir + "/declared_like.like.dat";
  write(blocks, false);
  write(like, true);
  bool same = true;
  if (rank == 0) same = slurp(blocks, 0, 3 * 4 * 30 * 4) == slurp(like, 0, 3 * 4 * 30 * 4);
  same = everyone(same);
  if (rank == 0)
    std::printf("%s datasets declared like another write what their blocks write\n", same ? "ok  " : "FAIL");
  return same;
}

bool expect_failure(const std::string& name, const std::string& fragment, const std::function<void()>& body) {
  std::string message;
  try {
    body();
  } catch (const Error& e) {
    message = e.what();
  }
  int len = static_cast<int>(message.size()), lo = 0, hi = 0;
  MPI_Allreduce(&len, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&len, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const bool ok = everyone(lo == hi && message.find(fragment) != std::string::npos);
  if (rank == 0) std::printf("%s %s: %s\n", ok ? "ok  " : "FAIL", name.c_str(), message.c_str());
  return ok;
}

std::vector<char> slurp(const std::string& path, uint64_t offset, uint64_t n) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::vector<char> out(n);
  in.read(out.data(), static_cast<std::streamsize>(n));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  const std::string tag = "/datasets_api.np" + std::to_string(size);
  bool ok = true;
  {
    Engine engine(MPI_COMM_WORLD);
    for (MemoryOrder order : {MemoryOrder::blocks, MemoryOrder::file}) {
      ok &= round_trip(engine, dir + tag + ".dat", Container::raw, order);
#ifdef STRATA_HAVE_HDF5
      ok &= round_trip(engine, dir + tag + ".h5", Container::hdf5, order);
#endif
    }
    ok &= moved_again(engine, dir + tag + ".again.dat", Container::raw);
    ok &= gathered_direct(engine, dir + tag + ".gathered.dat");
    if (size <= 4) ok &= declared_like(engine, dir);
#ifdef STRATA_HAVE_HDF5
    ok &= moved_again(engine, dir + tag + ".again.h5", Container::hdf5);
#endif
#ifdef STRATA_HAVE_HDF5
    // The same bytes for every dataset in both containers (raw: datasets from offset 0).
    {
      DatasetSet r(engine, dir + tag + ".h5", PhaseMode::read, Container::hdf5);
      const Declared d = declare(r, MemoryOrder::blocks);
      std::vector<std::byte> sink(r.local_bytes());
      r.read(sink.data());
      r.close();
      bool same = true;
      if (rank == 0) {
        // The offsets the container holds, through its own reader.
        std::vector<uint64_t> raw_at = {0, 6 * 10 * 8, 6 * 10 * 8 + 50 * 4};
        std::vector<uint64_t> bytes = {6 * 10 * 8, 50 * 4, 64};
        const std::string h5 = dir + tag + ".h5";
        std::ifstream probe(h5, std::ios::binary);
        std::vector<char> all((std::istreambuf_iterator<char>(probe)), std::istreambuf_iterator<char>());
        for (size_t i = 0; i < 3; ++i) {
          const auto raw = slurp(dir + tag + ".dat", raw_at[i], bytes[i]);
          // Find the dataset's bytes in the HDF5 file: they must appear there whole.
          same = same && std::search(all.begin(), all.end(), raw.begin(), raw.end()) != all.end();
        }
      }
      same = everyone(same);
      if (rank == 0) std::printf("%s raw and HDF5 containers hold the same dataset bytes\n", same ? "ok  " : "FAIL");
      ok &= same;
    }
    ok &= expect_failure("subfiling into an HDF5 container", "strata_subfiling does not apply", [&] {
      DatasetSet s(engine, dir + tag + ".bad.h5", PhaseMode::write, Container::hdf5, {{"strata_subfiling", "2"}});
    });
#endif
    ok &= expect_failure("overlapping blocks on rank 0", "overlap at element", [&] {
      DatasetSet s(engine, dir + tag + ".bad.dat", PhaseMode::write, Container::raw);
      s.define({"x", ElemType::i32, {10}, {}});
      s.add_flat(0, static_cast<uint64_t>(rank) * 0, rank == 0 ? 4 : 0);
      if (rank == 0) s.add_flat(0, 2, 4);
      std::vector<std::byte> buf(s.local_bytes());
      s.write(buf.data());
    });
    ok &= expect_failure("a dataset declared like one whose blocks lie apart", "lie apart in the buffer", [&] {
      DatasetSet s(engine, dir + tag + ".bad.dat", PhaseMode::write, Container::raw);
      for (const char* name : {"a", "b", "c"}) s.define({name, ElemType::i32, {4, 10}, {}});
      const uint64_t row = static_cast<uint64_t>(rank % 4);
      s.add_block(0, {row, 0}, {1, 2});
      s.add_block(1, {row, 0}, {1, 2});
      s.add_block(0, {row, 5}, {1, 2});
      s.add_blocks_like(2, 0);
      std::vector<std::byte> buf(s.local_bytes());
      s.write(buf.data());
    });
    ok &= expect_failure("a block on a dataset another is declared like", "declare its blocks first", [&] {
      DatasetSet s(engine, dir + tag + ".bad.dat", PhaseMode::write, Container::raw);
      for (const char* name : {"a", "b"}) s.define({name, ElemType::i32, {4, 10}, {}});
      const uint64_t row = static_cast<uint64_t>(rank % 4);
      s.add_block(0, {row, 0}, {1, 2});
      s.add_blocks_like(1, 0);
      if (rank == 0) s.add_block(0, {row, 5}, {1, 2});
      std::vector<std::byte> buf(s.local_bytes());
      s.write(buf.data());
    });
    // Two-phase rounds as the paper's Table I estimates them: per call, the file span over
    // (aggregators x cb_buffer_size), rounded up. Call 1: rank r holds MiB [r, r + 1), so the
    // span is `size` MiB; call 2: nobody moves anything; call 3: only rank 0, 1 byte.
    {
      const uint64_t mib = 1 << 20;
      const uint64_t r = static_cast<uint64_t>(rank);
      std::vector<CallSpan> spans = {{r * mib, (r + 1) * mib}, {}, rank == 0 ? CallSpan{5, 6} : CallSpan{}};
      const uint64_t got = two_phase_rounds(MPI_COMM_WORLD, spans, {2, mib});
      const uint64_t want = (static_cast<uint64_t>(size) + 1) / 2 + 0 + 1;
      const bool same = everyone(got == want);
      const auto g = two_phase_geometry({{"cb_nodes", "4"}, {"cb_buffer_size", "8388608"}});
      const bool hints = everyone(g.aggregators == 4 && g.buffer_bytes == 8 * mib);
      if (rank == 0) {
        std::printf("%s two-phase rounds: %llu (want %llu); geometry from hints %s\n", same ? "ok  " : "FAIL",
                    static_cast<unsigned long long>(got), static_cast<unsigned long long>(want), hints ? "ok" : "FAIL");
      }
      ok &= same && hints;
    }
    // A bad declaration on one rank is raised on every rank by the write, not by the
    // declaration: the others never wait for it in a collective.
    ok &= expect_failure("undefined dataset on rank 0", "dataset id 3 is not defined", [&] {
      DatasetSet s(engine, dir + tag + ".bad.dat", PhaseMode::write, Container::raw);
      s.define({"x", ElemType::i32, {10}, {}});
      if (rank == 0) s.add_flat(3, 0, 1);
      std::vector<std::byte> buf(s.local_bytes());
      s.write(buf.data());
    });
#ifdef STRATA_HAVE_HDF5
    ok &= expect_failure("a block past the dataset on the last rank (HDF5 container)", "reaches past", [&] {
      DatasetSet s(engine, dir + tag + ".bad2.h5", PhaseMode::write, Container::hdf5);
      s.define({"x", ElemType::i32, {10}, {}});
      if (rank == size - 1) s.add_block(0, {8}, {4});
      std::vector<std::byte> buf(s.local_bytes());
      s.write(buf.data());
    });
#endif
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
