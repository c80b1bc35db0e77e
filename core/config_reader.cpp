#include "core/config_reader.h"

#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>

#include "core/error.h"
#include "core/units.h"

namespace sim {

namespace {
std::string quoted(std::string_view s) {
  std::string q(1, '\'');
  return q.append(s).append(1, '\'');
}
}  // namespace

namespace {
// yaml-cpp parses nested collections recursively: a hostile file of 100,000
// '[' (or "- - - ..." on one line) exhausts the stack. Bound the nesting
// before parsing: flow brackets outside quotes, and block nesting by how far
// a line's indentation and "- " markers reach.
void check_nesting(const std::string& text, const std::string& source) {
  constexpr int kMaxDepth = 256;
  int flow = 0, line = 1;
  char quote = 0;
  bool line_start = true;
  int block = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      block = 0;
      if (quote == '\'') continue;
      quote = quote == '"' ? quote : 0;
      continue;
    }
    if (line_start) {
      if (c == ' ' || c == '-' || c == '\t' || c == '?' || c == ':') {
        if (++block > 4 * kMaxDepth) {
          throw InputError(source + ":" + std::to_string(line) + ": YAML nested too deeply (indentation or '- ' markers "
                                    "beyond " + std::to_string(4 * kMaxDepth) + " columns)");
        }
        continue;
      }
      line_start = false;
    }
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      if (++flow > kMaxDepth) {
        throw InputError(source + ":" + std::to_string(line) + ": YAML nested deeper than " +
                         std::to_string(kMaxDepth) + " levels");
      }
    } else if ((c == ']' || c == '}') && flow > 0) {
      --flow;
    }
  }
}
}  // namespace

YAML::Node ConfigReader::load(const std::string& text) const {
  check_nesting(text, source_);
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const std::string line = e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1);
    throw InputError(source_ + line + ": invalid YAML: " + e.msg);
  }
}

void ConfigReader::fail(const YAML::Node& at, const std::string& message) const {
  const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  const std::string line = mark.is_null() ? "" : ":" + std::to_string(mark.line + 1);
  throw InputError(source_ + line + ": " + message);
}

std::string ConfigReader::where(const YAML::Node& at, std::string_view key) const {
  const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  std::string out = source_;
  if (!mark.is_null()) out.append(":").append(std::to_string(mark.line + 1));
  out.append(": '").append(key).append("'");
  return out;
}

void ConfigReader::check_keys(const YAML::Node& node, std::string_view where,
                              std::initializer_list<std::string_view> allowed) const {
  std::set<std::string> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) fail(entry.first, "keys must be plain names");
    const std::string key = entry.first.Scalar();
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (!known) {
      std::string list;
      for (std::string_view a : allowed) list.append(list.empty() ? "" : ", ").append(a);
      fail(entry.first, "unknown key " + quoted(std::string(where) + key) + " (allowed: " + list + ")");
    }
    if (!seen.insert(key).second) fail(entry.first, "duplicate key " + quoted(std::string(where) + key));
  }
}

void ConfigReader::require_map(const YAML::Node& node, std::string_view key) const {
  if (!node.IsMap()) fail(node, quoted(key) + " must be a map of key: value");
}

YAML::Node ConfigReader::require(const YAML::Node& map, std::string_view key) const {
  YAML::Node value = map[std::string(key)];
  if (!value.IsDefined()) fail(map, "missing key " + quoted(key));
  if (value.IsNull()) fail(value, "key " + quoted(key) + " has no value");
  return value;
}

YAML::Node ConfigReader::require_list(const YAML::Node& map, std::string_view key) const {
  YAML::Node value = require(map, key);
  if (!value.IsSequence()) fail(value, quoted(key) + " must be a list ([x, y, ...])");
  if (value.size() == 0) fail(value, quoted(key) + " must not be empty");
  return value;
}

std::string ConfigReader::text(const YAML::Node& node, std::string_view key) const {
  // A key looked up but absent is a zombie node: yaml-cpp throws its own
  // InvalidNode ("internal error") from IsScalar().
  if (!node.IsDefined()) fail(node, "missing key " + quoted(key));
  if (!node.IsScalar()) fail(node, quoted(key) + " must be a single value");
  return node.Scalar();
}

std::uint64_t ConfigReader::count(const YAML::Node& node, std::string_view key) const {
  const std::string s = text(node, key);
  std::uint64_t value = 0;
  bool ok = !s.empty() && s.size() <= 18;
  for (char c : s) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (!ok) fail(node, quoted(key) + " must be a whole number, got " + quoted(s));
  return value;
}

bool ConfigReader::flag(const YAML::Node& node, std::string_view key) const {
  const std::string s = text(node, key);
  if (s == "true") return true;
  if (s == "false") return false;
  fail(node, quoted(key) + " must be true or false, got " + quoted(s));
}

double ConfigReader::real(const YAML::Node& node, std::string_view key) const {
  const std::string s = text(node, key);
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value)) {
    fail(node, quoted(key) + " must be a number, got " + quoted(s));
  }
  return value;
}

BytesPerSecond ConfigReader::bandwidth(const YAML::Node& node, std::string_view key, double bare_unit) const {
  const std::string s = text(node, key);
  BytesPerSecond bw = 0;
  try {
    bw = parse_bandwidth(s, bare_unit);
  } catch (const std::invalid_argument& e) {
    fail(node, quoted(key) + ": " + e.what());
  }
  if (bw == 0) fail(node, quoted(key) + ": bandwidth must be > 0, got " + quoted(s));
  return bw;
}

Time ConfigReader::latency(const YAML::Node& node, std::string_view key) const {
  const std::string s = text(node, key);
  try {
    return parse_time(s);
  } catch (const std::invalid_argument& e) {
    fail(node, quoted(key) + ": " + e.what());
  }
}

}  // namespace sim
