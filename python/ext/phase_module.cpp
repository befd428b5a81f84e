// strata._phase: the Python binding of the engine's Phase API (include/strata/strata.hpp).
//
//   from mpi4py import MPI
//   import numpy as np, strata
//   with strata.Phase(MPI.COMM_WORLD, "out.dat", "w") as phase:
//       t = phase.define_variable("t", (nz, ny, nx), np.float64)
//       phase.add_subarray(t, (z0, y0, x0), block)     # block: a numpy array, not copied
//       phase.plan(); phase.write()
//       stats = phase.close()                           # a dict
//
// A communicator comes from mpi4py (its C API hands over the MPI_Comm); arrays are taken by
// reference (nanobind's ndarray, no copy) and kept alive until close(). Declarations are
// recorded and handed to a strata::Phase at plan(): with container "hdf5" the datasets' file
// offsets exist only once HDF5 made the file. A bad declaration — the engine's own checks, or
// the binding's (dtype, memory layout, read-only array to read into) — is raised by plan() on
// every rank, as the engine raises its own: never on one rank alone, which would leave the others
// waiting in a collective. strata::Error becomes strata.Error, with the exit status class.
#include <mpi.h>
#include <mpi4py/mpi4py.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "datasets/datasets.hpp"
#include "strata/strata.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using Array = nb::ndarray<nb::ro, nb::device::cpu>;

PyObject* error_type = nullptr;  // strata.Error (created at import; lives as long as the module)

const char* kind_name(strata::ErrorKind kind) {
  switch (kind) {
    case strata::ErrorKind::usage: return "usage";
    case strata::ErrorKind::verification: return "verification";
    case strata::ErrorKind::timeout: return "timeout";
    case strata::ErrorKind::runtime: break;
  }
  return "runtime";
}

void raise_strata_error(const strata::Error& e) {
  nb::object type = nb::borrow<nb::object>(error_type);
  nb::object exc = type(e.what());
  exc.attr("status") = e.exit_status();
  exc.attr("kind") = kind_name(e.kind());
  PyErr_SetObject(error_type, exc.ptr());
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

// The engine of a communicator: created collectively, freed collectively by close() (or when
// the object goes, if MPI is still running; after MPI_Finalize it is left to the process's end).
class PyEngine {
 public:
  explicit PyEngine(nb::handle comm) {
    MPI_Comm* c = PyMPIComm_Get(comm.ptr());
    if (c == nullptr) throw nb::python_error();
    if (*c == MPI_COMM_NULL) strata::throw_usage("strata.Engine needs a communicator, not MPI.COMM_NULL");
    const MPI_Comm mpi_comm = *c;
    nb::gil_scoped_release release;
    engine_ = std::make_unique<strata::Engine>(mpi_comm);
  }
  ~PyEngine() {
    if (engine_ && mpi_finalized()) (void)engine_.release();
  }
  PyEngine(const PyEngine&) = delete;
  PyEngine& operator=(const PyEngine&) = delete;

  void close() {
    nb::gil_scoped_release release;
    engine_.reset();
  }
  bool closed() const { return !engine_; }
  strata::Engine& engine() {
    if (!engine_) strata::throw_usage("this strata.Engine is closed");
    return *engine_;
  }
  uint64_t executions() const { return engine_ ? engine_->executions() : 0; }
  int rank() {
    int r = 0;
    MPI_Comm_rank(engine().comm(), &r);
    return r;
  }

 private:
  std::unique_ptr<strata::Engine> engine_;
};

// numpy's description of a dtype: kind ('f', 'i', 'u', ...), bytes, name ("float64"), and
// whether it is in this machine's byte order.
struct DType {
  char kind = 'u';
  size_t itemsize = 1;
  std::string name;
  bool native = true;
  std::string spelled;  // str(dtype): ">f8"
};

DType numpy_dtype(nb::handle dtype) {
  nb::object d = nb::module_::import_("numpy").attr("dtype")(dtype);
  return {nb::cast<std::string>(d.attr("kind"))[0], nb::cast<size_t>(d.attr("itemsize")),
          nb::cast<std::string>(d.attr("name")), nb::cast<bool>(d.attr("isnative")), nb::str(d).c_str()};
}

char dlpack_kind(const nb::dlpack::dtype& t) {
  switch (static_cast<nb::dlpack::dtype_code>(t.code)) {
    case nb::dlpack::dtype_code::Int: return 'i';
    case nb::dlpack::dtype_code::UInt: return 'u';
    case nb::dlpack::dtype_code::Float: return 'f';
    case nb::dlpack::dtype_code::Complex: return 'c';
    case nb::dlpack::dtype_code::Bool: return 'b';
    default: return '?';
  }
}

// numpy's name of an array's dtype ("float32").
std::string dtype_name(const nb::dlpack::dtype& t) {
  switch (dlpack_kind(t)) {
    case 'i': return "int" + std::to_string(t.bits);
    case 'u': return "uint" + std::to_string(t.bits);
    case 'f': return "float" + std::to_string(t.bits);
    case 'c': return "complex" + std::to_string(t.bits);
    case 'b': return "bool";
    default: return "an unknown type";
  }
}

nb::dict drain_dict(const strata::DrainStats& s) {
  nb::dict d;
  d["drained"] = s.drained;
  d["fallback"] = s.fallback;
  d["target"] = s.target;
  d["note"] = s.note;
  d["return_s"] = s.return_s;
  d["durable_s"] = s.durable_s;
  d["copy_s"] = s.copy_s;
  d["bytes"] = s.bytes;
  return d;
}

nb::dict stats_dict(const strata::PhaseStats& s) {
  nb::dict d;
  d["plan_s"] = s.plan_s;
  d["aggregation_s"] = s.aggregation_s;
  d["io_s"] = s.io_s;
  d["wait_s"] = s.wait_s;
  d["close_s"] = s.close_s;
  d["execute_s"] = s.execute_s;
  d["commit_s"] = s.commit_s;
  d["rounds"] = s.rounds;
  d["bytes"] = s.bytes;
  d["direct_bytes"] = s.direct_bytes;
  d["aggregators"] = s.aggregators;
  d["fs_requests"] = s.fs_requests;
  d["buffer_bytes"] = s.buffer_bytes;
  d["buffers"] = s.buffers;
  d["aggregator"] = s.aggregator;
  d["plan_signature"] = s.plan_signature;
  d["tier"] = s.tier;
  d["tier_fallbacks"] = s.tier_fallbacks;
  d["strategy"] = s.strategy;
  d["predicted_s"] = s.predicted_s;
  d["operations"] = s.operations;
  d["collectives"] = s.collectives;
  return d;
}

std::string join(const std::vector<uint64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

class PyPhase {
 public:
  PyPhase(nb::object target, std::string path, const std::string& mode, std::optional<nb::dict> hints,
          const std::string& container)
      : path_(std::move(path)) {
    if (nb::isinstance<PyEngine>(target)) {
      engine_obj_ = target;
    } else {
      engine_obj_ = nb::cast(new PyEngine(target), nb::rv_policy::take_ownership);
      owns_engine_ = true;
    }
    engine_ = nb::cast<PyEngine*>(engine_obj_);
    if (mode == "w" || mode == "write") {
      mode_ = strata::PhaseMode::write;
    } else if (mode == "r" || mode == "read") {
      mode_ = strata::PhaseMode::read;
    } else {
      record("mode \"" + mode + "\" is neither \"w\" (write) nor \"r\" (read)");
    }
    if (auto c = strata::caught([&] { container_ = strata::container_from_name(container); })) record(c->what());
    if (hints) {
      for (auto [key, value] : *hints) {  // values as text; True and False as the engine spells them
        const std::string text = nb::isinstance<nb::bool_>(value) ? (nb::cast<bool>(value) ? "true" : "false")
                                                                  : std::string(nb::str(value).c_str());
        hints_.emplace_back(nb::str(key).c_str(), text);
      }
    }
  }
  ~PyPhase() {
    if (phase_ && mpi_finalized()) (void)phase_.release();
  }

  int define_variable(const std::string& name, const std::vector<uint64_t>& shape, nb::handle dtype,
                      std::optional<uint64_t> offset) {
    require_declaring("define_variable");
    Variable v{name, {}, shape, offset};
    try {
      v.dtype = numpy_dtype(dtype);
    } catch (const nb::python_error&) {
      record("variable \"" + name + "\": dtype " + nb::repr(dtype).c_str() + " is not a numpy dtype");
    }
    if (!v.dtype.native) {
      record("variable \"" + name + "\": dtype " + v.dtype.spelled +
             " is not in this machine's byte order (arrays are "
             "taken without copies, and only in native order)");
    }
    if (container_ == strata::Container::hdf5) {
      if (offset) record("variable \"" + name + "\": an HDF5 container places its datasets itself (give no offset)");
      if (auto e = strata::caught([&] { (void)strata::elem_type_from_name(v.dtype.name); })) {
        record("variable \"" + name + "\": " + e->what() + " in an HDF5 container");
      }
    }
    vars_.push_back(std::move(v));
    return static_cast<int>(vars_.size()) - 1;
  }

  void add_subarray(int var, const std::vector<uint64_t>& start, nb::handle data,
                    std::optional<std::vector<uint64_t>> count) {
    require_declaring("add_subarray");
    const Variable* v = variable(var, "add_subarray");
    Block b{var, start, {}, 0, 0, nullptr, 0};
    std::optional<Array> a = array(v, data, "subarray");
    if (!v || !a) return;
    uint64_t elements = 1;
    std::vector<uint64_t> shape;
    for (size_t k = 0; k < a->ndim(); ++k) {
      shape.push_back(a->shape(k));
      elements *= a->shape(k);
    }
    b.count = count ? *count : shape;
    if (!count && shape.size() != v->shape.size()) {
      return record("variable \"" + v->name + "\": a " + std::to_string(shape.size()) + "-D array for a " +
                    std::to_string(v->shape.size()) + "-D variable (give count=)");
    }
    uint64_t counted = 1;
    for (uint64_t c : b.count) counted *= c;
    if (counted != elements) {
      return record("variable \"" + v->name + "\": count " + join(b.count) + " holds " + std::to_string(counted) +
                    " elements, the array " + std::to_string(elements));
    }
    const std::optional<size_t> stride = element_stride(*a);
    if (!stride) {
      return record("variable \"" + v->name +
                    "\": the array's elements are not evenly spaced in memory (pass a "
                    "C-contiguous array: numpy.ascontiguousarray makes one)");
    }
    b.memory = const_cast<void*>(a->data());
    b.stride = *stride == 1 ? 0 : *stride * v->dtype.itemsize;
    blocks_.push_back(std::move(b));
    arrays_.push_back(std::move(*a));
  }

  void add_extent(int var, uint64_t file_offset, nb::handle data) {
    require_declaring("add_extent");
    const Variable* v = variable(var, "add_extent");
    std::optional<Array> a = array(v, data, "extent");
    if (!v || !a) return;
    if (element_stride(*a) != std::optional<size_t>(1)) {
      return record("variable \"" + v->name + "\": an extent's array must be C-contiguous");
    }
    blocks_.push_back({var, {}, {}, file_offset, a->nbytes(), const_cast<void*>(a->data()), 0});
    blocks_.back().extent = true;
    arrays_.push_back(std::move(*a));
  }

  void plan() {
    require_declaring("plan");
    state_ = State::failed;  // until the plan succeeds
    strata::Engine& engine = engine_->engine();
    std::vector<uint64_t> offsets;
    if (container_ == strata::Container::hdf5) {
      // Agree on the declarations before HDF5 makes the file, so a bad one leaves no file.
      nb::gil_scoped_release release;
      strata::collectively(engine.comm(), "declarations", [&] {
        if (first_error_) strata::throw_usage(*first_error_);
      });
      std::vector<strata::DatasetSpec> specs;
      for (const Variable& v : vars_) specs.push_back({v.name, strata::elem_type_from_name(v.dtype.name), v.shape, {}});
      offsets = strata::container_offsets(engine.comm(), path_, mode_, container_, specs);
      made_container_ = mode_ == strata::PhaseMode::write;
    } else {
      uint64_t end = 0;
      for (const Variable& v : vars_) {
        offsets.push_back(v.offset.value_or(end));
        uint64_t bytes = v.dtype.itemsize;
        for (uint64_t d : v.shape) bytes *= d;
        end = offsets.back() + bytes;
      }
    }
    phase_ =
        std::make_unique<strata::Phase>(engine, path_, mode_, strata::container_phase_hints(container_, mode_, hints_));
    if (first_error_) phase_->fail(*first_error_);
    for (size_t i = 0; i < vars_.size(); ++i) {
      phase_->define_variable(vars_[i].name, vars_[i].dtype.itemsize, vars_[i].shape, offsets[i]);
    }
    for (const Block& b : blocks_) {
      if (b.extent) {
        phase_->add_extent(b.var, offsets[static_cast<size_t>(b.var)] + b.file_offset, b.length, b.memory);
      } else if (b.start.size() != b.count.size() || b.count.size() != vars_[static_cast<size_t>(b.var)].shape.size()) {
        phase_->fail("variable \"" + vars_[static_cast<size_t>(b.var)].name + "\": subarray start " + join(b.start) +
                     " and count " + join(b.count) + " do not have the variable's " +
                     std::to_string(vars_[static_cast<size_t>(b.var)].shape.size()) + " dimensions");
      } else {
        phase_->add_subarray(b.var, b.start, b.count, b.memory, b.stride);
      }
    }
    collective_step([&] { phase_->plan(); });
    state_ = State::planned;
  }

  void write() { execute(strata::PhaseMode::write); }
  void read() { execute(strata::PhaseMode::read); }

  // Collective. The phase-wide statistics (maxima of times, sums of bytes and requests), with
  // this rank's own under "local"; None for a phase that never planned or whose plan failed.
  nb::object close() {
    if (state_ == State::closed) return nb::none();
    const State was = state_;
    state_ = State::closed;
    nb::object result = nb::none();
    std::optional<strata::Error> failure;
    if (was == State::planned || was == State::executed) {
      strata::PhaseStats local, max;
      failure = strata::caught([&] {
        nb::gil_scoped_release release;
        local = phase_->close(&max);
      });
      if (!failure) {
        nb::dict d = stats_dict(max);
        d["local"] = stats_dict(local);
        result = d;
      }
    }
    phase_.reset();
    arrays_.clear();
    if (failure) remove_made_container();
    if (owns_engine_ && !failure) {  // the engine goes with the phase: its drain is waited for first
      failure = strata::caught([&] {
        nb::gil_scoped_release release;
        drain_ = engine_->engine().wait_drain(path_);
      });
    }
    if (owns_engine_) engine_->close();
    if (failure) throw *failure;
    return result;
  }

  // Collective, after close(): with hint strata_drain, waits until the data is durable on the
  // target; both moments as a dict (drained False when the phase had no drain).
  nb::dict wait_drain() {
    if (state_ != State::closed) strata::throw_usage("Phase.wait_drain after close() (the drain starts at close)");
    if (!drain_ && !engine_->closed()) {
      nb::gil_scoped_release release;
      drain_ = engine_->engine().wait_drain(path_);
    }
    return drain_dict(drain_.value_or(strata::DrainStats{}));
  }

  std::string path() const { return path_; }
  std::string mode() const { return mode_ == strata::PhaseMode::write ? "w" : "r"; }
  std::string container() const { return strata::container_name(container_); }
  nb::object engine() const { return engine_obj_; }

 private:
  struct Variable {
    std::string name;
    DType dtype;
    std::vector<uint64_t> shape;
    std::optional<uint64_t> offset;
  };
  struct Block {
    int var;
    std::vector<uint64_t> start, count;
    uint64_t file_offset, length;  // an extent: bytes from the variable's start
    void* memory;
    size_t stride;  // bytes between elements; 0: contiguous
    bool extent = false;
  };
  enum class State { declaring, planned, executed, failed, closed };

  void record(const std::string& message) {
    if (!first_error_) first_error_ = message;
  }

  void require_declaring(const char* what) const {
    if (state_ != State::declaring) {
      strata::throw_usage(std::string("Phase.") + what + " after plan(): declare every variable and block first");
    }
  }

  const Variable* variable(int var, const char* what) {
    if (var < 0 || static_cast<size_t>(var) >= vars_.size()) {
      record(std::string(what) + ": no variable " + std::to_string(var) + " (" + std::to_string(vars_.size()) +
             " defined)");
      return nullptr;
    }
    return &vars_[static_cast<size_t>(var)];
  }

  // The array `data` as the binding holds it (a reference, no copy), or nothing with the
  // problem recorded: not an array, another dtype than the variable's, read-only for a read.
  std::optional<Array> array(const Variable* v, nb::handle data, const char* what) {
    Array a;
    if (!nb::try_cast(data, a, false)) {
      record(std::string(what) + ": a " + nb::type_name(data.type()).c_str() +
             " cannot be taken as an array without a copy (pass a numpy array of a numeric dtype in native byte "
             "order)");
      return std::nullopt;
    }
    if (v == nullptr) return std::nullopt;
    if (dlpack_kind(a.dtype()) != v->dtype.kind || a.itemsize() != v->dtype.itemsize) {
      record("variable \"" + v->name + "\": the " + what + "'s array is " + dtype_name(a.dtype()) +
             ", another dtype than the variable's " + v->dtype.name);
      return std::nullopt;
    }
    if (mode_ == strata::PhaseMode::read) {
      nb::ndarray<nb::device::cpu> writable;
      if (!nb::try_cast(data, writable, false)) {
        record("variable \"" + v->name + "\": the " + what + "'s array is read-only: a read phase writes into it");
        return std::nullopt;
      }
    }
    return a;
  }

  // Elements of the array, in C order, are `stride` elements apart; nothing when their spacing
  // varies (a slice of a slice) or runs backwards.
  static std::optional<size_t> element_stride(const Array& a) {
    std::optional<int64_t> step;
    int64_t expect = 0;
    for (size_t k = a.ndim(); k-- > 0;) {
      if (a.shape(k) == 1) continue;
      if (!step) {
        step = a.stride(static_cast<size_t>(k));
        expect = *step;
      }
      if (a.stride(static_cast<size_t>(k)) != expect) return std::nullopt;
      expect *= static_cast<int64_t>(a.shape(k));
    }
    if (!step) return 1;
    if (*step <= 0) return std::nullopt;
    return static_cast<size_t>(*step);
  }

  void execute(strata::PhaseMode mode) {
    if (state_ == State::declaring) plan();
    if (state_ != State::planned) {
      strata::throw_usage(
          std::string("Phase.") + (mode == strata::PhaseMode::write ? "write" : "read") +
          (state_ == State::executed ? ": this phase moved its data already" : ": the phase failed or is closed"));
    }
    state_ = State::failed;
    collective_step([&] {
      if (mode == strata::PhaseMode::write) {
        phase_->write();
      } else {
        phase_->read();
      }
    });
    state_ = State::executed;
  }

  // A collective step of the phase, the GIL released; when it fails (on every rank alike), the
  // phase is dropped and an HDF5 container this phase made is removed.
  template <class F>
  void collective_step(F&& fn) {
    std::optional<strata::Error> failure;
    {
      nb::gil_scoped_release release;
      failure = strata::caught(fn);
    }
    if (failure) {
      phase_.reset();
      remove_made_container();
      throw *failure;
    }
  }

  void remove_made_container() {
    if (made_container_ && engine_->rank() == 0) std::remove(path_.c_str());
    made_container_ = false;
  }

  nb::object engine_obj_;
  PyEngine* engine_ = nullptr;
  bool owns_engine_ = false;
  std::optional<strata::DrainStats> drain_;  // the drain's moments, once waited for
  std::string path_;
  strata::PhaseMode mode_ = strata::PhaseMode::write;
  strata::Container container_ = strata::Container::raw;
  std::vector<strata::Phase::Hint> hints_;
  std::vector<Variable> vars_;
  std::vector<Block> blocks_;
  std::vector<Array> arrays_;  // the blocks' arrays, held until close()
  std::optional<std::string> first_error_;
  std::unique_ptr<strata::Phase> phase_;
  bool made_container_ = false;
  State state_ = State::declaring;
};

}  // namespace

NB_MODULE(_phase, m) {
  m.doc() = "Strata's aggregation engine: one planned, pipelined collective phase (docs/python.md)";
  if (import_mpi4py() < 0) throw nb::python_error();
  error_type = PyErr_NewExceptionWithDoc(
      "strata.Error",
      "A failure of Strata, raised on every rank of the phase alike. `status` is the exit status class "
      "(1 I/O or system, 2 bad input, 3 verification, 4 timeout) and `kind` its name.",
      PyExc_RuntimeError, nullptr);
  m.attr("Error") = nb::handle(error_type);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const strata::Error& e) {
      raise_strata_error(e);
    }
  });

  nb::class_<PyEngine>(m, "Engine",
                       "The engine's context on an mpi4py communicator: its node map and aggregation buffers, "
                       "kept from phase to phase. Creating and closing it are collective.")
      .def(nb::init<nb::handle>(), "comm"_a)
      .def("close", &PyEngine::close, "Frees the engine (collective).")
      .def_prop_ro("closed", &PyEngine::closed)
      .def_prop_ro("executions", &PyEngine::executions, "write() or read() calls this engine has run")
      .def("__enter__", [](nb::handle self) { return self; })
      .def("__exit__", [](PyEngine& e, nb::args) { e.close(); });

  nb::class_<PyPhase>(m, "Phase",
                      "One output (or input) step: declare variables and blocks, plan(), write() or read(), "
                      "close(). `target` is a strata.Engine or an mpi4py communicator (the phase then has an "
                      "engine of its own, freed by close()).")
      .def(nb::init<nb::object, std::string, const std::string&, std::optional<nb::dict>, const std::string&>(),
           "target"_a, "path"_a, "mode"_a = "w", "hints"_a = nb::none(), "container"_a = "raw")
      .def("define_variable", &PyPhase::define_variable, "name"_a, "shape"_a, "dtype"_a, "offset"_a = nb::none(),
           "Defines a variable (the same on every rank, in the same order): its global shape, slowest "
           "dimension first, and numpy dtype. `offset`: the file offset of its row-major array; by default "
           "right after the previous variable. Returns its id.")
      .def("add_subarray", &PyPhase::add_subarray, "var"_a, "start"_a, "data"_a, "count"_a = nb::none(),
           "This rank's block of variable `var` at `start`: a numpy array of the variable's dtype, of shape "
           "`count` (by default the array's shape). Not copied: keep it unchanged until the phase is closed.")
      .def("add_extent", &PyPhase::add_extent, "var"_a, "offset"_a, "data"_a,
           "A run of bytes of variable `var` at byte `offset` from the variable's start: a C-contiguous array.")
      .def("plan", &PyPhase::plan, "Collective: checks every rank's declarations and plans the phase.")
      .def("write", &PyPhase::write, "Collective: moves every block to the file in one execution.")
      .def("read", &PyPhase::read, "Collective: fills every block from the file.")
      .def("wait_drain", &PyPhase::wait_drain,
           "Collective, after close(): with hint strata_drain=PATH, waits until the data is durable on PATH; "
           "returns both moments (return_s, durable_s) as a dict.")
      .def("close", &PyPhase::close,
           "Collective: finishes and commits the phase; returns its statistics as a dict (phase-wide maxima "
           "of times, sums of bytes; this rank's under \"local\").")
      .def_prop_ro("path", &PyPhase::path)
      .def_prop_ro("mode", &PyPhase::mode)
      .def_prop_ro("container", &PyPhase::container)
      .def_prop_ro("engine", &PyPhase::engine)
      .def("__enter__", [](nb::handle self) { return self; })
      .def("__exit__", [](PyPhase& p, nb::args) { p.close(); });

  // Users meet them as strata.Phase and strata.Engine (python/strata/__init__.py).
  for (const char* name : {"Engine", "Phase"}) m.attr(name).attr("__module__") = "strata";
}
