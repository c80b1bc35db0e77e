// Tables of measured kernel times: CSV files in the format measure.sh writes
// (see docs/compute.md; ../shared/testdata/h100-kernels/ is one such set).
//
//   gemm       op,dtype,m,n,k,time_us[,tflops,GBps]                    op: gemm
//   attention  op,batch,heads,seq,head_dim,fwd_us,fwd_bwd_us[,dtype,fwd_tflops,fwd_bwd_tflops_approx]
//              op: sdpa_causal | sdpa; dtype bf16 when the column is absent
//   membound   op,dtype,elements,time_us[,GBps]                        op: any name
//
// The format is told by the header; columns may come in any order; derived
// columns (tflops, GBps, ...) and our own predicted_us / predicted_fwd_bwd_us
// (`sim compute time` output) are read past. Any other column, a missing one,
// a row with the wrong number of fields, a dimension that is not a positive
// integer, a time that is not a positive finite number or one that rounds to
// 0 ps (the simulator's resolution) is an InputError naming the file, line,
// column number and column name.
//
// An attention row holds two samples: the forward pass (fwd_us) and the
// backward pass (fwd_bwd_us - fwd_us, which must be positive).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "workload/kernel_shape.h"

namespace sim {

enum class KernelCsvFormat { kGemm, kAttention, kMembound };
const char* kernel_csv_format_name(KernelCsvFormat format);

// One measured time of one kernel shape.
struct KernelSample {
  KernelShape shape;
  double seconds = 0;
  std::string file;
  std::size_t line = 0;
};

struct KernelCsvRow {
  std::size_t line = 0;  // 1-based line in the file
  std::string text;      // the line as written (without its end of line)
  // gemm, membound: one sample; attention: forward, then backward.
  std::vector<KernelSample> samples;
};

struct KernelCsv {
  std::string path;
  KernelCsvFormat format = KernelCsvFormat::kGemm;
  std::string header;  // the header line as written
  std::vector<KernelCsvRow> rows;
};

// Parses CSV text (a leading UTF-8 byte order mark is skipped); `path` names
// it in messages.
KernelCsv parse_kernel_csv(const std::string& text, const std::string& path);
// Reads and parses a file (InputError when unreadable).
KernelCsv read_kernel_csv(const std::string& path);

// Every sample of the tables `source` names: a CSV file, or a folder whose
// gemm.csv, attention.csv and membound.csv are read (those present; at least
// one must be). Other files in a folder (gpu.csv, notes) are not read.
//
// `builtin:<gpu>` names the tables shipped in configs/kernels/<gpu>/, compiled
// into `sim` (builtin:h100); its files are named builtin:<gpu>/gemm.csv, ...,
// and such a name is one file of it.
std::vector<std::string> kernel_table_files(const std::string& source);
bool is_builtin_kernel_table(const std::string& source);
std::vector<std::string> builtin_kernel_tables();  // the <gpu> names, sorted
std::vector<KernelSample> read_kernel_samples(const std::vector<std::string>& files);

}  // namespace sim
