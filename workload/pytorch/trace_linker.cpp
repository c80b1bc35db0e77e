#include "workload/pytorch/trace_linker.h"

#include <unordered_map>

namespace sim::pytorch {

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

TraceLinks link_traces(const HostTrace& host, const KinetoTrace* kineto) {
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
  links.kineto_of.assign(n, -1);
  if (!kineto) return links;

  std::unordered_map<std::uint64_t, std::int32_t> host_by_rf;
  host_by_rf.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (host.ops[i].has_rf_id && !is_root_op(host.ops[i])) host_by_rf.emplace(host.ops[i].rf_id, static_cast<std::int32_t>(i));
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
    if (rt.correlation >= 0) runtime_by_corr.emplace(rt.correlation, static_cast<std::int32_t>(r));
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
    if (auto it = runtime_by_corr.find(op.correlation); op.correlation >= 0 && it != runtime_by_corr.end()) {
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
