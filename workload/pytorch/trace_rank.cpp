#include "workload/pytorch/trace_rank.h"

#include <cctype>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/strict_json.h"
#include "workload/pytorch/json_element_stream.h"

namespace sim::pytorch {

namespace {

using json = nlohmann::json;

std::string stem_of(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* ext : {".json.gz", ".json"}) {
    const std::string e(ext);
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      name.resize(name.size() - e.size());
      break;
    }
  }
  return name;
}

// The digits at `i` (at most 7 of them, else -1), advancing `i` past them.
int number_at(const std::string& s, std::size_t& i) {
  const std::size_t begin = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i - begin > 7) return -1;
  return std::stoi(s.substr(begin, i - begin));
}

// The text of the JSON object starting at `open` ('{'), or "" when the text
// ends first.
std::string object_at(const std::string& text, std::size_t open) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return text.substr(open, i - open + 1);
    }
  }
  return {};
}

int rank_of_info(const json& info, const std::string& path) {
  if (!info.is_object()) return -1;
  auto r = info.find("rank");
  if (r == info.end()) return -1;
  if (!r->is_number_integer() || r->get<std::int64_t>() < 0 || r->get<std::int64_t>() > 9999999) {
    throw InputError(path + ": field 'distributedInfo.rank' is " + r->dump() + ", not a rank");
  }
  return r->get<int>();
}

}  // namespace

int rank_in_name(const std::string& path) {
  const std::string name = stem_of(path);
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int marked = -1;
  bool ambiguous = false;
  for (std::size_t k = lower.find("rank"); k != std::string::npos; k = lower.find("rank", k + 1)) {
    std::size_t i = k + 4;
    if (i < lower.size() && (lower[i] == '_' || lower[i] == '-')) ++i;
    if (i >= lower.size() || !std::isdigit(static_cast<unsigned char>(lower[i]))) continue;
    const int r = number_at(lower, i);
    if (r < 0 || (marked >= 0 && r != marked)) ambiguous = true;
    marked = r;
  }
  if (marked >= 0 || ambiguous) return ambiguous ? -1 : marked;
  int only = -1, numbers = 0;
  for (std::size_t i = 0; i < name.size();) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      ++i;
      continue;
    }
    only = number_at(name, i);
    ++numbers;
  }
  return numbers == 1 ? only : -1;
}

int recorded_rank(const std::string& kineto_path) {
  const std::string head = peek_json_text(kineto_path, 1 << 16);
  const std::size_t info = head.find("\"distributedInfo\"");
  const std::size_t events = head.find("\"traceEvents\"");
  if (info != std::string::npos && (events == std::string::npos || info < events)) {
    const std::size_t open = head.find('{', info);
    if (open != std::string::npos) {
      const std::string text = object_at(head, open);
      // The strict reader: bounded nesting, no repeated keys (a hostile head cannot recurse deep).
      if (!text.empty()) return rank_of_info(parse_json_strict(text, kineto_path + ": distributedInfo"), kineto_path);
    }
  } else if (events != std::string::npos) {
    return -1;  // Kineto writes distributedInfo before traceEvents: none recorded
  }
  // The head ends inside a long header: read the whole file's top level.
  const json top = stream_json_array(kineto_path, "traceEvents", [](json&) {});
  auto it = top.find("distributedInfo");
  return it == top.end() ? -1 : rank_of_info(*it, kineto_path);
}

std::int64_t trace_pid(const std::string& path, bool kineto) {
  const std::string head = peek_json_text(path, 1 << 16);
  auto pid_of = [](const json& j) -> std::int64_t {
    auto p = j.find("pid");
    return p != j.end() && p->is_number_integer() ? p->get<std::int64_t>() : -1;
  };
  if (!kineto) {  // "pid" comes before "nodes" in ExecutionTraceObserver's output
    const std::size_t nodes = head.find("\"nodes\"");
    const std::size_t key = head.find("\"pid\"");
    if (key == std::string::npos || (nodes != std::string::npos && key > nodes)) {
      // Written after the nodes (or past the head): the whole file's top level says.
      return pid_of(stream_json_array(path, "nodes", [](json&) {}));
    }
    std::size_t i = head.find(':', key);
    if (i == std::string::npos) return -1;
    while (++i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\t' || head[i] == '\r')) {
    }
    std::size_t end = i;
    while (end < head.size() && std::isdigit(static_cast<unsigned char>(head[end]))) ++end;
    if (end == i || end - i > 15) return -1;
    return std::stoll(head.substr(i, end - i));
  }
  const std::size_t events = head.find("\"traceEvents\"");
  if (events == std::string::npos) return -1;
  std::size_t at = head.find('[', events);
  for (int seen = 0; at != std::string::npos && seen < 4096; ++seen) {
    const std::size_t open = head.find('{', at);
    if (open == std::string::npos) break;
    const std::string text = object_at(head, open);
    if (text.empty()) break;
    at = open + text.size();
    json e;
    try {
      e = parse_json_strict(text, path);
    } catch (const InputError&) {
      return -1;  // the full read reports it
    }
    auto cat = e.find("cat");
    if (cat == e.end() || !cat->is_string()) continue;
    const std::string& c = cat->get_ref<const std::string&>();
    if (c == "cpu_op" || c == "user_annotation") return pid_of(e);
  }
  return -1;
}

std::map<int, std::string> ranks_of_files(const std::vector<std::string>& files, bool kineto, const char* option,
                                          const std::map<std::int64_t, int>& rank_of_pid) {
  std::map<int, std::string> out;
  const std::string opt(option);
  for (const std::string& f : files) {
    const int recorded = kineto ? recorded_rank(f) : -1;
    const int named = rank_in_name(f);
    int r = recorded;
    if (recorded >= 0 && named >= 0 && named != recorded && files.size() > 1) {
      throw InputError(opt + ": " + f + " records rank " + std::to_string(recorded) +
                       " (distributedInfo.rank) but its name says rank " + std::to_string(named) +
                       ": rename the file or give the right one");
    }
    if (r < 0) r = files.size() == 1 ? 0 : named;
    if (r < 0 && !rank_of_pid.empty()) {
      if (auto it = rank_of_pid.find(trace_pid(f, kineto)); it != rank_of_pid.end()) r = it->second;
    }
    if (r < 0) {
      throw InputError(opt + ": " + f + " has no rank: " +
                       (kineto ? std::string("it records none (distributedInfo.rank) and its name ")
                               : std::string(rank_of_pid.empty() ? "" : "no device trace is of its process (pid), and ") +
                                     "its name ") +
                       "states none unambiguously (\"rank<N>\" or a single number, e.g. et_rank0.json)");
    }
    auto [it, fresh] = out.emplace(r, f);
    if (!fresh) throw InputError(opt + ": rank " + std::to_string(r) + " twice: " + it->second + " and " + f);
  }
  int expect = 0;
  for (const auto& [r, f] : out) {
    if (r != expect) {
      throw InputError(opt + ": no file for rank " + std::to_string(expect) + " (ranks must be 0..N-1; found rank " +
                       std::to_string(r) + ": " + f + ")");
    }
    ++expect;
  }
  return out;
}

}  // namespace sim::pytorch
