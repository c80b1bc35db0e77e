// A PyTorch host execution trace (torch.profiler.ExecutionTraceObserver):
// every operator the process ran, as a tree (ctrl_deps names the parent),
// with its inputs and outputs. Read in a compact form: tensors as
// (id, storage, elements, element size), the raw argument values kept only for
// the few operators whose arguments the importer reads (collectives, process
// group records).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sim::pytorch {

// A tensor argument: ExecutionTraceObserver writes
// [tensor_id, storage_id, offset, numel, itemsize, device].
struct TensorRef {
  std::int64_t id = 0;
  std::int64_t storage = 0;
  std::int64_t numel = 0;
  std::int64_t itemsize = 0;
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(numel < 0 ? 0 : numel) * static_cast<std::uint64_t>(itemsize < 0 ? 0 : itemsize); }
};

struct HostOp {
  std::uint64_t id = 0;
  std::uint64_t parent = 0;  // ctrl_deps: the enclosing operator (or thread / process root)
  std::string name;
  std::uint64_t rf_id = 0;   // RecordFunction id: Kineto's "Record function id"
  bool has_rf_id = false;
  std::uint64_t tid = 0;     // the trace's thread number (not the OS tid)
  std::int64_t scope = 0;    // RecordScope: 7 is a user annotation (record_function)
  std::optional<double> dur_us;  // "dur" where a trace carries one (µs)
  std::vector<TensorRef> inputs, outputs;  // every tensor, nested lists flattened, in order
  // Kept for collectives, record_param_comms and process-group records only:
  nlohmann::json input_values;  // inputs.values
  nlohmann::json input_types;   // inputs.types
  nlohmann::json output_values;
};

struct HostTrace {
  std::string path;
  std::string schema;
  std::int64_t pid = -1;
  bool known_schema = true;  // false: a version outside 1.0.2..1.1.1 that had every field used
  std::vector<HostOp> ops;   // in file order
};

// Versions this reader was written against (both ends are in the test data).
inline constexpr const char* kOldestSchema = "1.0.2-chakra.0.0.4";
inline constexpr const char* kNewestSchema = "1.1.1-chakra.0.0.4";
// True for 1.0.2-chakra.0.0.4 .. 1.1.1-chakra.0.0.4.
bool is_known_schema(const std::string& schema);

// Whether an operator's arguments are kept (input_values etc.).
bool keeps_arguments(const std::string& name);

// Reads the trace. `rank` only names it in messages. Errors (InputError) name
// the file, rank, node id and field: a node without id/name/ctrl_deps/inputs/
// outputs/attrs or with one of the wrong kind, duplicate ids, no "schema".
// A schema outside the known range is accepted when every node has the fields
// used (known_schema false: the caller warns), else the error names it.
HostTrace read_host_trace(const std::string& path, int rank);

}  // namespace sim::pytorch
