#include "core/config_reader.h"

#include <charconv>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

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

namespace {
// YAML::Load reads the first document of the text and drops the rest without
// a word: a second one after '---' (two configs pasted into one file), text
// after '...', a directive, or, as yaml-cpp reads it, a line after a
// top-level value that has ended (`{a: 1}` then `b: 2`; ` a: 1` then `b: 2`).
// Unless the text is plainly one document (below), it is read again as
// events: the first document's are ignored, and the first event of a
// non-empty one after it stops the reading (YAML::LoadAll would build every
// document, and takes seconds on malformed input). An empty document (a
// trailing '---', or '--- ~') drops nothing and is let be.
struct LaterDocument {
  YAML::Mark start;
};

class FindLaterDocument : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    start_ = mark;
    if (first_) first_start_ = mark;
  }
  // Where the first document starts (after its directives); null if the text has none.
  const YAML::Mark& first_start() const { return first_start_; }
  void OnDocumentEnd() override { first_ = false; }
  // A null where its document starts is a token the parser did not take
  // (asked again it would answer the same, forever): content, not emptiness.
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    if (!first_ && mark.pos == start_.pos) later();
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { later(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override { later(); }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    later();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { later(); }
  void OnMapEnd() override {}

 private:
  void later() const {
    if (!first_) throw LaterDocument{start_};
  }
  bool first_ = true;
  YAML::Mark start_;
  YAML::Mark first_start_ = YAML::Mark::null_mark();
};

// Whether yaml-cpp has read all of `text` as the one document `root`, told
// without reading it again: most config files are a block map whose keys
// start at column 0, and such a map ends only at the end of the text or at a
// line that starts with '---', '...' (markers) or '%' (a directive); a map
// further right ends at a line less indented, a list at a key of its column,
// a flow collection or scalar at its end. The bytes are yaml-cpp's
// characters unless the text starts with a byte-order mark or is UTF-16/32
// (a NUL byte first or second); its lines end at '\n' (or '\r', as newer
// yaml-cpp reads a file of '\r' line ends).
bool plainly_one_document(const std::string& text, const YAML::Node& root) {
  if (!root.IsMap() || root.Style() != YAML::EmitterStyle::Block || root.Mark().column != 0) return false;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  if (!text.empty() && (byte(0) == 0x00 || byte(0) == 0xEF || byte(0) == 0xFE || byte(0) == 0xFF)) return false;
  if (text.size() > 1 && byte(1) == 0x00) return false;
  // Line to line (memchr), not byte to byte: this runs on every config.
  const auto starts_a_document = [&](std::size_t i) {
    return i < text.size() && (text[i] == '%' || text.compare(i, 3, "---") == 0 || text.compare(i, 3, "...") == 0);
  };
  if (starts_a_document(0)) return false;
  for (const char end : {'\n', '\r'}) {
    for (std::size_t i = text.find(end); i != std::string::npos; i = text.find(end, i + 1)) {
      if (starts_a_document(i + 1)) return false;
    }
  }
  return true;
}

// Throws InputError at the line where a non-empty second document begins,
// or at a directive after the first document. Each document after the first
// either throws at its first event or is empty and took at least its '---':
// the text is read once more, at most.
void check_one_document(const std::string& text, const YAML::Node& root, const std::string& source) {
  if (plainly_one_document(text, root)) return;
  // A single value (a text file of another kind read as one long scalar) is
  // no config: every reader refuses it as not a map, at its first line.
  // Reading it again would double the cost of such files, and drop nothing.
  if (root.IsScalar()) return;
  std::istringstream in(text);
  YAML::Parser parser(in);
  FindLaterDocument handler;
  try {
    while (parser.HandleNextDocument(handler)) {
    }
    // A directive ('%' at the start of a line) ends the document, and with
    // no document after it yaml-cpp reads it and drops it: `a: 1` then
    // `%b: 2` was `a: 1`. Directives before the first document are its own.
    // (A quoted value continued on a line that starts with '%' is refused
    // too: YAML wants that line indented.)
    if (handler.first_start().is_null()) return;
    int line = 0;
    for (std::size_t i = text.find('\n'); i != std::string::npos; i = text.find('\n', i + 1)) {
      ++line;
      if (line > handler.first_start().line && i + 1 < text.size() && text[i + 1] == '%') {
        throw InputError(source + ":" + std::to_string(line + 1) +
                         ": a line starting with '%' after the document is a YAML directive, and would be ignored; "
                         "directives go before the document (and its '---')");
      }
    }
  } catch (const LaterDocument& d) {
    // Where the line starts: is it a '---' (yaml-cpp's columns count
    // characters, its lines '\n')?
    std::size_t at = 0;
    for (int line = 0; line < d.start.line && at != std::string::npos; ++line) {
      at = text.find('\n', at);
      if (at != std::string::npos) ++at;
    }
    const bool marker = d.start.column == 0 && at != std::string::npos && text.compare(at, 3, "---") == 0;
    throw InputError(source + ":" + std::to_string(d.start.line + 1) + ": a second YAML document begins here" +
                     (marker ? "" : ", the first having ended before this line (at '...', or where its top-level "
                                    "value ended)") +
                     "; a config file holds one document: remove this one or move it to a file of its own");
  }
}
}  // namespace

YAML::Node ConfigReader::load(const std::string& text) const {
  check_nesting(text, source_);
  try {
    YAML::Node root = YAML::Load(text);
    check_one_document(text, root, source_);
    return root;
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
