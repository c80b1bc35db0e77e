#include "report/json_stream.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace sim {

void write_json_string(std::ostream& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out.put('"');
  std::size_t run = 0;  // characters copied as they are, written in one go
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.write(s.data() + run, static_cast<std::streamsize>(i - run));
    run = i + 1;
    switch (c) {
      case '"': out << "\\\""; break;
      case '\\': out << "\\\\"; break;
      case '\n': out << "\\n"; break;
      case '\t': out << "\\t"; break;
      case '\r': out << "\\r"; break;
      case '\b': out << "\\b"; break;
      case '\f': out << "\\f"; break;
      default: {
        const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out.write(esc, sizeof esc);
      }
    }
  }
  out.write(s.data() + run, static_cast<std::streamsize>(s.size() - run));
  out.put('"');
}

void JsonStream::newline_indent(std::size_t depth) {
  static const std::string_view kSpaces = "                                                                ";
  out_.put('\n');
  for (std::size_t n = 2 * depth; n > 0;) {
    const std::size_t k = std::min(n, kSpaces.size());
    raw(kSpaces.substr(0, k));
    n -= k;
  }
}

void JsonStream::before_value() {
  if (after_key_) {  // the key wrote the separator and indent already
    after_key_ = false;
    return;
  }
  if (has_items_.empty()) return;
  if (has_items_.back()) out_.put(',');
  has_items_.back() = true;
  newline_indent(has_items_.size());
}

JsonStream& JsonStream::key(std::string_view name) {
  before_value();
  write_json_string(out_, name);
  raw(": ");
  after_key_ = true;
  return *this;
}

JsonStream& JsonStream::open(char bracket) {
  before_value();
  out_.put(bracket);
  has_items_.push_back(false);
  return *this;
}

JsonStream& JsonStream::close(char bracket) {
  const bool items = has_items_.back();
  has_items_.pop_back();
  if (items) newline_indent(has_items_.size());
  out_.put(bracket);
  return *this;
}

JsonStream& JsonStream::value(std::string_view s) {
  before_value();
  write_json_string(out_, s);
  return *this;
}

JsonStream& JsonStream::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    raw("null");
    return *this;
  }
  char buf[40];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  raw(std::string_view(buf, static_cast<std::size_t>(end - buf)));
  if (std::string_view(buf, static_cast<std::size_t>(end - buf)).find_first_of(".e") == std::string_view::npos) raw(".0");
  return *this;
}

JsonStream& JsonStream::value(bool v) {
  before_value();
  raw(v ? "true" : "false");
  return *this;
}

template <class Int>
JsonStream& JsonStream::integer(Int v) {
  before_value();
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  raw(std::string_view(buf, static_cast<std::size_t>(end - buf)));
  return *this;
}

JsonStream& JsonStream::value(std::uint64_t v) { return integer(v); }
JsonStream& JsonStream::value(std::int64_t v) { return integer(v); }

}  // namespace sim
