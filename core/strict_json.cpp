#include "core/strict_json.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <new>
#include <set>
#include <vector>

#include "core/error.h"

namespace sim {

std::string json_key_place(const std::string& text, const std::string& source, const std::string& key,
                           std::size_t occurrence) {
  const std::string quoted = nlohmann::json(key).dump();
  std::size_t pos = text.find(quoted);
  for (std::size_t i = 0; i < occurrence && pos != std::string::npos; ++i) pos = text.find(quoted, pos + 1);
  if (pos == std::string::npos) return source;
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n');
  return source + ":" + std::to_string(line);
}

namespace {

using json = nlohmann::json;

// nlohmann's DOM builder behind a SAX handler that checks depth and keys as
// they come. (Its parse-callback form would do, but it scans the parent array
// at every object's end: quadratic in an array of objects, 37 s for a
// 200,000-node JSON ET.)
class StrictSax final : public nlohmann::json_sax<json> {
 public:
  StrictSax(json& root, const std::string& text, const std::string& source, int max_depth)
      : dom_(root), text_(text), source_(source), max_depth_(max_depth) {}

  bool null() override { return dom_.null(); }
  bool boolean(bool v) override { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) override { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) override { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) override { return dom_.number_float(v, s); }
  bool string(string_t& v) override { return dom_.string(v); }
  bool binary(binary_t& v) override { return dom_.binary(v); }
  bool start_object(std::size_t n) override {
    deeper();
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool key(string_t& k) override {
    const std::size_t n = occurrences_[k]++;
    if (!keys_.back().insert(k).second) {
      throw InputError(json_key_place(text_, source_, k, n) + ": duplicate key '" + k + "'");
    }
    return dom_.key(k);
  }
  bool end_object() override {
    --depth_;
    keys_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) override {
    deeper();
    return dom_.start_array(n);
  }
  bool end_array() override {
    --depth_;
    return dom_.end_array();
  }
  // Thrown here, not by the DOM builder: through this virtual interface it
  // would throw a copy sliced to nlohmann's base exception (a fuzz finding).
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& e) override {
    const std::size_t at = std::min<std::size_t>(pos == 0 ? 0 : pos - 1, text_.size());  // pos is 1-based
    const auto line = 1 + std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    throw InputError(source_ + ":" + std::to_string(line) + ": invalid JSON: " + e.what());
  }

 private:
  // Checked as each level opens, before the parser goes deeper.
  void deeper() {
    if (++depth_ > max_depth_) {
      throw InputError(source_ + ": JSON nested deeper than " + std::to_string(max_depth_) + " levels");
    }
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const std::string& text_;
  const std::string& source_;
  int max_depth_;
  int depth_ = 0;
  std::vector<std::set<std::string>> keys_;         // of each object being read
  std::map<std::string, std::size_t> occurrences_;  // of each key so far, to find its line
};

}  // namespace

nlohmann::json parse_json_strict(const std::string& text, const std::string& source, int max_depth) {
  json root;
  try {
    StrictSax sax(root, text, source, max_depth);
    json::sax_parse(text, &sax);  // every error is thrown by `sax` as an InputError
  } catch (const std::bad_alloc&) {
    release_json(root);  // the partial tree, before anything else allocates
    throw_out_of_memory(source);
  } catch (...) {
    release_json(root);
    throw;
  }
  return root;
}

void throw_out_of_memory(const std::string& source) {
  throw OutOfMemoryError("out of memory while reading " + source +
                         ": it does not fit in the memory this process may use (RAM, ulimit -v or the cgroup's "
                         "memory.max); run it on a machine with more memory");
}

namespace {

// The last element of a non-empty array or object, else null.
json* last_child(json& j) {
  if (j.is_array()) {
    auto& a = j.get_ref<json::array_t&>();
    return a.empty() ? nullptr : &a.back();
  }
  if (j.is_object()) {
    auto& o = j.get_ref<json::object_t&>();
    return o.empty() ? nullptr : &std::prev(o.end())->second;
  }
  return nullptr;
}

// Removes the last element; it is a scalar or an empty container, whose
// destruction frees without allocating.
void drop_last_child(json& j) {
  if (j.is_array()) {
    j.get_ref<json::array_t&>().pop_back();
  } else {
    auto& o = j.get_ref<json::object_t&>();
    o.erase(std::prev(o.end()));
  }
}

}  // namespace

void release_json(json& root) noexcept {
  // Post-order, always from the back, with the path to the current container
  // in a fixed ring of ancestors (no heap). Past kRing levels the oldest
  // ancestors are forgotten and found again by walking down from the root.
  constexpr std::size_t kRing = 1024;
  json* ring[kRing];
  std::size_t top = 0, held = 0;
  json* cur = &root;
  for (;;) {
    json* child = last_child(*cur);
    if (child && last_child(*child)) {  // a non-empty container: go down
      ring[top] = cur;
      top = (top + 1) % kRing;
      held = std::min(held + 1, kRing);
      cur = child;
    } else if (child) {
      drop_last_child(*cur);
    } else if (held > 0) {  // `cur` is empty now; its parent drops it next
      top = (top + kRing - 1) % kRing;
      --held;
      cur = ring[top];
    } else if (cur != &root) {
      cur = &root;
    } else {
      break;
    }
  }
}

}  // namespace sim
