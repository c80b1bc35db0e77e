#include "workload/pytorch/trace_linker.h"

#include <algorithm>
#include <unordered_map>

#include "core/error.h"

namespace sim::pytorch {

namespace {

std::string where(const std::string& path, int rank) { return path + ": rank " + std::to_string(rank) + ": "; }

// Every ctrl_deps names a node; only the process root is its own parent; no
// cycle. The parents form a forest, so each node is walked once: a walk
// stops at a node already finished, and meeting a node of the current walk
// again closes a cycle.
void check_parent_graph(const HostTrace& host, const std::vector<std::int32_t>& parent,
                        const std::unordered_map<std::uint64_t, std::int32_t>& by_id, int rank) {
  const std::size_t n = host.ops.size();
  for (std::size_t i = 0; i < n; ++i) {
    const HostOp& op = host.ops[i];
    if (op.parent == op.id) {
      if (op.name != "[pytorch|profiler|execution_trace|process]") {
        throw InputError(where(host.path, rank) + "op id " + std::to_string(op.id) + " (" + op.name +
                         "): field 'ctrl_deps' names the op itself (only the process root may)");
      }
      continue;
    }
    if (!by_id.count(op.parent) && !(is_root_op(op) && op.parent == 0)) {
      throw InputError(where(host.path, rank) + "op id " + std::to_string(op.id) + " (" + op.name +
                       "): field 'ctrl_deps' names op id " + std::to_string(op.parent) + ", which the trace does not have");
    }
  }
  enum : std::uint8_t { kNew, kOnWalk, kDone };
  std::vector<std::uint8_t> state(n, kNew);
  std::vector<std::size_t> walk;
  for (std::size_t start = 0; start < n; ++start) {
    walk.clear();
    std::int64_t j = static_cast<std::int64_t>(start);
    while (j >= 0 && state[static_cast<std::size_t>(j)] == kNew) {
      state[static_cast<std::size_t>(j)] = kOnWalk;
      walk.push_back(static_cast<std::size_t>(j));
      j = parent[static_cast<std::size_t>(j)];
    }
    if (j >= 0 && state[static_cast<std::size_t>(j)] == kOnWalk) {
      std::string ids;
      std::size_t count = 0;
      const auto first = std::find(walk.begin(), walk.end(), static_cast<std::size_t>(j));
      for (auto it = first; it != walk.end(); ++it, ++count) {
        if (count < 16) ids += (count ? " -> " : "") + std::to_string(host.ops[*it].id);
      }
      if (count > 16) ids += " -> ... (" + std::to_string(count) + " ops)";
      ids += " -> " + std::to_string(host.ops[static_cast<std::size_t>(j)].id);
      throw InputError(where(host.path, rank) + "the ctrl_deps of ops form a cycle: " + ids +
                       " (each op's ctrl_deps names its enclosing op, so they must form a tree)");
    }
    for (std::size_t w : walk) state[w] = kDone;
  }
}

}  // namespace

void Unlinked::add(const std::string& name) {
  ++count;
  if (first_names.size() < 5) first_names.push_back(name);
}

std::string Unlinked::describe(const std::string& what) const {
  // One readable line: a CUDA kernel's name (a C++ template) runs to
  // hundreds of characters, so each is cut short and the list too.
  constexpr std::size_t kName = 48, kLine = 200;
  std::string s = std::to_string(count) + " " + what;
  if (!first_names.empty()) {
    s += " (first: ";
    std::size_t shown = 0;
    for (const std::string& name : first_names) {
      const std::string cut = name.size() > kName ? name.substr(0, kName - 3) + "..." : name;
      if (shown > 0 && s.size() + 2 + cut.size() > kLine) break;
      s += (shown++ ? ", " : "") + cut;
    }
    s += count > shown ? ", ...)" : ")";
  }
  return s;
}

bool is_root_op(const HostOp& op) { return op.name.rfind("[pytorch|profiler|execution_trace|", 0) == 0; }

TraceLinks link_traces(const HostTrace& host, const KinetoTrace* kineto, int rank) {
  TraceLinks links;
  const std::size_t n = host.ops.size();
  std::unordered_map<std::uint64_t, std::int32_t> by_id;
  by_id.reserve(n);
  for (std::size_t i = 0; i < n; ++i) by_id.emplace(host.ops[i].id, static_cast<std::int32_t>(i));
  links.parent.assign(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    const HostOp& op = host.ops[i];
    if (op.parent == op.id) continue;
    if (auto it = by_id.find(op.parent); it != by_id.end()) links.parent[i] = it->second;
  }
  check_parent_graph(host, links.parent, by_id, rank);
  links.kineto_of.assign(n, -1);
  if (!kineto) return links;

  std::unordered_map<std::uint64_t, std::int32_t> host_by_rf;
  host_by_rf.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const HostOp& op = host.ops[i];
    if (!op.has_rf_id || is_root_op(op)) continue;
    auto [it, fresh] = host_by_rf.emplace(op.rf_id, static_cast<std::int32_t>(i));
    if (!fresh) {
      const HostOp& other = host.ops[static_cast<std::size_t>(it->second)];
      throw InputError(where(host.path, rank) + "op ids " + std::to_string(other.id) + " (" + other.name + ") and " +
                       std::to_string(op.id) + " (" + op.name + ") have one rf_id, " + std::to_string(op.rf_id) +
                       ": the Kineto operator of that id cannot be told apart");
    }
  }
  // Kineto's own links must be one-to-one where the linker follows them.
  const std::string kwhere = where(kineto->path, rank);
  {
    std::unordered_map<std::uint64_t, std::size_t> rf_seen;
    std::unordered_map<std::int64_t, std::size_t> ext_seen;
    for (std::size_t k = 0; k < kineto->ops.size(); ++k) {
      const KinetoOp& ko = kineto->ops[k];
      if (ko.has_rf_id) {
        auto [it, fresh] = rf_seen.emplace(ko.rf_id, k);
        if (!fresh) {
          throw InputError(kwhere + "operators '" + kineto->ops[it->second].name + "' and '" + ko.name +
                           "' have one \"Record function id\", " + std::to_string(ko.rf_id) +
                           ": which host op each is cannot be told");
        }
      }
      if (ko.external_id >= 0) {
        auto [it, fresh] = ext_seen.emplace(ko.external_id, k);
        if (!fresh) {
          throw InputError(kwhere + "operators '" + kineto->ops[it->second].name + "' and '" + ko.name +
                           "' have one \"External id\", " + std::to_string(ko.external_id) +
                           ": which of them made the runtime calls carrying it cannot be told");
        }
      }
    }
  }
  // External id -> host op, through the Kineto operator carrying both ids.
  std::unordered_map<std::int64_t, std::int32_t> host_by_external;
  for (std::size_t k = 0; k < kineto->ops.size(); ++k) {
    const KinetoOp& ko = kineto->ops[k];
    auto it = ko.has_rf_id ? host_by_rf.find(ko.rf_id) : host_by_rf.end();
    if (it == host_by_rf.end()) {
      links.device_without_host.add(ko.name);
      continue;
    }
    links.kineto_of[static_cast<std::size_t>(it->second)] = static_cast<std::int32_t>(k);
    if (ko.external_id >= 0) host_by_external.emplace(ko.external_id, it->second);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const HostOp& op = host.ops[i];
    if (links.kineto_of[i] < 0 && !is_root_op(op) && op.name.find("process_group:init") == std::string::npos) {
      links.host_without_device.add(op.name);
    }
  }
  std::unordered_map<std::int64_t, std::int32_t> runtime_by_corr;
  links.runtime_owner.assign(kineto->runtime.size(), -1);
  for (std::size_t r = 0; r < kineto->runtime.size(); ++r) {
    const KinetoRuntime& rt = kineto->runtime[r];
    if (rt.correlation >= 0) {
      auto [it, fresh] = runtime_by_corr.emplace(rt.correlation, static_cast<std::int32_t>(r));
      if (!fresh) {
        throw InputError(kwhere + "runtime calls '" + kineto->runtime[static_cast<std::size_t>(it->second)].name +
                         "' and '" + rt.name + "' have one \"correlation\", " + std::to_string(rt.correlation) +
                         ": which launched the GPU work carrying it cannot be told");
      }
    }
    if (auto it = host_by_external.find(rt.external_id); rt.external_id >= 0 && it != host_by_external.end()) {
      links.runtime_owner[r] = it->second;
    }
  }
  links.gpu_owner.assign(kineto->gpu.size(), -1);
  links.gpu_launch_ts.assign(kineto->gpu.size(), 0);
  for (std::size_t g = 0; g < kineto->gpu.size(); ++g) {
    const KinetoGpuOp& op = kineto->gpu[g];
    links.gpu_launch_ts[g] = op.ts;
    std::int32_t owner = -1;
    auto it = op.correlation >= 0 ? runtime_by_corr.find(op.correlation) : runtime_by_corr.end();
    if (op.correlation >= 0 && it == runtime_by_corr.end()) {
      throw InputError(kwhere + op.category + " '" + op.name + "' on stream " + std::to_string(op.stream) +
                       ": its \"correlation\" " + std::to_string(op.correlation) +
                       " names no CUDA runtime or driver call of the trace");
    }
    if (it != runtime_by_corr.end()) {
      const std::size_t r = static_cast<std::size_t>(it->second);
      links.gpu_launch_ts[g] = kineto->runtime[r].ts;
      owner = links.runtime_owner[r];
    }
    if (owner < 0 && op.external_id >= 0) {
      if (auto it = host_by_external.find(op.external_id); it != host_by_external.end()) owner = it->second;
    }
    links.gpu_owner[g] = owner;
    if (owner < 0) links.gpu_without_host.add(op.name);
  }
  return links;
}

}  // namespace sim::pytorch
