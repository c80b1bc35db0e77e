#include "workload/et/et_io.h"

#include <dirent.h>
#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "core/error.h"
#include "core/output_file.h"
#include "core/input_file.h"
#include "core/strict_json.h"

namespace sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------
// Raw bytes and gzip

std::string read_bytes(const std::string& path) {
  // Regular files only: a directory, /dev/zero or a FIFO is refused by name.
  return read_input_file(path, "trace", std::numeric_limits<std::uint64_t>::max());
}

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

std::string gunzip(std::string_view data, const std::string& path) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) throw InputError(path + ": cannot initialise zlib");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());  // ET files stay far below 4 GiB
  std::string out;
  char chunk[1 << 16];
  int rc = Z_OK;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - zs.avail_out);
    if (rc == Z_STREAM_END) {
      // gzip allows several concatenated members (e.g. `cat a.gz b.gz`).
      if (zs.avail_in == 0) break;
      inflateReset(&zs);
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // input ended mid-stream
    if (rc != Z_OK) break;
  }
  std::string msg = zs.msg ? zs.msg : "";
  inflateEnd(&zs);
  if (rc == Z_STREAM_END) return out;
  if (rc == Z_BUF_ERROR) throw InputError(path + ": truncated gzip data");
  throw InputError(path + ": corrupt gzip data" + (msg.empty() ? "" : " (" + msg + ")"));
}

std::string gzip(const std::string& data, const std::string& path) {
  z_stream zs{};
  // windowBits 15 + 16 asks zlib for a gzip header and trailer.
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw InputError(path + ": cannot initialise zlib");
  std::string out(deflateBound(&zs, data.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw InputError(path + ": gzip compression failed");
  return out;
}

// ---------------------------------------------------------------------------
// Varint-delimited protobuf

void append_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

std::string frame_at(std::size_t k, std::size_t offset) {
  return "frame " + std::to_string(k) + " (byte offset " + std::to_string(offset) + ")";
}

// Calls on_node(k, bytes, size) for every node frame k >= 1; frame 0 goes to `metadata`.
template <typename OnNode>
void scan_frames(std::string_view data, const std::string& path, bool inflated, et::GlobalMetadata& metadata,
                 std::size_t* frame_count, OnNode&& on_node, const std::string* detail = nullptr) {
  const std::string where = inflated ? " of the inflated data" : "";
  std::size_t pos = 0;
  {
    // Count the frames first: growing a vector of protobuf messages copies
    // them (their move constructor is not noexcept), which costs more than this pass.
    std::size_t frames = 0;
    for (std::size_t p = pos; p < data.size(); ++frames) {
      std::uint64_t len = 0;
      int shift = 0;
      while (p < data.size() && shift < 64) {
        const auto b = static_cast<unsigned char>(data[p++]);
        len |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) break;
      }
      if (len > data.size() - p) break;  // the main loop reports it
      p += len;
    }
    if (frame_count) *frame_count = frames;
  }
  std::size_t k = 0;
  for (; pos < data.size(); ++k) {
    const std::size_t start = pos;
    // Writers use 32-bit varints, but a 64-bit one is still well formed.
    std::uint64_t len = 0;
    bool done = false;
    for (int shift = 0; shift < 64 && pos < data.size(); shift += 7) {
      const auto b = static_cast<unsigned char>(data[pos++]);
      len |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        done = true;
        break;
      }
    }
    if (!done) {
      if (pos < data.size())
        throw InputError(path + ": frame " + std::to_string(k) + " at byte offset " + std::to_string(start) +
                         where + ": length varint longer than 10 bytes");
      throw InputError(path + ": truncated frame " + std::to_string(k) + " at byte offset " +
                       std::to_string(start) + where + " (length varint cut off)");
    }
    const std::size_t left = data.size() - pos;
    if (len > left)
      throw InputError(path + ": truncated frame " + std::to_string(k) + " at byte offset " +
                       std::to_string(start) + where + " (length " + std::to_string(len) + ", " +
                       std::to_string(left) + " bytes left)");
    if (len > static_cast<std::uint64_t>(INT_MAX))
      throw InputError(path + ": " + frame_at(k, start) + where + ": frame larger than 2 GiB");
    const char* bytes = data.data() + pos;
    const int size = static_cast<int>(len);
    pos += len;
    if (k == 0) {
      if (!metadata.ParseFromArray(bytes, size))
        throw InputError(path + ": " + frame_at(k, start) + where + ": not a valid Chakra GlobalMetadata");
      continue;
    }
    // Empty frames are all-default nodes; the C++ readers accept them too.
    if (!on_node(bytes, size))
      throw InputError(path + ": " + frame_at(k, start) + where + ": not a valid Chakra node" +
                       (detail && !detail->empty() ? " (" + *detail + ")" : std::string()));
  }
  if (k == 0) throw InputError(path + ": empty file, expected GlobalMetadata");
}

void parse_frames(const std::string& data, const std::string& path, bool inflated, EtTrace& trace) {
  std::size_t frames = 0;
  bool reserved = false;
  scan_frames(data, path, inflated, trace.metadata, &frames, [&](const char* bytes, int size) {
    // Growing a vector of protobuf messages copies them (their move is not
    // noexcept), so reserve from the frame count first.
    if (!reserved) {
      trace.nodes.reserve(frames);
      reserved = true;
    }
    return trace.nodes.emplace_back().ParseFromArray(bytes, size);
  });
}

// ---------------------------------------------------------------------------
// JSON

const char* kind(const json& v) { return v.type_name(); }

// Legacy feeder form: {"workload_graph": [{"Id": ..., ...}, ...], ...}.
class LegacyReader {
 public:
  explicit LegacyReader(const std::string& path) : path_(path) {}

  void read(const json& doc, EtTrace& trace) {
    for (const auto& [key, value] : doc.items()) {
      if (key != "workload_graph" && key != "workload_name" && key != "ngpus" && key != "soc")
        throw InputError(path_ + ": unknown top-level key '" + key +
                         "' (expected workload_graph, workload_name, ngpus, soc)");
    }
    const json& graph = doc.at("workload_graph");
    if (!graph.is_array())
      throw InputError(path_ + ": 'workload_graph' must be an array, not " + kind(graph));
    trace.nodes.reserve(graph.size());
    for (std::size_t i = 0; i < graph.size(); ++i) trace.nodes.push_back(node(graph[i], i));
  }

 private:
  et::Node node(const json& j, std::size_t index) {
    where_ = path_ + ": workload_graph[" + std::to_string(index) + "]";
    if (!j.is_object()) throw InputError(where_ + ": expected an object, not " + kind(j));
    if (!j.contains("Id")) throw InputError(where_ + ": missing 'Id'");
    et::Node n;
    n.set_id(to_uint(j["Id"], "Id"));
    where_ += " (Id " + std::to_string(n.id()) + ")";
    if (!j.contains("NodeType")) throw InputError(where_ + ": missing 'NodeType'");

    for (const auto& [key, v] : j.items()) {
      if (key == "Id") {
      } else if (key == "Name") {
        if (!v.is_string()) throw InputError(where_ + ": 'Name' must be a string, not " + kind(v));
        n.set_name(v.get<std::string>());
      } else if (key == "NodeType") {
        const std::int64_t t = to_int(v, key, 0, INT_MAX);
        if (!et::NodeType_IsValid(static_cast<int>(t)))
          throw InputError(where_ + ": 'NodeType' " + std::to_string(t) + " is not a Chakra node type (0..7)");
        n.set_type(static_cast<et::NodeType>(t));
      } else if (key == "data_deps") {
        for (const json& d : list(v, key)) n.add_data_deps(to_uint(d, key));
      } else if (key == "ctrlDeps" || key == "ctrl_deps") {
        for (const json& d : list(v, key)) n.add_ctrl_deps(to_uint(d, key));
      } else if (key == "runtime") {
        n.set_duration_micros(to_uint(v, key));
      } else if (!is_attr_key(key)) {
        throw InputError(where_ + ": unknown key '" + key + "'");
      }
    }
    // A fixed attribute order keeps the result independent of JSON key order.
    // Oneof members are the ones Chakra's own producers write.
    constexpr std::int64_t i32min = std::numeric_limits<std::int32_t>::min();
    constexpr std::int64_t i32max = std::numeric_limits<std::int32_t>::max();
    constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();
    constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
    for (const char* key : kAttrKeys) {
      if (!j.contains(key)) continue;
      const json& v = j[key];
      const std::string k = key;
      et::AttributeProto* a = n.add_attr();
      a->set_name(k);
      if (k == "is_cpu_op") {
        if (!v.is_boolean()) throw InputError(where_ + ": 'is_cpu_op' must be a boolean, not " + kind(v));
        a->set_bool_val(v.get<bool>());
      } else if (k == "tensor_size") {
        a->set_uint64_val(to_uint(v, k));
      } else if (k == "comm_type" || k == "comm_size" || k == "num_ops") {
        a->set_int64_val(to_int(v, k, i64min, i64max));
      } else {  // comm_src, comm_dst, comm_tag, comm_priority
        a->set_int32_val(static_cast<std::int32_t>(to_int(v, k, i32min, i32max)));
      }
    }
    return n;
  }

  static constexpr const char* kAttrKeys[] = {"is_cpu_op", "num_ops",  "tensor_size", "comm_type", "comm_priority",
                                              "comm_size", "comm_src", "comm_dst",    "comm_tag"};

  static bool is_attr_key(const std::string& key) {
    return std::any_of(std::begin(kAttrKeys), std::end(kAttrKeys), [&](const char* k) { return key == k; });
  }

  const json& list(const json& v, const std::string& key) {
    if (!v.is_array()) throw InputError(where_ + ": '" + key + "' must be an array, not " + kind(v));
    return v;
  }

  std::uint64_t to_uint(const json& v, const std::string& key) {
    if (!v.is_number_unsigned())
      throw InputError(where_ + ": '" + key + "' must be a non-negative integer, not " + v.dump());
    return v.get<std::uint64_t>();
  }

  std::int64_t to_int(const json& v, const std::string& key, std::int64_t lo, std::int64_t hi) {
    bool ok = v.is_number_integer();
    std::int64_t x = 0;
    if (ok && v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      ok = u <= static_cast<std::uint64_t>(hi);
      x = static_cast<std::int64_t>(u);
    } else if (ok) {
      x = v.get<std::int64_t>();
      ok = x >= lo && x <= hi;
    }
    if (!ok)
      throw InputError(where_ + ": '" + key + "' must be an integer in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "], not " + v.dump());
    return x;
  }

  const std::string& path_;
  std::string where_;
};

void parse_message(const json& j, google::protobuf::Message& msg, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object, not " + std::string(kind(j)));
  // Accepts both the proto field names and lowerCamelCase; rejects unknown keys.
  const auto status = google::protobuf::util::JsonStringToMessage(j.dump(), &msg);
  if (!status.ok()) throw InputError(where + ": " + std::string(status.message()));
}

// Our form: {"metadata": {...}, "nodes": [{...}, ...]}.
void read_our_json(const json& doc, const std::string& path, EtTrace& trace) {
  for (const auto& [key, value] : doc.items()) {
    if (key != "metadata" && key != "nodes")
      throw InputError(path + ": unknown top-level key '" + key + "' (expected metadata, nodes)");
  }
  if (doc.contains("metadata")) parse_message(doc["metadata"], trace.metadata, path + ": metadata");
  if (!doc.contains("nodes")) throw InputError(path + ": missing 'nodes'");
  const json& nodes = doc["nodes"];
  if (!nodes.is_array()) throw InputError(path + ": 'nodes' must be an array, not " + std::string(kind(nodes)));
  trace.nodes.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::string where = path + ": nodes[" + std::to_string(i) + "]";
    const json& j = nodes[i];
    if (j.is_object() && j.contains("id")) {
      const json& id = j["id"];  // canonical JSON quotes 64-bit integers
      where += " (id " + (id.is_string() ? id.get<std::string>() : id.dump()) + ")";
    }
    parse_message(j, trace.nodes.emplace_back(), where);
  }
}

bool looks_like_json(std::string_view data) {
  const auto first = data.find_first_not_of(" \t\r\n");
  return first != std::string::npos && data[first] == '{';
}

void read_json(const std::string& data, const std::string& path, EtTrace& trace) {
  // Strict: duplicate keys and nesting deeper than kMaxJsonDepth are errors
  // (InputError; the caller may still try the bytes as a binary ET).
  json doc = parse_json_strict(data, path);
  const JsonRelease release(doc);  // several times the file's size: freed without allocating
  try {
    if (doc.contains("workload_graph")) {
      LegacyReader(path).read(doc, trace);
    } else if (doc.contains("metadata") || doc.contains("nodes")) {
      read_our_json(doc, path, trace);
    } else {
      throw InputError(path + ": JSON is neither Chakra's feeder form ('workload_graph') nor ours "
                              "('metadata', 'nodes')");
    }
  } catch (const std::bad_alloc&) {
    release_json(doc);
    decltype(trace.nodes)().swap(trace.nodes);
    throw_out_of_memory(path);
  }
}

// ---------------------------------------------------------------------------
// Writing

void write_atomically(const std::string& path, const std::string& bytes) { write_output_file(path, bytes); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// ---------------------------------------------------------------------------
// Attributes

using AttrList = google::protobuf::RepeatedPtrField<et::AttributeProto>;

const et::AttributeProto* find_in(const AttrList& attrs, std::string_view name) {
  for (const auto& a : attrs)
    if (a.name() == name) return &a;
  return nullptr;
}

std::string member_name(int value_case) {
  if (value_case == 0) return "<none>";
  // ValueCase values are the oneof field numbers.
  const auto* field = et::AttributeProto::descriptor()->FindFieldByNumber(value_case);
  return field ? field->name() : "<field " + std::to_string(value_case) + ">";
}

// Who holds an attribute, named only when an error needs it (building the
// string on every lookup showed up in profiles of large traces).
struct Owner {
  bool is_node = false;  // false: the GlobalMetadata
  std::uint64_t id = 0;
  std::string str() const { return is_node ? "node " + std::to_string(id) : "GlobalMetadata"; }
};

[[noreturn]] void wrong_kind(const Owner& owner, std::string_view name, int value_case, const char* expected) {
  throw AttrError(owner.str(), "attribute '" + std::string(name) + "' has type " + member_name(value_case) +
                                  ", expected " + expected);
}
[[noreturn]] void wrong_kind(const Owner& owner, const et::AttributeProto& a, const char* expected) {
  wrong_kind(owner, a.name(), static_cast<int>(a.value_case()), expected);
}

Owner node_owner(const et::Node& node) { return Owner{true, node.id()}; }
Owner node_owner(const WireNode& node) { return Owner{true, node.id}; }
const Owner kMetadataOwner{};

// Any integer member; `is_signed` says whether `bits` holds an int64.
struct IntValue {
  std::uint64_t bits;
  bool is_signed;
};

// The integer members of the oneof, by field number: 1 signed, 2 unsigned, 0 not an integer.
int integer_kind(int value_case) {
  using A = et::AttributeProto;
  switch (value_case) {
    case A::kInt32Val: case A::kInt64Val: case A::kSint32Val: case A::kSint64Val: case A::kSfixed32Val:
    case A::kSfixed64Val: return 1;
    case A::kUint32Val: case A::kUint64Val: case A::kFixed32Val: case A::kFixed64Val: return 2;
    default: return 0;
  }
}

std::optional<IntValue> integer_member(const et::AttributeProto& a) {
  using A = et::AttributeProto;
  auto s = [](std::int64_t v) { return IntValue{static_cast<std::uint64_t>(v), true}; };
  auto u = [](std::uint64_t v) { return IntValue{v, false}; };
  switch (a.value_case()) {
    case A::kInt32Val: return s(a.int32_val());
    case A::kInt64Val: return s(a.int64_val());
    case A::kSint32Val: return s(a.sint32_val());
    case A::kSint64Val: return s(a.sint64_val());
    case A::kSfixed32Val: return s(a.sfixed32_val());
    case A::kSfixed64Val: return s(a.sfixed64_val());
    case A::kUint32Val: return u(a.uint32_val());
    case A::kUint64Val: return u(a.uint64_val());
    case A::kFixed32Val: return u(a.fixed32_val());
    case A::kFixed64Val: return u(a.fixed64_val());
    default: return std::nullopt;
  }
}

std::int64_t int_from(const IntValue& v, std::string_view name, const Owner& owner) {
  if (!v.is_signed && v.bits > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw AttrError(owner.str(), "attribute '" + std::string(name) + "' value " + std::to_string(v.bits) +
                                    " exceeds the int64 range");
  return static_cast<std::int64_t>(v.bits);
}

std::int64_t int_of(const et::AttributeProto& a, const Owner& owner) {
  const auto v = integer_member(a);
  if (!v) wrong_kind(owner, a, "integer");
  return int_from(*v, a.name(), owner);
}

std::optional<std::int64_t> int_in(const AttrList& attrs, std::string_view name, const Owner& owner) {
  const et::AttributeProto* a = find_in(attrs, name);
  if (!a) return std::nullopt;
  return int_of(*a, owner);
}

std::optional<std::string> string_in(const AttrList& attrs, std::string_view name, const Owner& owner) {
  const et::AttributeProto* a = find_in(attrs, name);
  if (!a) return std::nullopt;
  if (a->value_case() != et::AttributeProto::kStringVal) wrong_kind(owner, *a, "string_val");
  return a->string_val();
}

et::AttributeProto* attr_for_set(et::Node& node, std::string_view name) {
  for (auto& a : *node.mutable_attr())
    if (a.name() == name) return &a;
  et::AttributeProto* a = node.add_attr();
  a->set_name(std::string(name));
  return a;
}

// "<prefix>.<rank>.et|.et.gz|.json" -> prefix and rank; ranks are plain
// decimals without leading zeros, as producers print them.
struct RankFile {
  std::string_view prefix;  // views into the name parsed
  int rank;
  std::string_view suffix;  // ".<rank><ext>"
};

std::optional<RankFile> parse_rank_file(std::string_view name) {
  for (std::string_view ext : {".et.gz", ".et", ".json"}) {
    if (!ends_with(name, ext)) continue;
    const std::string_view stem = name.substr(0, name.size() - ext.size());
    const auto dot = stem.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    const std::string_view digits = stem.substr(dot + 1);
    if (digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0') ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    int rank = 0;
    for (const char c : digits) rank = rank * 10 + (c - '0');  // at most 9 digits: no overflow
    return RankFile{stem.substr(0, dot), rank, name.substr(dot)};
  }
  return std::nullopt;
}

// The names of the regular files in `dir` (symbolic links followed), as
// std::filesystem::directory_iterator with is_regular_file lists them, through
// readdir: the iterator builds a path per entry, 3,000 instructions a file
// when listing 4,096 rank files (case (b) of docs/benchmarks.md).
std::vector<std::string> regular_files_in(const std::string& dir, std::error_code& ec) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    ec = std::error_code(errno, std::generic_category());
    return names;
  }
  std::string path = dir;
  if (!path.empty() && path.back() != '/') path += '/';
  const std::size_t base = path.size();
  for (;;) {
    errno = 0;
    const dirent* e = ::readdir(d);
    if (!e) {
      if (errno != 0) ec = std::error_code(errno, std::generic_category());
      break;
    }
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    bool regular = e->d_type == DT_REG;
    if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {  // the type needs a look at the file
      path.resize(base);
      path += name;
      struct stat st {};
      regular = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    }
    if (regular) names.emplace_back(name);
  }
  ::closedir(d);
  return names;
}

// One prefix's files as (rank, path), in any order. A vector sorted once,
// not a map: a node and a copy of the path per file were most of listing
// 4,096 rank files (case (b) of docs/benchmarks.md).
using RankPaths = std::vector<std::pair<int, std::string>>;

// Sorts by rank; InputError for a rank with two files (the lowest such rank).
void sort_ranks(RankPaths& files) {
  std::sort(files.begin(), files.end());  // equal ranks: by path
  for (std::size_t i = 1; i < files.size(); ++i) {
    if (files[i].first == files[i - 1].first) {
      throw InputError("rank " + std::to_string(files[i].first) + " has two files: '" + files[i - 1].second +
                       "' and '" + files[i].second + "'");
    }
  }
}

// Checks ranks 0..N-1 of sorted `files` and returns the paths indexed by rank.
std::vector<std::string> by_rank(RankPaths&& files, const std::string& shown_prefix) {
  std::vector<std::string> out;
  out.reserve(files.size());
  for (auto& [rank, path] : files) {
    if (rank != static_cast<int>(out.size())) {
      const int missing = static_cast<int>(out.size());
      throw InputError("missing rank " + std::to_string(missing) + " (expected " + shown_prefix + "." +
                       std::to_string(missing) + ".et)");
    }
    out.push_back(std::move(path));
  }
  return out;
}

// read_et_wire_nodes on bytes held elsewhere (a FileBuffer, a string).
void scan_wire(std::string_view data, const std::string& path, et::GlobalMetadata& metadata,
               const std::function<void(const WireNode&)>& on_node, std::size_t* frame_count) {
  const bool inflated = is_gzip(data);
  std::string inflated_bytes;
  if (inflated) {
    inflated_bytes = gunzip(data, path);
    data = inflated_bytes;
  }
  WireNode wire;
  if (looks_like_json(data)) {
    EtTrace trace = parse_et(std::string(data), path);
    metadata = std::move(trace.metadata);
    if (frame_count) *frame_count = trace.nodes.size() + 1;
    for (const et::Node& n : trace.nodes) {
      wire_node_from(n, wire);
      on_node(wire);
    }
    return;
  }
  std::string error, detail;
  std::size_t error_at = 0;
  // The memo points into `data`: one per buffer. Clearing it costs about as
  // much as decoding a few nodes (128 entries, ~10 KB), so a trace of a few
  // hundred bytes, where attributes barely repeat, goes without (benchmark
  // (b) of docs/benchmarks.md loads 4,096 traces of 76 B: clearing it is 15% of its
  // instructions). The memo never changes a result, only its cost.
  constexpr std::size_t kMemoFrom = 1024;
  std::unique_ptr<WireAttrMemo> memo;
  if (data.size() >= kMemoFrom) memo = std::make_unique<WireAttrMemo>();
  scan_frames(
      data, path, inflated, metadata, frame_count,
      [&](const char* bytes, int size) {
        if (!decode_wire_node(bytes, static_cast<std::size_t>(size), wire, error, error_at,
                              data.size() - static_cast<std::size_t>(bytes - data.data()), memo.get())) {
          detail = error + " at byte offset " + std::to_string(static_cast<std::size_t>(bytes - data.data()) + error_at);
          return false;
        }
        on_node(wire);
        return true;
      },
      &detail);
}

}  // namespace

// ---------------------------------------------------------------------------

EtTrace read_et(const std::string& path) { return parse_et(read_bytes(path), path); }

EtTrace parse_et(std::string data, const std::string& path) {
  EtTrace trace;
  trace.path = path;
  const bool inflated = is_gzip(data);
  if (inflated) data = gunzip(data, path);
  if (looks_like_json(data)) {
    try {
      read_json(data, path, trace);
      return trace;
    } catch (const InputError&) {
      // A binary ET whose frame 0 is 123 bytes long also starts with '{'.
      if (data[0] == '{') {
        try {
          EtTrace binary;
          binary.path = path;
          parse_frames(data, path, inflated, binary);
          return binary;
        } catch (const InputError&) {
        }
      }
      throw;
    }
  }
  parse_frames(data, path, inflated, trace);
  return trace;
}

void read_et_nodes(const std::string& path, et::GlobalMetadata& metadata,
                   const std::function<void(const et::Node&)>& on_node) {
  std::string data = read_bytes(path);
  const bool inflated = is_gzip(data);
  if (inflated) data = gunzip(data, path);
  if (looks_like_json(data)) {
    EtTrace trace = read_et(path);
    metadata = std::move(trace.metadata);
    for (const et::Node& n : trace.nodes) on_node(n);
    return;
  }
  // One message, parsed into again and again: protobuf keeps the memory of
  // its strings and repeated fields across parses.
  et::Node node;
  scan_frames(data, path, inflated, metadata, nullptr, [&](const char* bytes, int size) {
    if (!node.ParseFromArray(bytes, size)) return false;
    on_node(node);
    return true;
  });
}

void read_et_wire_nodes(const std::string& path, et::GlobalMetadata& metadata,
                        const std::function<void(const WireNode&)>& on_node) {
  FileBuffer buffer;
  read_et_wire_nodes(path, metadata, on_node, buffer, nullptr);
}

void read_et_wire_nodes(const std::string& path, et::GlobalMetadata& metadata,
                        const std::function<void(const WireNode&)>& on_node, FileBuffer& buffer,
                        std::size_t* frame_count) {
  scan_wire(buffer.read(path, "trace", std::numeric_limits<std::uint64_t>::max()), path, metadata, on_node,
            frame_count);
}

void scan_et_wire_nodes(std::string data, const std::string& path, et::GlobalMetadata& metadata,
                        const std::function<void(const WireNode&)>& on_node) {
  scan_wire(data, path, metadata, on_node, nullptr);
}

void scan_et_wire_nodes(std::string_view data, const std::string& path, et::GlobalMetadata& metadata,
                        const std::function<void(const WireNode&)>& on_node, std::size_t* frame_count) {
  scan_wire(data, path, metadata, on_node, frame_count);
}

void wire_node_from(const et::Node& node, WireNode& out) {
  out.id = node.id();
  out.name = node.name();
  out.type = static_cast<std::int32_t>(node.type());
  out.duration_micros = node.duration_micros();
  out.ctrl_deps.assign(node.ctrl_deps().begin(), node.ctrl_deps().end());
  out.data_deps.assign(node.data_deps().begin(), node.data_deps().end());
  out.attrs.clear();
  for (const et::AttributeProto& a : node.attr()) {
    WireAttr& w = out.attrs.emplace_back();
    w.name = a.name();
    w.value_case = static_cast<int>(a.value_case());
    if (const auto v = integer_member(a)) w.bits = v->bits;
    if (a.value_case() == et::AttributeProto::kBoolVal) w.bits = a.bool_val();
    if (a.value_case() == et::AttributeProto::kStringVal) w.str = a.string_val();
    if (a.value_case() == et::AttributeProto::kBoolList) {
      w.count = static_cast<std::uint32_t>(a.bool_list().values_size());
      for (int i = 0; i < a.bool_list().values_size() && i < 64; ++i) {
        if (a.bool_list().values(i)) w.bits |= 1ull << i;
      }
    }
  }
  out.inputs_values = node.inputs().values();
}

std::string et_bytes(const EtTrace& trace, const std::string& path) {
  // Python's Chakra reader takes a zero length as end of stream, so an empty
  // frame would silently cut the trace short for those tools.
  if (trace.metadata.ByteSizeLong() == 0)
    throw InputError(path + ": refusing to write an empty GlobalMetadata (Chakra's Python tools stop at a "
                            "zero-length frame); set metadata.version, e.g. \"0.0.4\"");
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    if (trace.nodes[i].ByteSizeLong() == 0)
      throw InputError(path + ": nodes[" + std::to_string(i) +
                       "] (id 0): refusing to write an empty node (Chakra's Python tools stop at a "
                       "zero-length frame)");
  }
  std::string bytes;
  auto append = [&](const google::protobuf::MessageLite& m) {
    append_varint(bytes, m.ByteSizeLong());
    if (!m.AppendToString(&bytes)) throw InputError(path + ": cannot serialize (message over 2 GiB?)");
  };
  append(trace.metadata);
  for (const et::Node& n : trace.nodes) append(n);
  if (ends_with(path, ".gz")) bytes = gzip(bytes, path);
  return bytes;
}

void write_et(const EtTrace& trace, const std::string& path) { write_atomically(path, et_bytes(trace, path)); }

void write_et_json(const EtTrace& trace, const std::string& path) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;  // same spelling as the schema and attr names
  auto to_json = [&](const google::protobuf::Message& m) {
    std::string s;
    const auto status = google::protobuf::util::MessageToJsonString(m, &s, opts);
    if (!status.ok()) throw InputError(path + ": " + std::string(status.message()));
    return s;
  };
  // One node per line: readable, diffable, and deterministic.
  std::string out = "{\n  \"metadata\": " + to_json(trace.metadata) + ",\n  \"nodes\": [";
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    out += to_json(trace.nodes[i]);
  }
  out += trace.nodes.empty() ? "]\n}\n" : "\n  ]\n}\n";
  write_atomically(path, out);
}

std::vector<std::string> resolve_rank_files(const std::string& folder_or_prefix) {
  std::error_code ec;
  if (fs::is_directory(folder_or_prefix, ec)) {
    std::map<std::string, RankPaths, std::less<>> by_prefix;
    // Each file's path as directory_iterator spells it: the folder, a '/' unless it ends in one, the name.
    const std::string folder =
        folder_or_prefix.back() == '/' ? folder_or_prefix : folder_or_prefix + '/';
    RankPaths* same = nullptr;  // the previous file's prefix's (a folder usually holds one prefix)
    std::string_view same_prefix;
    for (const std::string& name : regular_files_in(folder_or_prefix, ec)) {
      const auto rf = parse_rank_file(name);
      if (!rf) continue;
      if (!same || rf->prefix != same_prefix) {
        auto it = by_prefix.find(rf->prefix);
        if (it == by_prefix.end()) it = by_prefix.emplace(std::string(rf->prefix), RankPaths{}).first;
        same = &it->second;
        same_prefix = it->first;
      }
      same->emplace_back(rf->rank, folder + name);
    }
    for (auto& [prefix, files] : by_prefix) sort_ranks(files);
    if (ec) throw InputError("cannot list folder '" + folder_or_prefix + "': " + ec.message());
    if (by_prefix.empty())
      throw InputError("no files <prefix>.<rank>.et found in folder '" + folder_or_prefix + "'");
    if (by_prefix.size() > 1) {
      std::string names;
      for (const auto& [prefix, files] : by_prefix) names += (names.empty() ? "" : ", ") + prefix;
      throw InputError("folder '" + folder_or_prefix + "' holds rank files of several prefixes (" + names +
                       "); expected one");
    }
    auto& [prefix, files] = *by_prefix.begin();
    return by_rank(std::move(files), (fs::path(folder_or_prefix) / prefix).string());
  }

  if (fs::is_regular_file(folder_or_prefix, ec)) {
    // A rank file given by name: <prefix>.<rank>.et stands for all of its
    // prefix's ranks; any other single file is a one-rank workload.
    const fs::path file(folder_or_prefix);
    const std::string name = file.filename().string();
    if (const auto rf = parse_rank_file(name)) {
      return resolve_rank_files((file.parent_path() / rf->prefix).string());
    }
    return {folder_or_prefix};
  }

  const fs::path p(folder_or_prefix);
  const std::string base = p.filename().string();
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  RankPaths files;
  if (!base.empty() && fs::is_directory(dir, ec)) {
    for (const std::string& name : regular_files_in(dir.string(), ec)) {
      // A cheap look at the name first: most entries of a folder of many
      // prefixes are not this one's.
      if (name.size() <= base.size() || name.compare(0, base.size(), base) != 0 || name[base.size()] != '.') continue;
      auto rf = parse_rank_file(name);
      if (rf && rf->prefix == base) files.emplace_back(rf->rank, folder_or_prefix + std::string(rf->suffix));
    }
  }
  sort_ranks(files);
  if (files.empty()) throw InputError("no files " + folder_or_prefix + ".<rank>.et found");
  return by_rank(std::move(files), folder_or_prefix);
}

std::vector<std::pair<int, std::string>> rank_files_of(const std::string& prefix) {
  const fs::path p(prefix);
  const std::string base = p.filename().string();
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  RankPaths files;
  std::error_code ec;
  if (base.empty() || !fs::is_directory(dir, ec)) return files;
  for (const std::string& name : regular_files_in(dir.string(), ec)) {
    if (name.size() <= base.size() || name.compare(0, base.size(), base) != 0 || name[base.size()] != '.') continue;
    const auto rf = parse_rank_file(name);
    if (rf && rf->prefix == base) files.emplace_back(rf->rank, prefix + std::string(rf->suffix));
  }
  std::sort(files.begin(), files.end());
  return files;
}

const et::AttributeProto* find_attr(const et::Node& node, std::string_view name) {
  return find_in(node.attr(), name);
}

std::optional<std::int64_t> attr_int(const et::Node& node, std::string_view name) {
  return int_in(node.attr(), name, node_owner(node));
}

std::optional<bool> attr_bool(const et::Node& node, std::string_view name) {
  const et::AttributeProto* a = find_attr(node, name);
  if (!a) return std::nullopt;
  return attr_bool_of(node, *a);
}

std::int64_t attr_int_of(const et::Node& node, const et::AttributeProto& a) { return int_of(a, node_owner(node)); }

bool attr_bool_of(const et::Node& node, const et::AttributeProto& a) {
  if (a.value_case() == et::AttributeProto::kBoolVal) return a.bool_val();
  // STG and the TACOS writer store is_cpu_op as int32_val.
  const auto v = integer_member(a);
  if (!v) wrong_kind(node_owner(node), a, "bool or integer");
  return v->bits != 0;
}

std::optional<std::string> attr_string(const et::Node& node, std::string_view name) {
  return string_in(node.attr(), name, node_owner(node));
}

std::optional<std::vector<bool>> attr_bool_list(const et::Node& node, std::string_view name) {
  const et::AttributeProto* a = find_attr(node, name);
  if (!a) return std::nullopt;
  if (a->value_case() != et::AttributeProto::kBoolList) wrong_kind(node_owner(node), *a, "bool_list");
  return std::vector<bool>(a->bool_list().values().begin(), a->bool_list().values().end());
}

std::optional<std::int64_t> metadata_int(const et::GlobalMetadata& md, std::string_view name) {
  return int_in(md.attr(), name, kMetadataOwner);
}

std::optional<double> metadata_number(const et::GlobalMetadata& md, std::string_view name) {
  const et::AttributeProto* a = find_in(md.attr(), name);
  if (!a) return std::nullopt;
  if (a->value_case() == et::AttributeProto::kDoubleVal) return a->double_val();
  if (a->value_case() == et::AttributeProto::kFloatVal) return a->float_val();
  return static_cast<double>(int_of(*a, kMetadataOwner));
}

std::optional<std::string> metadata_string(const et::GlobalMetadata& md, std::string_view name) {
  return string_in(md.attr(), name, kMetadataOwner);
}

void set_attr_int(et::Node& node, std::string_view name, std::int64_t value) {
  attr_for_set(node, name)->set_int64_val(value);
}

void set_attr_bool(et::Node& node, std::string_view name, bool value) {
  attr_for_set(node, name)->set_bool_val(value);
}

void set_attr_string(et::Node& node, std::string_view name, std::string_view value) {
  attr_for_set(node, name)->set_string_val(std::string(value));
}

std::int64_t wire_attr_int(const WireNode& node, const WireAttr& a) {
  const int kind = integer_kind(a.value_case);
  if (kind == 0) wrong_kind(node_owner(node), a.name, a.value_case, "integer");
  return int_from(IntValue{a.bits, kind == 1}, a.name, node_owner(node));
}

bool wire_attr_bool(const WireNode& node, const WireAttr& a) {
  if (a.value_case == et::AttributeProto::kBoolVal) return a.bits != 0;
  if (integer_kind(a.value_case) == 0) wrong_kind(node_owner(node), a.name, a.value_case, "bool or integer");
  return a.bits != 0;
}

std::string_view wire_attr_string(const WireNode& node, const WireAttr& a) {
  if (a.value_case != et::AttributeProto::kStringVal) wrong_kind(node_owner(node), a.name, a.value_case, "string_val");
  return a.str;
}

}  // namespace sim
