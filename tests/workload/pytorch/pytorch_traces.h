// Pieces of PyTorch traces written by hand for the importer's tests: the real
// traces' folder in ../shared/testdata/pytorch/, a host-trace operator and a
// Kineto CPU-op event.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace sim::testing {

inline std::string pytorch_testdata(const std::string& sub) {
  return std::string(SIM_SOURCE_DIR) + "/../shared/testdata/pytorch/" + sub;
}

// A host-trace operator: `parent` its ctrl_deps, `rf` its record-function id.
inline nlohmann::json op(std::uint64_t id, const std::string& name, std::uint64_t parent, std::uint64_t rf,
                         nlohmann::json inputs = nlohmann::json::array(),
                         nlohmann::json types = nlohmann::json::array(), std::int64_t scope = 0) {
  using json = nlohmann::json;
  return {{"id", id},
          {"name", name},
          {"ctrl_deps", parent},
          {"inputs", {{"values", inputs}, {"shapes", json::array()}, {"types", types}}},
          {"outputs", {{"values", json::array()}, {"shapes", json::array()}, {"types", json::array()}}},
          {"attrs", json::array({{{"name", "rf_id"}, {"type", "uint64"}, {"value", rf}},
                                 {{"name", "tid"}, {"type", "uint64"}, {"value", 1}},
                                 {{"name", "scope"}, {"type", "uint64"}, {"value", scope}}})}};
}

// A Kineto CPU-op event of process `pid`, linked to its host operator by `rf`.
inline nlohmann::json cpu_event(int pid, const std::string& name, std::uint64_t rf, double ts, double dur, int ext) {
  return {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", pid}, {"tid", pid}, {"ts", ts}, {"dur", dur},
          {"args", {{"External id", ext}, {"Record function id", rf}}}};
}

}  // namespace sim::testing
