#include "workflows/sweep/json_override.h"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/strict_json.h"

namespace sim::workflows {

namespace {

using nlohmann::json;

struct Where {
  const PointSettings::Override& o;
  const std::string& source;
  const std::string& spec_path;
  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(spec_path + ":" + std::to_string(o.line) + ": axis '" + o.axis + "': " + message);
  }
};

bool whole_integer(const std::string& s, long long& v) {
  std::size_t used = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == s.size();
}

bool whole_real(const std::string& s, double& v) {
  std::size_t used = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == s.size();
}

// A YAML value as JSON of the type `like` has (null `like`: the scalar's own
// reading: integer, number, true/false, else a string).
json convert(const YAML::Node& value, const json* like, const Where& w) {
  if (value.IsSequence()) {
    if (like && !like->is_array()) w.fail(w.source + ": '" + w.o.axis + "' is not a list there; got " + YAML::Dump(value));
    json out = json::array();
    const json* element = like && !like->empty() ? &(*like)[0] : nullptr;
    for (const auto& item : value) out.push_back(convert(item, element, w));
    return out;
  }
  if (value.IsMap()) {
    if (like && !like->is_object()) w.fail(w.source + ": '" + w.o.axis + "' is not a map there");
    json out = json::object();
    for (const auto& kv : value) out[kv.first.Scalar()] = convert(kv.second, nullptr, w);
    return out;
  }
  const std::string s = value.Scalar();
  long long i = 0;
  double d = 0;
  const auto expected = [&](const char* what) {
    w.fail("'" + s + "' for " + w.source + " key '" + w.o.axis.substr(w.o.axis.find('.') + 1) + "', which holds " +
           what);
  };
  if (!like) {
    if (whole_integer(s, i)) return i;
    if (whole_real(s, d)) return d;
    if (s == "true" || s == "false") return s == "true";
    return s;
  }
  if (like->is_number_integer()) {
    if (!whole_integer(s, i)) expected("an integer");
    return i;
  }
  if (like->is_number()) {
    if (!whole_real(s, d)) expected("a number");
    return d;
  }
  if (like->is_boolean()) {
    if (s != "true" && s != "false") expected("true or false");
    return s == "true";
  }
  if (like->is_string()) return s;
  if (like->is_array()) expected("a list");
  if (like->is_object()) expected("a map");
  return convert(value, nullptr, w);  // null in the file: any value
}

bool is_index(const std::string& s) {
  return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

json& find(json& root, const Where& w) {
  json* at = &root;
  std::string walked;
  for (const std::string& key : w.o.path) {
    walked.append(walked.empty() ? "" : ".").append(key);
    if (at->is_object() && at->contains(key)) {
      at = &(*at)[key];
    } else if (at->is_array() && is_index(key) && std::stoul(key) < at->size()) {
      at = &(*at)[std::stoul(key)];
    } else {
      w.fail(w.source + " has no key '" + walked + "'");
    }
  }
  return *at;
}

}  // namespace

std::string apply_json_overrides(const std::string& text, const std::string& source,
                                 const std::vector<PointSettings::Override>& overrides, const std::string& spec_path) {
  if (overrides.empty()) return text;
  // The strict reader bounds the nesting that dump() and copies recurse through.
  json root = parse_json_strict(text, source);
  for (const PointSettings::Override& o : overrides) {
    const Where w{o, source, spec_path};
    json& target = find(root, w);
    const json old = target;
    target = convert(o.value, &old, w);
  }
  return root.dump(4) + "\n";
}

}  // namespace sim::workflows
