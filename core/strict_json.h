// Strict JSON for every JSON input (ASTRA-sim system and remote-memory files,
// communicator files, JSON execution traces).
//
// nlohmann's defaults are lenient where a config must not be: a repeated key
// silently keeps the last value, and unbounded nesting lets a hostile file
// exhaust the stack. Here both are errors naming the file and line.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sim {

inline constexpr int kMaxJsonDepth = 512;

// Parses `text` (read from `source`). InputError "<source>:<line>: ..." for a
// syntax error, a key repeated within one object, or nesting deeper than
// `max_depth` levels; OutOfMemoryError "out of memory while reading <source>"
// when the document does not fit in memory.
nlohmann::json parse_json_strict(const std::string& text, const std::string& source, int max_depth = kMaxJsonDepth);

// Frees a document without allocating. nlohmann's destructor moves a tree's
// children onto a heap-allocated stack first: out of memory, that throws from
// a noexcept destructor and the process aborts (std::terminate).
void release_json(nlohmann::json& j) noexcept;

// Releases `j` by release_json when it goes out of scope: for a document that
// may be large, held while memory can run out.
class JsonRelease {
 public:
  explicit JsonRelease(nlohmann::json& j) : j_(j) {}
  ~JsonRelease() { release_json(j_); }
  JsonRelease(const JsonRelease&) = delete;
  JsonRelease& operator=(const JsonRelease&) = delete;

 private:
  nlohmann::json& j_;
};

// "out of memory while reading <source>: ..." (exit 2).
[[noreturn]] void throw_out_of_memory(const std::string& source);

// "<source>:<line>" of the n-th (0-based) occurrence of "key" in `text`, or
// "<source>" when it is not found: messages name the line of a key.
std::string json_key_place(const std::string& text, const std::string& source, const std::string& key,
                           std::size_t occurrence = 0);

}  // namespace sim
