// Strict reading of one YAML config file.
//
// Unknown keys, duplicate keys, wrong types and bad quantities are errors, and
// every error names the file, the line and the key: ASTRA-sim silently ignores
// typos, which is its users' top complaint.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "core/time.h"

// Declarations only: the files that read YAML include yaml-cpp themselves,
// so the many that only pass a config along do not parse it.
namespace YAML {
class Node;
}

namespace sim {

class ConfigReader {
 public:
  explicit ConfigReader(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  // Parses YAML text; syntax errors become InputError with file and line.
  YAML::Node load(const std::string& text) const;

  // Throws InputError "<file>:<line>: <message>" (line of `at` when known).
  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const;
  // "<file>:<line>: '<key>'": where a value was read, for a check made later
  // (its message then reads as fail()'s would).
  std::string where(const YAML::Node& at, std::string_view key) const;

  // `node` must be a map whose keys are all in `allowed`, none repeated.
  // `where` prefixes key names in messages ("links[2]."), empty at top level.
  void check_keys(const YAML::Node& node, std::string_view where,
                  std::initializer_list<std::string_view> allowed) const;
  void require_map(const YAML::Node& node, std::string_view key) const;
  YAML::Node require(const YAML::Node& map, std::string_view key) const;
  YAML::Node require_list(const YAML::Node& map, std::string_view key) const;

  // Scalar conversions; `key` names the value in messages ("dims[1]").
  std::string text(const YAML::Node& node, std::string_view key) const;
  std::uint64_t count(const YAML::Node& node, std::string_view key) const;
  bool flag(const YAML::Node& node, std::string_view key) const;
  // A finite decimal number written in full ("989", "1.5e3"; not "989abc").
  double real(const YAML::Node& node, std::string_view key) const;
  // Bandwidth > 0; bare numbers are multiplied by `bare_unit` B/s.
  BytesPerSecond bandwidth(const YAML::Node& node, std::string_view key, double bare_unit = 1e9) const;
  // Latency >= 0; bare numbers are ns.
  Time latency(const YAML::Node& node, std::string_view key) const;

 private:
  std::string source_;
};

}  // namespace sim
