// Reading a large JSON trace (a PyTorch execution trace's "nodes", a Kineto
// trace's "traceEvents") one array element at a time, so memory stays bounded
// by the largest element rather than by the file: the file is decompressed
// (gzip or plain, told by its bytes) and parsed as it is read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace sim::pytorch {

// Reads `path` (a JSON object; .json or gzip-compressed), calling `on_element`
// for each element of the top-level array `array_key`, in order. The object's
// other members are returned (the array itself is not). Elements nested
// deeper than `max_depth` are refused. Throws InputError naming the file and
// the byte offset for a missing or unreadable file, corrupt gzip, bad JSON,
// a top level that is not an object, or `array_key` that is not an array.
nlohmann::json stream_json_array(const std::string& path, const std::string& array_key,
                                 const std::function<void(nlohmann::json&)>& on_element, int max_depth = 64);

// The first `max_bytes` bytes of the file, decompressed when gzip (for
// telling a host trace from a device trace without reading either whole).
std::string peek_json_text(const std::string& path, std::size_t max_bytes = 4096);

}  // namespace sim::pytorch
