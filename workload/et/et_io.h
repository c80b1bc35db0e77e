// Chakra execution-trace (ET) files: read and write.
//
// On disk an ET is a sequence of protobuf messages, each prefixed by its
// length as a varint; frame 0 is a GlobalMetadata, every later frame a Node
// (Chakra v0.0.4 schema, our own proto/et_def.proto). Gzip-compressed files
// are recognised by their magic bytes. JSON is read in two forms: Chakra's
// legacy feeder form ({"workload_graph": [...]}) and our own form
// ({"metadata": {...}, "nodes": [...]}, protobuf's canonical JSON of each
// message), which round-trips with protobuf exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/input_file.h"
#include "et_def.pb.h"

namespace sim {

namespace et = ChakraProtoMsg;

struct EtTrace {
  std::string path;  // where it was read from (for messages)
  et::GlobalMetadata metadata;
  std::vector<et::Node> nodes;  // in file order
};

// Reads by content: gzip or plain varint-delimited protobuf; a file whose
// first non-blank byte is '{' is read as JSON (either form).
// Throws InputError naming the file and, where known, the frame or node id:
// missing file, truncated frame, garbled protobuf, bad JSON.
EtTrace read_et(const std::string& path);
// The same from a file's bytes (`path` only names it in messages).
EtTrace parse_et(std::string data, const std::string& path);

// Streams an ET: `on_node` sees each node in file order, decoded into one
// reused message, so a large trace costs almost no allocation per node. The
// node is only valid during the call. Same formats and errors as read_et.
void read_et_nodes(const std::string& path, et::GlobalMetadata& metadata,
                   const std::function<void(const et::Node&)>& on_node);

// --- fast path: the wire format decoded by hand (et_wire.cpp) -----------------
// What the graph builder needs of a node, decoded straight from the frame's
// bytes without protobuf's generic parser. Views point into the file's buffer
// (or, from wire_node_from, into the et::Node) and live as long as it.
struct WireAttr {
  std::string_view name;
  int value_case = 0;      // AttributeProto's oneof member: its field number (0: none set)
  std::uint64_t bits = 0;  // integer members as int64/uint64 bits (signed ones sign-extended); bool_val 0/1
  std::string_view str;    // string_val
  // bool_list: bits holds the first 64 values (value i at bit i), count all of them.
  std::uint32_t count = 0;
};
struct WireNode {
  std::uint64_t id = 0;
  std::string_view name;
  std::int32_t type = 0;  // NodeType as protobuf stores it (open enum: any int32)
  std::uint64_t duration_micros = 0;
  std::vector<std::uint64_t> ctrl_deps;
  std::vector<std::uint64_t> data_deps;
  std::vector<WireAttr> attrs;  // every attribute, in file order
  std::string_view inputs_values;  // inputs.values (METADATA nodes carry process groups there)
};

// Attributes decoded recently, keyed by their raw bytes (name and value):
// consecutive nodes repeat most attributes byte for byte (is_cpu_op,
// comm_src, comm_size, ...), and comparing bytes costs less than decoding and
// checking them again. An attribute is taken from here only when every one of
// its bytes equals a remembered one's; at a fixed nesting depth the same bytes
// always decode to the same value, so the result cannot differ from decoding.
// The views it holds point into the bytes decoded: use one memo per buffer.
struct WireAttrMemo {
  static constexpr std::size_t kSets = 64;
  static constexpr std::size_t kMaxBytes = 64;  // longer attributes are always decoded
  struct Entry {
    const char* bytes = nullptr;
    std::uint32_t size = 0;
    WireAttr value;
  };
  Entry ways[kSets][2];
  std::uint8_t older[kSets] = {};  // the way to replace next
  std::size_t hits = 0, misses = 0;  // for tests and benchmarks
};

// Decodes one Node frame exactly as et::Node::ParseFromArray would accept or
// reject it (every field is checked, including the ones skipped: UTF-8 of
// strings, packed lists, unknown fields of every wire type, nesting depth), but
// keeps only the fields above. On failure returns false with `error` set and
// `error_at` the byte offset within the frame. `readable` (>= size) says how
// many bytes from `bytes` may be read ahead (never decoded): the rest of the file.
// `memo`, if given, must only ever see frames of one buffer that outlives it.
bool decode_wire_node(const char* bytes, std::size_t size, WireNode& out, std::string& error, std::size_t& error_at,
                      std::size_t readable = 0, WireAttrMemo* memo = nullptr);
// The same view of a node protobuf decoded (for the JSON forms and tests).
void wire_node_from(const et::Node& node, WireNode& out);
// read_et_nodes on the fast path: binary (and gzip) ETs are decoded by
// decode_wire_node, the GlobalMetadata frame and JSON files by protobuf.
// Malformed nodes throw InputError naming the file, frame and byte offset.
void read_et_wire_nodes(const std::string& path, et::GlobalMetadata& metadata,
                        const std::function<void(const WireNode&)>& on_node);
// The same, reading into `buffer` (kept for the next file). `frame_count`, if
// given, holds the number of frames (metadata included) before the first node
// is passed on, so the caller can size its columns once.
void read_et_wire_nodes(const std::string& path, et::GlobalMetadata& metadata,
                        const std::function<void(const WireNode&)>& on_node, FileBuffer& buffer,
                        std::size_t* frame_count);
// The same from a file's bytes (`path` only names it in messages).
void scan_et_wire_nodes(std::string data, const std::string& path, et::GlobalMetadata& metadata,
                        const std::function<void(const WireNode&)>& on_node);
// The same on bytes held elsewhere, with read_et_wire_nodes' `frame_count`.
void scan_et_wire_nodes(std::string_view data, const std::string& path, et::GlobalMetadata& metadata,
                        const std::function<void(const WireNode&)>& on_node, std::size_t* frame_count);
// attr_int_of / attr_bool_of / attr_string for a WireAttr: same members
// accepted, same errors, word for word.
std::int64_t wire_attr_int(const WireNode& node, const WireAttr& a);
bool wire_attr_bool(const WireNode& node, const WireAttr& a);
std::string_view wire_attr_string(const WireNode& node, const WireAttr& a);

// Writes varint-delimited protobuf (gzip when the path ends in ".gz"),
// atomically (temporary file + rename). Refuses to write a node or a
// GlobalMetadata that would serialize to zero bytes (Chakra's Python reader
// stops at a zero frame), so set metadata.version.
void write_et(const EtTrace& trace, const std::string& path);
// The bytes write_et writes (checked the same way).
std::string et_bytes(const EtTrace& trace, const std::string& path);
// Writes our JSON form, atomically.
void write_et_json(const EtTrace& trace, const std::string& path);

// Resolves --workload: a folder holding <prefix>.<rank>.et files (one prefix),
// or a prefix whose <prefix>.<rank>.et (or .json) files exist. Returns the
// per-rank paths indexed by rank. Throws InputError when nothing matches, when
// ranks are not 0..N-1 without gaps (naming the missing rank), or when a folder
// holds several prefixes.
std::vector<std::string> resolve_rank_files(const std::string& folder_or_prefix);
// Every regular file resolve_rank_files would take as a rank of `prefix`
// (<prefix>.<N>.et, .et.gz, .json, any N), as (rank, path) sorted, unchecked:
// gaps and two files of one rank are listed as they are.
std::vector<std::pair<int, std::string>> rank_files_of(const std::string& prefix);

// --- attributes (Node.attr) -------------------------------------------------
// An attribute of the wrong kind or range. what() names the node id;
// detail() only the attribute and the problem, for callers that name the
// file, rank and node themselves.
class AttrError : public InputError {
 public:
  AttrError(const std::string& owner, const std::string& detail) : InputError(owner + ": " + detail), detail_(detail) {}
  const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

// Producers disagree on oneof members (is_cpu_op as bool or int32, comm_size as
// int32/int64/uint64, ...): integer getters accept every integer member,
// boolean getters accept bool or any integer. A present attribute of the wrong
// kind throws InputError naming the node id and attribute.
const et::AttributeProto* find_attr(const et::Node& node, std::string_view name);
std::optional<std::int64_t> attr_int(const et::Node& node, std::string_view name);
std::optional<bool> attr_bool(const et::Node& node, std::string_view name);
std::optional<std::string> attr_string(const et::Node& node, std::string_view name);
std::optional<std::vector<bool>> attr_bool_list(const et::Node& node, std::string_view name);
// Attribute `a` of `node`, read as attr_int / attr_bool read theirs (same
// members accepted, same errors): for one pass over node.attr().
std::int64_t attr_int_of(const et::Node& node, const et::AttributeProto& a);
bool attr_bool_of(const et::Node& node, const et::AttributeProto& a);
// Same lookups on GlobalMetadata attributes.
std::optional<std::int64_t> metadata_int(const et::GlobalMetadata& md, std::string_view name);
std::optional<std::string> metadata_string(const et::GlobalMetadata& md, std::string_view name);
// An integer or a double_val/float_val attribute, as a double.
std::optional<double> metadata_number(const et::GlobalMetadata& md, std::string_view name);

// Setters used by writers (replace an existing attribute of that name).
void set_attr_int(et::Node& node, std::string_view name, std::int64_t value);
void set_attr_bool(et::Node& node, std::string_view name, bool value);
void set_attr_string(et::Node& node, std::string_view name, std::string_view value);

}  // namespace sim
