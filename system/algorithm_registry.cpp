#include "system/algorithm_registry.h"

#include <algorithm>
#include <charconv>

#include "core/error.h"
#include "system/chunked_program.h"
#include "system/collectives/direct.h"
#include "system/collectives/halving_doubling.h"
#include "system/collectives/ring.h"
#include "system/collectives/tree.h"
#include "workload/et_io.h"

namespace sim {

namespace {

constexpr CollectiveType kAllTypes[] = {
    CollectiveType::kAllReduce, CollectiveType::kReduce,        CollectiveType::kAllGather,
    CollectiveType::kGather,    CollectiveType::kScatter,       CollectiveType::kBroadcast,
    CollectiveType::kAllToAll,  CollectiveType::kReduceScatter, CollectiveType::kBarrier};

std::uint32_t chunks_param(const AlgorithmParams& p, std::uint32_t fallback) {
  const auto it = p.find("chunks");
  return it == p.end() ? fallback : static_cast<std::uint32_t>(it->second);
}

std::vector<NativeAlgorithm> build_table() {
  using T = CollectiveType;
  std::vector<NativeAlgorithm> t;
  t.push_back({"ring", {T::kAllReduce, T::kReduceScatter, T::kAllGather, T::kAllToAll}, {"chunks"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 return std::make_shared<const RingProgram>(type, n, bytes, chunks_param(p, chunks));
               }});
  t.push_back({"direct", std::vector<T>(std::begin(kAllTypes), std::end(kAllTypes)), {"chunks", "window"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 const auto w = p.find("window");
                 return std::make_shared<const DirectProgram>(type, n, bytes, chunks_param(p, chunks),
                                                              w == p.end() ? 0 : static_cast<std::uint32_t>(w->second));
               }});
  t.push_back({"halvingDoubling", {T::kAllReduce, T::kReduceScatter, T::kAllGather}, {"chunks"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 return std::make_shared<const HalvingDoublingProgram>(type, n, bytes, chunks_param(p, chunks));
               }});
  t.push_back({"doubleBinaryTree", {T::kAllReduce}, {"chunks"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 return std::make_shared<const TreeProgram>(type, n, bytes, chunks_param(p, chunks), true);
               }});
  t.push_back({"binaryTree", {T::kAllReduce, T::kReduce, T::kBroadcast}, {"chunks"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 return std::make_shared<const TreeProgram>(type, n, bytes, chunks_param(p, chunks), false);
               }});
  return t;
}

std::string type_list(const NativeAlgorithm& a) {
  std::string s;
  for (CollectiveType t : a.types) s += (s.empty() ? "" : ", ") + std::string(collective_name(t));
  return s;
}

}  // namespace

std::shared_ptr<const CollectiveProgram> with_dataset_splits(
    const SystemConfig& config, CollectiveType type, std::uint32_t group_size, std::uint64_t bytes,
    const std::function<std::shared_ptr<const CollectiveProgram>(std::uint64_t)>& make, bool& halving_doubling) {
  const bool wrap = config.dataset_splits > 0 || config.endpoint_delay > 0 || config.astrasim_quirks;
  if (!wrap) return make(bytes);
  const std::uint32_t k = std::max<std::uint32_t>(config.dataset_splits, 1);
  // ASTRA-sim's size-enlargement rule: a chunk smaller than the group is
  // bumped to one byte per NPU (the total grows to k x n), except all-gather.
  std::vector<std::uint64_t> sizes(k);
  if (bytes / k < group_size && normalized(type) != CollectiveType::kAllGather) {
    sizes.assign(k, group_size);
  } else {
    for (std::uint32_t c = 0; c < k; ++c) sizes[c] = part_bytes(bytes, k, c);
  }
  std::vector<std::shared_ptr<const CollectiveProgram>> chunks(k);
  for (std::uint32_t c = 0; c < k; ++c) chunks[c] = c > 0 && sizes[c] == sizes[c - 1] ? chunks[c - 1] : make(sizes[c]);
  const std::uint32_t free = config.astrasim_quirks && halving_doubling ? 1 : 0;
  const std::uint32_t active = config.active_chunks == 0 ? k : config.active_chunks;
  // ASTRA-sim's all-to-all moves one block (chunk / n) per message.
  std::vector<std::uint64_t> block;
  if (config.astrasim_quirks && normalized(type) == CollectiveType::kAllToAll) {
    for (std::uint32_t c = 0; c < k; ++c) block.push_back(sizes[c] / group_size);
  }
  return std::make_shared<const ChunkedProgram>(std::move(chunks), active, config.endpoint_delay, free,
                                                std::move(block));
}

bool NativeAlgorithm::supports(CollectiveType type) const {
  return std::find(types.begin(), types.end(), normalized(type)) != types.end();
}

const std::vector<NativeAlgorithm>& native_algorithms() {
  static const std::vector<NativeAlgorithm> table = build_table();
  return table;
}

const NativeAlgorithm* find_native_algorithm(const std::string& name) {
  for (const NativeAlgorithm& a : native_algorithms()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string native_algorithm_names() {
  std::string s;
  for (const NativeAlgorithm& a : native_algorithms()) s += (s.empty() ? "" : ", ") + a.name;
  return s;
}

CollectiveType normalized(CollectiveType type) {
  return type == CollectiveType::kReduceScatterBlock ? CollectiveType::kReduceScatter : type;
}

const char* default_algorithm(CollectiveType type) {
  switch (normalized(type)) {
    case CollectiveType::kReduce:
    case CollectiveType::kBroadcast:
      return "binaryTree";
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
    case CollectiveType::kBarrier:
      return "direct";
    default:
      return "ring";
  }
}

bool names_native_algorithm(const std::string& text) {
  return find_native_algorithm(text.substr(0, text.find(':'))) != nullptr;
}

AlgorithmChoice parse_algorithm_choice(const std::string& text, CollectiveType type) {
  AlgorithmChoice choice;
  const std::string name = text.substr(0, text.find(':'));
  choice.native = find_native_algorithm(name);
  if (!choice.native) {
    try {
      resolve_rank_files(text);
    } catch (const InputError& e) {
      throw InputError("collective algorithm '" + text + "' for " + collective_name(type) +
                       ": not a native algorithm (" + native_algorithm_names() + ") nor Chakra ETs (" + e.what() +
                       ")");
    }
    choice.et_source = text;
    return choice;
  }
  const NativeAlgorithm& a = *choice.native;
  if (!a.supports(type)) {
    throw InputError("collective algorithm '" + a.name + "' does not implement " + collective_name(type) +
                     " (it implements " + type_list(a) + ")");
  }
  if (name.size() == text.size()) return choice;
  // key=value pairs after the colon, comma-separated.
  std::string rest = text.substr(name.size() + 1);
  std::size_t at = 0;
  while (at <= rest.size()) {
    const std::size_t end = std::min(rest.find(',', at), rest.size());
    const std::string item = rest.substr(at, end - at);
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    std::string known;
    for (const std::string& p : a.params) known += (known.empty() ? "" : ", ") + p;
    if (eq == std::string::npos || std::find(a.params.begin(), a.params.end(), key) == a.params.end()) {
      throw InputError("collective algorithm '" + text + "': '" + item + "' is not a parameter of " + a.name +
                       " (write " + a.name + ":key=value with key one of: " + known + ")");
    }
    std::uint64_t v = 0;
    const std::string value = item.substr(eq + 1);
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || p != value.data() + value.size() || v < 1 || v > (1u << 20)) {
      throw InputError("collective algorithm '" + text + "': " + key + " must be an integer 1..1048576, not '" +
                       value + "'");
    }
    choice.params[key] = v;
    at = end + 1;
  }
  return choice;
}

std::shared_ptr<const CollectiveProgram> make_native_program(const NativeAlgorithm& algo, const AlgorithmParams& params,
                                                             CollectiveType type, std::uint32_t group_size,
                                                             std::uint64_t bytes, std::uint32_t chunks) {
  if (!algo.supports(type)) {
    throw InputError("collective algorithm '" + algo.name + "' does not implement " + collective_name(type) +
                     " (it implements " + type_list(algo) + ")");
  }
  return algo.make(normalized(type), group_size, bytes, chunks, params);
}

AlgorithmRegistry::AlgorithmRegistry(const SystemConfig& config) : config_(config) {
  for (const auto& [type, text] : config.algorithms) {
    Chosen c;
    c.choice = parse_algorithm_choice(text, type);
    if (!c.choice.native) {
      c.injected = std::make_shared<const EtAlgorithm>(load_et_algorithm(c.choice.et_source, type));
    }
    chosen_[type] = std::move(c);
  }
}

std::shared_ptr<const CollectiveProgram> AlgorithmRegistry::program_for(const CollectiveRequest& req) {
  const auto fast = std::make_tuple(static_cast<int>(req.type), req.bytes, req.chunks,
                                    static_cast<const void*>(req.members.get()));
  if (auto it = by_ptr_.find(fast); it != by_ptr_.end()) return it->second;
  const auto key = std::make_tuple(static_cast<int>(req.type), req.bytes, req.chunks, *req.members);
  std::shared_ptr<const CollectiveProgram> program;
  if (auto it = cache_.find(key); it != cache_.end()) {
    program = it->second;
  } else {
    const std::uint32_t n = req.group_size();
    if (const auto no = config_.unavailable.find(req.type); no != config_.unavailable.end()) throw InputError(no->second);
    const auto chosen = chosen_.find(req.type);
    bool halving_doubling = false;
    const auto make = [&](std::uint64_t bytes) -> std::shared_ptr<const CollectiveProgram> {
      if (chosen != chosen_.end() && chosen->second.injected) {
        const EtAlgorithm& inj = *chosen->second.injected;
        if (inj.ranks.size() != n) {
          throw InputError("collective algorithm '" + inj.source + "' is written for " +
                           std::to_string(inj.ranks.size()) + " ranks but a " + collective_name(req.type) +
                           " runs on a group of " + std::to_string(n) + " ranks");
        }
        return std::make_shared<const EtProgram>(chosen->second.injected, bytes);
      }
      const NativeAlgorithm& algo = chosen != chosen_.end() ? *chosen->second.choice.native
                                                            : *find_native_algorithm(default_algorithm(req.type));
      halving_doubling = algo.name == "halvingDoubling";
      return make_native_program(algo, chosen != chosen_.end() ? chosen->second.choice.params : AlgorithmParams{},
                                 req.type, n, bytes, req.chunks);
    };
    program = with_dataset_splits(config_, req.type, n, req.bytes, make, halving_doubling);
    cache_.emplace(key, program);
  }
  keep_.push_back(req.members);
  by_ptr_.emplace(fast, program);
  return program;
}

}  // namespace sim
