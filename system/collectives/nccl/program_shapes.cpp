#include "system/collectives/nccl/program_shapes.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "system/collectives/nccl/model/sharp_tree.h"
#include "system/collectives/nccl/programs/nccl_dag.h"

namespace sim::nccl {
namespace {

// A shape as a byte string (compared whole: two shapes share only when equal).
class Key {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    key_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void put(const std::vector<T>& v) {
    put(v.size());
    for (const T& x : v) put(x);
  }
  void put(const std::string& s) {
    put(s.size());
    key_ += s;
  }
  std::string take() { return std::move(key_); }

 private:
  std::string key_;
};

// Each field of the step model, so that padding never enters a key. A field
// added to StepModel must be added here: the size says when one was.
void put_model(Key& k, const StepModel& m) {
  static_assert(sizeof(StepModel) == 120, "a StepModel field is missing from the program's shape");
  k.put(m.proto);
  k.put(m.channels);
  k.put(m.channel_rate);
  k.put(m.intra_rate);
  k.put(m.base);
  k.put(m.hop_intra);
  k.put(m.hop_inter);
  k.put(m.step_bytes);
  k.put(m.window);
  k.put(m.memory_bandwidth);
  k.put(m.proxy);
  k.put(m.writes.cost);
  k.put(m.writes.rails);
  k.put(m.writes.min_stripe);
  k.put(m.writes.device_rate);
  k.put(m.copy_rate);
}

struct Shape {
  std::string key;
  std::vector<NodeId> switches;  // each node's switch, then each tree level's per member
};

// Whether the plan's program reads the fabric's SHARP tree (nccl_algorithm.cpp's make_program).
bool reads_tree(CollectiveType type, Algo algo, std::uint32_t domains) {
  return algo == Algo::kCollNetChain || algo == Algo::kCollNetDirect ||
         (algo == Algo::kNvls && type == CollectiveType::kAllReduce && domains > 1);
}

Shape shape_of(CollectiveType type, std::uint64_t bytes, const Params& params, const Plan& pl,
               const AlgorithmContext& ctx) {
  Key k;
  k.put(type);
  k.put(bytes);
  k.put(params.size());
  for (const auto& [name, value] : params) {
    k.put(name);
    k.put(value);
  }
  k.put(pl.name);
  k.put(pl.algo);
  k.put(pl.proto);
  k.put(pl.channels);
  put_model(k, pl.model);
  k.put(ctx.size());
  k.put(ctx.domains);
  k.put(ctx.domain_of);
  // Rails by their order only: the builders sort a node's members by rail
  // and the tree compares rails across nodes, so the data-parallel groups of
  // GPU 0 of every node and of GPU 1 are one shape.
  std::vector<std::uint32_t> rails = ctx.rail_of;
  std::sort(rails.begin(), rails.end());
  rails.erase(std::unique(rails.begin(), rails.end()), rails.end());
  std::vector<std::uint32_t> rail_order;
  rail_order.reserve(ctx.rail_of.size());
  for (const std::uint32_t r : ctx.rail_of) {
    rail_order.push_back(static_cast<std::uint32_t>(std::lower_bound(rails.begin(), rails.end(), r) - rails.begin()));
  }
  k.put(rail_order);
  k.put(ctx.domain_reduces);
  Shape s;
  s.switches = ctx.domain_switch;
  const SharpTree tree = reads_tree(type, pl.algo, ctx.domains) ? sharp_tree(ctx) : SharpTree{};
  k.put(tree.depth());
  for (std::size_t level = 0; level < tree.depth(); ++level) {
    k.put(tree.index[level]);
    k.put(tree.group[level]);
    s.switches.insert(s.switches.end(), tree.levels[level].begin(), tree.levels[level].end());
  }
  // Which entries name one switch: each entry's first occurrence.
  std::unordered_map<NodeId, std::uint32_t> first;
  std::vector<std::uint32_t> pattern;
  pattern.reserve(s.switches.size());
  for (std::uint32_t i = 0; i < s.switches.size(); ++i) {
    pattern.push_back(s.switches[i] == kNoSwitch ? kNoSwitch : first.emplace(s.switches[i], i).first->second);
  }
  k.put(pattern);
  s.key = k.take();
  return s;
}

struct Built {
  std::weak_ptr<const NcclDagProgram> program;
  std::vector<NodeId> switches;  // its group's Shape::switches
};

std::mutex shapes_mutex;
std::unordered_map<std::string, Built> shapes;
std::size_t pruned_at = 0;

// `built`'s ops on the switches of `to` (entry by entry of the shapes'
// switch lists), or null when it names a switch outside its list.
std::shared_ptr<const CollectiveProgram> moved(const NcclDagProgram& built, const std::vector<NodeId>& from,
                                               const std::vector<NodeId>& to) {
  std::unordered_map<NodeId, NodeId> image;
  for (std::size_t i = 0; i < from.size(); ++i) image.emplace(from[i], to[i]);
  std::vector<NodeId> switches;
  switches.reserve(built.switches().size());
  for (const NodeId sw : built.switches()) {
    const auto it = image.find(sw);
    if (it == image.end()) return nullptr;
    switches.push_back(it->second);
  }
  return built.with_switches(std::move(switches));
}

}  // namespace

std::shared_ptr<const CollectiveProgram> shared_program(
    CollectiveType type, std::uint64_t bytes, const Params& params, const Plan& plan, const AlgorithmContext& ctx,
    const std::function<std::shared_ptr<const CollectiveProgram>()>& build) {
  Shape shape = shape_of(type, bytes, params, plan, ctx);
  {
    const std::lock_guard<std::mutex> lock(shapes_mutex);
    if (const auto it = shapes.find(shape.key); it != shapes.end()) {
      if (const auto program = it->second.program.lock()) {
        if (auto same = moved(*program, it->second.switches, shape.switches)) return same;
      }
    }
  }
  std::shared_ptr<const CollectiveProgram> program = build();
  const auto dag = std::dynamic_pointer_cast<const NcclDagProgram>(program);
  if (!dag) return program;
  const std::lock_guard<std::mutex> lock(shapes_mutex);
  shapes[std::move(shape.key)] = Built{dag, std::move(shape.switches)};
  if (shapes.size() >= 2 * pruned_at + 64) {  // forget the shapes whose programs are gone
    std::erase_if(shapes, [](const auto& entry) { return entry.second.program.expired(); });
    pruned_at = shapes.size();
  }
  return program;
}

}  // namespace sim::nccl
