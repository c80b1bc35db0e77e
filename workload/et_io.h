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
#include <vector>

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

// Streams an ET: `on_node` sees each node in file order, decoded into one
// reused message, so a large trace costs almost no allocation per node. The
// node is only valid during the call. Same formats and errors as read_et.
void read_et_nodes(const std::string& path, et::GlobalMetadata& metadata,
                   const std::function<void(const et::Node&)>& on_node);

// Writes varint-delimited protobuf (gzip when the path ends in ".gz"),
// atomically (temporary file + rename). Refuses to write a node or a
// GlobalMetadata that would serialize to zero bytes (Chakra's Python reader
// stops at a zero frame), so set metadata.version.
void write_et(const EtTrace& trace, const std::string& path);
// Writes our JSON form, atomically.
void write_et_json(const EtTrace& trace, const std::string& path);

// Resolves --workload: a folder holding <prefix>.<rank>.et files (one prefix),
// or a prefix whose <prefix>.<rank>.et (or .json) files exist. Returns the
// per-rank paths indexed by rank. Throws InputError when nothing matches, when
// ranks are not 0..N-1 without gaps (naming the missing rank), or when a folder
// holds several prefixes.
std::vector<std::string> resolve_rank_files(const std::string& folder_or_prefix);

// --- attributes (Node.attr) -------------------------------------------------
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

// Setters used by writers (replace an existing attribute of that name).
void set_attr_int(et::Node& node, std::string_view name, std::int64_t value);
void set_attr_bool(et::Node& node, std::string_view name, bool value);
void set_attr_string(et::Node& node, std::string_view name, std::string_view value);

}  // namespace sim
