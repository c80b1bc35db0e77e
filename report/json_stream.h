// A JSON writer that streams to an std::ostream: reports of millions of
// records are written record by record, never built as one document in memory.
//
//   JsonStream j(out);
//   j.begin_object().field("sim_time_ns", 12.5).key("ranks").begin_array();
//   ... j.end_array().end_object();
//
// Layout matches nlohmann::json::dump(2): one key or element per line,
// two-space indent, "[]" / "{}" when empty. Doubles print in the shortest
// form that reads back exactly (an integral value keeps a ".0"); NaN and
// infinities, which JSON lacks, print as null.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

namespace sim {

class JsonStream {
 public:
  explicit JsonStream(std::ostream& out) : out_(out) {}

  JsonStream& begin_object() { return open('{'); }
  JsonStream& end_object() { return close('}'); }
  JsonStream& begin_array() { return open('['); }
  JsonStream& end_array() { return close(']'); }
  JsonStream& key(std::string_view name);

  JsonStream& value(std::string_view s);
  JsonStream& value(const char* s) { return value(std::string_view(s)); }
  JsonStream& value(double v);
  JsonStream& value(bool v);
  JsonStream& value(std::uint64_t v);
  JsonStream& value(std::int64_t v);
  JsonStream& value(std::uint32_t v) { return value(static_cast<std::uint64_t>(v)); }
  JsonStream& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonStream& value(unsigned long long v) { return value(static_cast<std::uint64_t>(v)); }
  JsonStream& value(long long v) { return value(static_cast<std::int64_t>(v)); }

  template <class T>
  JsonStream& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

 private:
  JsonStream& open(char bracket);
  JsonStream& close(char bracket);
  void before_value();
  template <class Int>
  JsonStream& integer(Int v);
  void newline_indent(std::size_t depth);
  void raw(std::string_view s) { out_.write(s.data(), static_cast<std::streamsize>(s.size())); }

  std::ostream& out_;
  std::vector<bool> has_items_;  // per open bracket: something written inside yet
  bool after_key_ = false;
};

// `s` as a quoted JSON string, escapes included.
void write_json_string(std::ostream& out, std::string_view s);

}  // namespace sim
