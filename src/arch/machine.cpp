#include "arch/machine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <toml++/toml.h>

#include "common/error.hpp"
#include "common/units.hpp"

namespace strata {

const char* topology_kind_name(Topology::Kind k) {
  switch (k) {
    case Topology::Kind::flat: return "flat";
    case Topology::Kind::fat_tree: return "fat-tree";
    case Topology::Kind::dragonfly: return "dragonfly";
    case Topology::Kind::torus: return "torus";
    case Topology::Kind::matrix: return "matrix";
  }
  return "?";
}

namespace {

std::vector<int> torus_coords(const Topology& t, int node) {
  if (!t.coords.empty()) return t.coords[static_cast<size_t>(node)];
  std::vector<int> c(t.dims.size());
  for (size_t d = t.dims.size(); d-- > 0;) {
    c[d] = node % t.dims[d];
    node /= t.dims[d];
  }
  return c;
}

}  // namespace

int Topology::nodes_covered() const {
  switch (kind) {
    case Kind::matrix: return static_cast<int>(matrix.size());
    case Kind::torus: {
      if (!coords.empty()) return static_cast<int>(coords.size());
      long n = 1;
      for (int d : dims) n *= d;
      return static_cast<int>(std::min<long>(n, 1 << 30));
    }
    default: return 0;
  }
}

double Topology::distance(int a, int b) const {
  if (a == b) return 0;
  const int covered = nodes_covered();
  if (covered > 0 && (a >= covered || b >= covered)) {
    throw_usage(std::string("the machine's ") + topology_kind_name(kind) + " topology describes " +
                std::to_string(covered) + " nodes, the job has node " + std::to_string(std::max(a, b)) +
                " (describe every node, or use a topology function: flat, fat-tree, dragonfly)");
  }
  switch (kind) {
    case Kind::flat: return 1;
    case Kind::fat_tree: {
      // Up to the lowest common switch and down again: 2 hops per level climbed.
      long group = 1;
      for (size_t level = 0; level < arity.size(); ++level) {
        group *= arity[level];
        if (a / group == b / group) return 2.0 * static_cast<double>(level + 1);
      }
      return 2.0 * static_cast<double>(arity.size() + 1);
    }
    case Kind::dragonfly: {
      // Same router: through it (1); same group: router to router (2); other group: 3 (minimal route).
      const int ra = a / nodes_per_router, rb = b / nodes_per_router;
      if (ra == rb) return 1;
      if (ra / routers_per_group == rb / routers_per_group) return 2;
      return 3;
    }
    case Kind::torus: {
      const auto ca = torus_coords(*this, a), cb = torus_coords(*this, b);
      double hops = 0;
      for (size_t d = 0; d < dims.size(); ++d) {
        const int diff = std::abs(ca[d] - cb[d]);
        hops += std::min(diff, dims[d] - diff);
      }
      return hops;
    }
    case Kind::matrix: return matrix[static_cast<size_t>(a)][static_cast<size_t>(b)];
  }
  return 1;
}

const TierFigures* Machine::tier(Tier t) const {
  for (const auto& [tt, f] : tiers) {
    if (tt == t) return &f;
  }
  return nullptr;
}

TierFigures* Machine::tier(Tier t) {
  for (auto& [tt, f] : tiers) {
    if (tt == t) return &f;
  }
  return nullptr;
}

double Machine::distance_to_storage(int node) const {
  if (storage_distances.empty()) return storage_distance;
  if (node < 0 || static_cast<size_t>(node) >= storage_distances.size()) {
    throw_usage("the machine's storage.distances lists " + std::to_string(storage_distances.size()) +
                " nodes, the job has node " + std::to_string(node) + " (list every node, or give storage.distance)");
  }
  return storage_distances[static_cast<size_t>(node)];
}

void Machine::check_covers(int nodes) const {
  if (nodes <= 0) return;
  topology.distance(0, nodes - 1);  // names the topology and the node when it does not reach
  if (!storage_distances.empty()) distance_to_storage(nodes - 1);
}

// ---- parsing ----------------------------------------------------------------

namespace {

class Reader {
 public:
  explicit Reader(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(const toml::node* at, const std::string& what) const {
    std::string where = "machine file \"" + name_ + "\"";
    if (at != nullptr && at->source().begin.line > 0) where += ", line " + std::to_string(at->source().begin.line);
    throw_usage(where + ": " + what);
  }

  const toml::table& table(const toml::table& parent, const std::string& key, const std::string& path) const {
    const toml::node* n = parent.get(key);
    if (n == nullptr) fail(&parent, "missing table [" + path + "]");
    if (!n->is_table()) fail(n, "\"" + path + "\" must be a table");
    return *n->as_table();
  }

  const toml::node* field(const toml::table& t, const std::string& key, const std::string& path, bool required) const {
    const toml::node* n = t.get(key);
    if (n == nullptr && required) fail(&t, "missing field \"" + path + "\"");
    return n;
  }

  double number(const toml::table& t, const std::string& key, const std::string& path, bool positive) const {
    const toml::node* n = field(t, key, path, true);
    std::optional<double> v;
    if (n->is_floating_point()) v = n->as_floating_point()->get();
    if (n->is_integer()) v = static_cast<double>(n->as_integer()->get());
    if (!v || !std::isfinite(*v)) fail(n, "field \"" + path + "\" must be a number");
    if (*v < 0) fail(n, "field \"" + path + "\" must not be negative (got " + format(*v) + ")");
    if (positive && *v == 0) fail(n, "field \"" + path + "\" must be greater than 0");
    return *v;
  }

  double number_or(const toml::table& t, const std::string& key, const std::string& path, double fallback) const {
    return t.get(key) == nullptr ? fallback : number(t, key, path, false);
  }

  std::string text(const toml::table& t, const std::string& key, const std::string& path, bool required,
                   const std::string& fallback = {}) const {
    const toml::node* n = field(t, key, path, required);
    if (n == nullptr) return fallback;
    if (!n->is_string()) fail(n, "field \"" + path + "\" must be a string");
    return n->as_string()->get();
  }

  uint64_t size(const toml::table& t, const std::string& key, const std::string& path) const {
    const toml::node* n = field(t, key, path, true);
    if (n->is_integer()) {
      const int64_t v = n->as_integer()->get();
      if (v <= 0) fail(n, "field \"" + path + "\" must be a positive size (bytes, or a string like \"16GiB\")");
      return static_cast<uint64_t>(v);
    }
    if (!n->is_string()) fail(n, "field \"" + path + "\" must be a size (bytes, or a string like \"16GiB\")");
    try {
      const uint64_t v = parse_size(n->as_string()->get(), "field \"" + path + "\"");
      if (v == 0) fail(n, "field \"" + path + "\" must be greater than 0");
      return v;
    } catch (const Error& e) {
      fail(n, e.what());
    }
  }

  std::vector<int> ints(const toml::table& t, const std::string& key, const std::string& path, int min) const {
    const toml::node* n = field(t, key, path, true);
    const toml::array* a = n->as_array();
    if (a == nullptr || a->empty()) fail(n, "field \"" + path + "\" must be a non-empty array of integers");
    std::vector<int> out;
    for (const toml::node& e : *a) {
      if (!e.is_integer() || e.as_integer()->get() < min || e.as_integer()->get() > (1 << 30)) {
        fail(&e, "field \"" + path + "\" must hold integers of at least " + std::to_string(min));
      }
      out.push_back(static_cast<int>(e.as_integer()->get()));
    }
    return out;
  }

  std::vector<double> reals(const toml::node& n, const std::string& path) const {
    const toml::array* a = n.as_array();
    if (a == nullptr) fail(&n, "field \"" + path + "\" must be an array of numbers");
    std::vector<double> out;
    for (const toml::node& e : *a) {
      double v = -1;
      if (e.is_integer()) v = static_cast<double>(e.as_integer()->get());
      if (e.is_floating_point()) v = e.as_floating_point()->get();
      if (!(v >= 0) || !std::isfinite(v)) fail(&e, "field \"" + path + "\" must hold numbers of at least 0");
      out.push_back(v);
    }
    return out;
  }

  static std::string format(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
  }

 private:
  std::string name_;
};

// The [io] table: the engine's figures (arch/io_figures.hpp), in microseconds and GB/s.
IoFigures parse_io(const Reader& rd, const toml::node& node) {
  const toml::table* t = node.as_table();
  if (t == nullptr) rd.fail(&node, "\"io\" must be a table ([io])");
  IoFigures f;
  if (const toml::node* n = t->get("measured")) {
    if (!n->is_boolean()) rd.fail(n, "field \"io.measured\" must be true or false");
    f.measured = n->as_boolean()->get();
  }
  f.probe_ranks = static_cast<int>(rd.number_or(*t, "probe_ranks", "io.probe_ranks", 2));
  if (f.probe_ranks < 1) rd.fail(t->get("probe_ranks"), "field \"io.probe_ranks\" must be at least 1");
  auto us = [&](const char* key, double& v) {
    if (t->get(key) != nullptr) v = rd.number(*t, key, std::string("io.") + key, false) * 1e-6;
  };
  auto gbps = [&](const char* key, double& v, bool positive) {
    if (t->get(key) != nullptr) v = rd.number(*t, key, std::string("io.") + key, positive) * 1e9;
  };
  us("put_latency_us", f.put_latency_s);
  gbps("put_bandwidth_GBps", f.put_bandwidth_Bps, true);
  us("put_run_us", f.put_run_s);
  us("fence_us", f.fence_s);
  us("collective_us", f.collective_s);
  gbps("memcpy_GBps", f.memcpy_Bps, true);
  us("copy_run_us", f.copy_run_s);
  us("spread_run_us", f.spread_run_s);
  gbps("fresh_GBps", f.fresh_Bps, true);
  gbps("hash_GBps", f.hash_Bps, true);
  us("create_us", f.create_s);
  us("rename_us", f.rename_s);
  gbps("fsync_GBps", f.fsync_Bps, false);
  f.cores = static_cast<int>(rd.number_or(*t, "cores", "io.cores", 0));
  f.scatter = rd.number_or(*t, "scatter", "io.scatter", 0);
  f.load_average = rd.number_or(*t, "load_average", "io.load_average", -1);
  f.probed_at = static_cast<int64_t>(rd.number_or(*t, "probed_at", "io.probed_at", 0));
  if (f.cores < 0) rd.fail(t->get("cores"), "field \"io.cores\" must be at least 0 (0: ask the OS)");
  const toml::node* bytes = t->get("write_bytes");
  const toml::node* times = t->get("write_us");
  if ((bytes == nullptr) != (times == nullptr)) rd.fail(t, "fields \"io.write_bytes\" and \"io.write_us\" go together");
  if (bytes != nullptr) {
    const std::vector<double> b = rd.reals(*bytes, "io.write_bytes"), s = rd.reals(*times, "io.write_us");
    if (b.size() != s.size() || b.empty()) {
      rd.fail(times,
              "fields \"io.write_bytes\" and \"io.write_us\" must list the same number of points (at least one)");
    }
    f.write.clear();
    for (size_t i = 0; i < b.size(); ++i) {
      if (b[i] < 1 || s[i] <= 0) rd.fail(bytes, "io.write_bytes and io.write_us must be positive");
      if (i > 0 && b[i] <= b[i - 1]) rd.fail(bytes, "field \"io.write_bytes\" must be in increasing order");
      f.write.push_back({static_cast<uint64_t>(b[i]), s[i] * 1e-6});
    }
  }
  f.curve_writers = static_cast<int>(rd.number_or(*t, "curve_writers", "io.curve_writers", 0));
  if (f.curve_writers < 0) rd.fail(t->get("curve_writers"), "field \"io.curve_writers\" must be at least 0");
  // The same requests over cached pages (a recycled file), at the write curve's sizes.
  if (const toml::node* again = t->get("rewrite_us")) {
    const std::vector<double> s = rd.reals(*again, "io.rewrite_us");
    if (bytes == nullptr || s.size() != f.write.size()) {
      rd.fail(again, "field \"io.rewrite_us\" must list one time for each of \"io.write_bytes\"");
    }
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] <= 0) rd.fail(again, "io.rewrite_us must be positive");
      f.rewrite.push_back({f.write[i].request_bytes, s[i] * 1e-6});
    }
  }
  return f;
}

Topology parse_topology(const Reader& rd, const toml::table& root) {
  Topology topo;
  const toml::node* n = root.get("topology");
  if (n == nullptr) return topo;
  if (!n->is_table()) rd.fail(n, "\"topology\" must be a table");
  const toml::table& t = *n->as_table();
  const std::string kind = rd.text(t, "kind", "topology.kind", true);
  if (kind == "flat") {
    topo.kind = Topology::Kind::flat;
  } else if (kind == "fat-tree") {
    topo.kind = Topology::Kind::fat_tree;
    topo.arity = rd.ints(t, "arity", "topology.arity", 1);
  } else if (kind == "dragonfly") {
    topo.kind = Topology::Kind::dragonfly;
    topo.nodes_per_router = static_cast<int>(rd.number(t, "nodes_per_router", "topology.nodes_per_router", true));
    topo.routers_per_group = static_cast<int>(rd.number(t, "routers_per_group", "topology.routers_per_group", true));
    if (topo.nodes_per_router < 1 || topo.routers_per_group < 1) rd.fail(&t, "dragonfly counts must be at least 1");
  } else if (kind == "torus") {
    topo.kind = Topology::Kind::torus;
    topo.dims = rd.ints(t, "dims", "topology.dims", 1);
    if (const toml::node* c = t.get("coords")) {
      const toml::array* rows = c->as_array();
      if (rows == nullptr) rd.fail(c, "field \"topology.coords\" must be an array of coordinate arrays");
      for (const toml::node& row : *rows) {
        std::vector<int> xs;
        for (double v : rd.reals(row, "topology.coords")) xs.push_back(static_cast<int>(v));
        if (xs.size() != topo.dims.size()) {
          rd.fail(&row,
                  "field \"topology.coords\": each node needs " + std::to_string(topo.dims.size()) + " coordinates");
        }
        for (size_t d = 0; d < xs.size(); ++d) {
          if (xs[d] >= topo.dims[d]) rd.fail(&row, "field \"topology.coords\": a coordinate is outside topology.dims");
        }
        topo.coords.push_back(std::move(xs));
      }
    }
  } else if (kind == "matrix") {
    topo.kind = Topology::Kind::matrix;
    const toml::node* m = rd.field(t, "distances", "topology.distances", true);
    const toml::array* rows = m->as_array();
    if (rows == nullptr || rows->empty()) rd.fail(m, "field \"topology.distances\" must be a square array of arrays");
    for (const toml::node& row : *rows) {
      topo.matrix.push_back(rd.reals(row, "topology.distances"));
      if (topo.matrix.back().size() != rows->size()) {
        rd.fail(&row, "field \"topology.distances\" must be square (" + std::to_string(rows->size()) +
                          " rows, a row of " + std::to_string(topo.matrix.back().size()) + ")");
      }
    }
  } else {
    rd.fail(t.get("kind"), "unknown topology kind \"" + kind + "\" (flat, fat-tree, dragonfly, torus or matrix)");
  }
  return topo;
}

}  // namespace

Machine parse_machine(const std::string& toml_text, const std::string& name) {
  Reader rd(name);
  toml::table root;
  try {
    root = toml::parse(toml_text, name);
  } catch (const toml::parse_error& e) {
    throw_usage("machine file \"" + name + "\", line " + std::to_string(e.source().begin.line) +
                ": syntax error: " + std::string(e.description()));
  }
  Machine m;
  m.source = name;
  m.name = rd.text(root, "name", "name", false, "unnamed");
  const toml::table& net = rd.table(root, "network", "network");
  m.network_latency_s = rd.number(net, "latency_us", "network.latency_us", false) * 1e-6;
  m.network_bandwidth_Bps = rd.number(net, "bandwidth_GBps", "network.bandwidth_GBps", true) * 1e9;
  const toml::table& st = rd.table(root, "storage", "storage");
  m.storage_latency_s = rd.number(st, "latency_us", "storage.latency_us", false) * 1e-6;
  m.storage_bandwidth_Bps = rd.number(st, "bandwidth_GBps", "storage.bandwidth_GBps", true) * 1e9;
  m.storage_distance = rd.number_or(st, "distance", "storage.distance", 1);
  if (const toml::node* d = st.get("distances")) m.storage_distances = rd.reals(*d, "storage.distances");
  m.topology = parse_topology(rd, root);

  const toml::node* tiers = root.get("tier");
  if (tiers == nullptr) rd.fail(&root, "missing [[tier]] entries (at least dram)");
  const toml::array* list = tiers->as_array();
  if (list == nullptr) rd.fail(tiers, "\"tier\" must be an array of tables ([[tier]])");
  for (const toml::node& e : *list) {
    const toml::table* t = e.as_table();
    if (t == nullptr) rd.fail(&e, "each [[tier]] must be a table");
    const std::string tname = rd.text(*t, "name", "tier.name", true);
    const auto tier = parse_tier(tname);
    if (!tier) rd.fail(t->get("name"), "unknown tier \"" + tname + "\" (hbm, dram, tmpfs or nvr)");
    if (m.tier(*tier) != nullptr) rd.fail(t, "tier \"" + tname + "\" is described twice");
    const std::string p = "tier " + tname + ".";
    TierFigures f;
    f.latency_s = rd.number(*t, "latency_us", p + "latency_us", false) * 1e-6;
    f.bandwidth_Bps = rd.number(*t, "bandwidth_GBps", p + "bandwidth_GBps", true) * 1e9;
    f.capacity_bytes = rd.size(*t, "capacity", p + "capacity");
    const std::string pers = rd.text(*t, "persistency", p + "persistency", true);
    if (pers == "none") {
      f.persistency = Persistency::none;
    } else if (pers == "job") {
      f.persistency = Persistency::job;
    } else {
      rd.fail(t->get("persistency"),
              "field \"" + p + "persistency\" must be \"none\" or \"job\" (got \"" + pers + "\")");
    }
    m.tiers.emplace_back(*tier, f);
  }
  if (m.tier(Tier::dram) == nullptr) rd.fail(tiers, "no [[tier]] named \"dram\" (the source of the data; describe it)");
  std::sort(m.tiers.begin(), m.tiers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (const toml::node* io = root.get("io")) m.io = parse_io(rd, *io);
  return m;
}

std::string machine_to_toml(const Machine& m) {
  std::ostringstream o;
  o.precision(6);
  o << "# Strata machine description (docs/tiers.md). Source: " << m.source << "\n";
  o << "name = \"" << m.name << "\"\n\n";
  o << "[network]\nlatency_us = " << m.network_latency_s * 1e6 << "\nbandwidth_GBps = " << m.network_bandwidth_Bps / 1e9
    << "\n\n";
  o << "[storage]\nlatency_us = " << m.storage_latency_s * 1e6 << "\nbandwidth_GBps = " << m.storage_bandwidth_Bps / 1e9
    << "\ndistance = " << m.storage_distance << "\n\n";
  o << "[topology]\nkind = \"" << topology_kind_name(m.topology.kind) << "\"\n";
  if (m.topology.kind == Topology::Kind::dragonfly) {
    o << "nodes_per_router = " << m.topology.nodes_per_router
      << "\nrouters_per_group = " << m.topology.routers_per_group << "\n";
  }
  auto ints = [&](const std::vector<int>& v) {
    o << "[";
    for (size_t i = 0; i < v.size(); ++i) o << (i ? ", " : "") << v[i];
    o << "]\n";
  };
  if (m.topology.kind == Topology::Kind::fat_tree) {
    o << "arity = ";
    ints(m.topology.arity);
  }
  if (m.topology.kind == Topology::Kind::torus) {
    o << "dims = ";
    ints(m.topology.dims);
  }
  if (m.topology.kind == Topology::Kind::matrix) {
    o << "distances = [\n";
    for (const auto& row : m.topology.matrix) {
      o << "  [";
      for (size_t i = 0; i < row.size(); ++i) o << (i ? ", " : "") << row[i];
      o << "],\n";
    }
    o << "]\n";
  }
  for (const auto& [t, f] : m.tiers) {
    o << "\n[[tier]]\nname = \"" << tier_name(t) << "\"\nlatency_us = " << f.latency_s * 1e6
      << "\nbandwidth_GBps = " << f.bandwidth_Bps / 1e9 << "\ncapacity = " << f.capacity_bytes << "\npersistency = \""
      << persistency_name(f.persistency) << "\"\n";
  }
  o << io_to_toml(m.io);
  return o.str();
}

std::string io_to_toml(const IoFigures& f) {
  std::ostringstream o;
  o.precision(6);
  o << "\n# The engine's figures (strata info --probe measures them; docs/tiers.md)\n[io]\nmeasured = "
    << (f.measured ? "true" : "false") << "\nprobe_ranks = " << f.probe_ranks
    << "\nput_latency_us = " << f.put_latency_s * 1e6 << "\nput_bandwidth_GBps = " << f.put_bandwidth_Bps / 1e9
    << "\nput_run_us = " << f.put_run_s * 1e6 << "\nfence_us = " << f.fence_s * 1e6
    << "\ncollective_us = " << f.collective_s * 1e6 << "\nmemcpy_GBps = " << f.memcpy_Bps / 1e9
    << "\ncopy_run_us = " << f.copy_run_s * 1e6 << "\nspread_run_us = " << f.spread_run_s * 1e6
    << "\nfresh_GBps = " << f.fresh_Bps / 1e9 << "\nhash_GBps = " << f.hash_Bps / 1e9
    << "\ncreate_us = " << f.create_s * 1e6 << "\nrename_us = " << f.rename_s * 1e6
    << "\nfsync_GBps = " << f.fsync_Bps / 1e9 << "\ncores = " << f.cores
    << "\n# how far to trust them: the worst median/best ratio of the repeats, the load, when (Unix time)"
    << "\nscatter = " << f.scatter << "\nprobed_at = " << f.probed_at
    << (f.load_average >= 0 ? "\nload_average = " + std::to_string(f.load_average) : std::string())
    << "\nwrite_bytes = [";
  for (size_t i = 0; i < f.write.size(); ++i) o << (i ? ", " : "") << f.write[i].request_bytes;
  o << "]\nwrite_us = [";
  for (size_t i = 0; i < f.write.size(); ++i) o << (i ? ", " : "") << f.write[i].seconds * 1e6;
  o << "]\n";
  if (f.curve_writers > 0) o << "curve_writers = " << f.curve_writers << "\n";
  if (f.rewrite.size() == f.write.size()) {
    o << "rewrite_us = [";
    for (size_t i = 0; i < f.rewrite.size(); ++i) o << (i ? ", " : "") << f.rewrite[i].seconds * 1e6;
    o << "]\n";
  }
  return o.str();
}

void apply_capacity_overrides(Machine& m, const std::string& spec) {
  std::istringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const auto colon = item.find(':');
    if (colon == std::string::npos) {
      throw_usage("STRATA_TIER_CAPACITY: \"" + item + "\" is not TIER:SIZE (e.g. hbm:32MiB,dram:32MiB)");
    }
    const std::string name = item.substr(0, colon);
    const auto tier = parse_tier(name);
    if (!tier) throw_usage("STRATA_TIER_CAPACITY: unknown tier \"" + name + "\" (hbm, dram, tmpfs or nvr)");
    const uint64_t bytes = parse_size(item.substr(colon + 1), "STRATA_TIER_CAPACITY for " + name);
    if (TierFigures* f = m.tier(*tier)) f->capacity_bytes = bytes;
  }
}

}  // namespace strata
