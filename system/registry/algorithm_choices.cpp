#include "system/registry/algorithm_choices.h"

#include "core/error.h"
#include "system/producers/msccl_import.h"
#include "system/registry/algorithm_registry.h"
#include "workload/et/et_io.h"

namespace sim {

namespace {

std::string where_of(const std::string& where, const std::string& fallback) {
  return where.empty() ? fallback : where;
}

// One --collective per type: with two, the later silently replaced the earlier.
// (A system config's choice is what --collective overrides.)
void set_collective_option(SystemConfig& config, CollectiveType type, const std::string& value,
                           const std::string& option) {
  const std::string where = "--collective " + option;
  if (const auto w = config.algorithm_where.find(type);
      w != config.algorithm_where.end() && w->second.rfind("--collective ", 0) == 0) {
    throw InputError(where + ": " + w->second + " already chose " + collective_name(type) +
                     "'s algorithm: give one --collective per collective type");
  }
  config.algorithms[type] = value;
  config.algorithm_where[type] = where;
}

}  // namespace

void check_algorithm_choices(const SystemConfig& config) {
  for (const auto& [type, text] : config.algorithms) {
    try {
      parse_algorithm_choice(text, type);
    } catch (const InputError& e) {
      const auto w = config.algorithm_where.find(type);
      throw InputError(where_of(w == config.algorithm_where.end() ? "" : w->second,
                                std::string("collective algorithm for ") + collective_name(type)) +
                       ": " + e.what());
    }
  }
  for (const auto& [id, text] : config.per_node_algorithms) {
    if (names_native_algorithm(text)) continue;
    try {
      parse_algorithm_choice(text, CollectiveType::kAllReduce);
    } catch (const InputError& e) {
      const auto w = config.per_node_where.find(id);
      throw InputError(where_of(w == config.per_node_where.end() ? "" : w->second,
                                "collective algorithm for node " + std::to_string(id)) +
                       ": " + e.what());
    }
  }
}

void apply_collective_option(SystemConfig& config, const std::string& option) {
  const auto eq = option.find('=');
  if (eq == std::string::npos) {
    // The collective it implements is recorded in the ET's metadata (our
    // writer and MSCCL-derived converters record it); all-reduce otherwise.
    CollectiveType type = CollectiveType::kAllReduce;
    if (is_msccl_xml_path(option)) {  // MSCCL-IR names its collective (coll)
      set_collective_option(config, msccl_xml_collective(option), option, option);
      return;
    }
    const EtTrace first = read_et(resolve_rank_files(option).front());
    if (const auto name = metadata_string(first.metadata, "collective")) {
      if (!parse_collective_name(*name, type)) {
        throw InputError("--collective " + option + ": metadata 'collective' = '" + *name + "' is not a collective type");
      }
    }
    set_collective_option(config, type, option, option);
    return;
  }
  if (const std::string what = option.substr(0, eq); what == "send_recv" || what == "sendrecv") {
    // COMM_SEND / COMM_RECV pairs: NCCL's send and receive, or one message on the network
    // (checked by the registry, as algorithms.send_recv is).
    config.point_to_point = option.substr(eq + 1);
    config.point_to_point_where = "--collective " + option;
    return;
  }
  CollectiveType type;
  if (!parse_collective_name(option.substr(0, eq), type)) {
    throw InputError("--collective " + option + ": unknown collective type '" + option.substr(0, eq) + "'");
  }
  const std::string value = option.substr(eq + 1);
  try {
    parse_algorithm_choice(value, type);
  } catch (const InputError& e) {
    throw InputError("--collective " + option + ": " + e.what());
  }
  set_collective_option(config, type, value, option);
}

}  // namespace sim
