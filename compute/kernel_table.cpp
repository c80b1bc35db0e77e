#include "compute/kernel_table.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "core/error.h"
#include "core/input_file.h"

namespace sim {

const char* kernel_csv_format_name(KernelCsvFormat format) {
  switch (format) {
    case KernelCsvFormat::kGemm: return "gemm";
    case KernelCsvFormat::kAttention: return "attention";
    default: return "membound";
  }
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

struct Columns {
  std::vector<const char*> required;
  std::vector<const char*> optional;
};

const Columns& columns_of(KernelCsvFormat f) {
  static const Columns gemm{{"op", "dtype", "m", "n", "k", "time_us"}, {"tflops", "GBps"}};
  static const Columns attention{{"op", "batch", "heads", "seq", "head_dim", "fwd_us", "fwd_bwd_us"},
                                 {"dtype", "fwd_tflops", "fwd_bwd_tflops_approx"}};
  static const Columns membound{{"op", "dtype", "elements", "time_us"}, {"GBps"}};
  switch (f) {
    case KernelCsvFormat::kGemm: return gemm;
    case KernelCsvFormat::kAttention: return attention;
    default: return membound;
  }
}

// Columns `sim compute time` appends: read past, so its output reads again.
bool is_prediction_column(std::string_view name) {
  return name == "predicted_us" || name == "predicted_fwd_bwd_us";
}

}  // namespace

KernelCsv parse_kernel_csv(const std::string& file_text, const std::string& path) {
  // A leading UTF-8 byte order mark (spreadsheet programs write one) is not
  // part of the first column's name.
  std::string_view text = file_text;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  KernelCsv csv;
  csv.path = path;
  std::vector<std::pair<std::size_t, std::string_view>> lines;  // (line number, text)
  {
    std::size_t start = 0, number = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      ++number;
      std::string_view line(text.data() + start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (!trim(line).empty()) lines.emplace_back(number, line);
      start = end + 1;
    }
  }
  if (lines.empty()) throw InputError(path + ": empty kernel table (expected a header line)");
  const auto fail = [&](std::size_t line, std::size_t column, std::string_view name, const std::string& what) {
    std::string at = path + ":" + std::to_string(line);
    if (column > 0) at += ": column " + std::to_string(column) + " (" + std::string(name) + ")";
    throw InputError(at + ": " + what);
  };
  // The header tells the format.
  const std::size_t header_line = lines.front().first;
  const std::string_view header = lines.front().second;
  csv.header = std::string(header);
  const std::vector<std::string_view> names = split(header);
  std::map<std::string_view, std::size_t> index;  // name -> field index
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) fail(header_line, i + 1, "", "empty column name");
    if (!index.emplace(names[i], i).second) fail(header_line, i + 1, names[i], "column named twice");
  }
  if (index.count("fwd_us")) csv.format = KernelCsvFormat::kAttention;
  else if (index.count("m") || index.count("n") || index.count("k")) csv.format = KernelCsvFormat::kGemm;
  else if (index.count("elements")) csv.format = KernelCsvFormat::kMembound;
  else {
    fail(header_line, 0, "", "the header names no kernel table format: expected gemm (op,dtype,m,n,k,time_us), "
                             "attention (op,batch,heads,seq,head_dim,fwd_us,fwd_bwd_us) or membound "
                             "(op,dtype,elements,time_us) columns");
  }
  const Columns& cols = columns_of(csv.format);
  const std::string format = kernel_csv_format_name(csv.format);
  for (std::size_t i = 0; i < names.size(); ++i) {
    bool known = is_prediction_column(names[i]);
    for (const char* c : cols.required) known = known || names[i] == c;
    for (const char* c : cols.optional) known = known || names[i] == c;
    if (!known) fail(header_line, i + 1, names[i], "unknown column for a " + format + " table");
  }
  for (const char* c : cols.required) {
    if (!index.count(c)) fail(header_line, 0, "", "a " + format + " table needs a column '" + c + "'");
  }

  for (std::size_t r = 1; r < lines.size(); ++r) {
    const std::size_t number = lines[r].first;
    const std::string_view line = lines[r].second;
    const std::vector<std::string_view> fields = split(line);
    if (fields.size() != names.size()) {
      fail(number, 0, "", std::to_string(fields.size()) + " fields; the header has " + std::to_string(names.size()));
    }
    const auto field = [&](const char* name) { return fields[index.at(name)]; };
    const auto column = [&](const char* name) { return index.at(name) + 1; };
    const auto dim = [&](const char* name) {
      const std::string_view f = field(name);
      std::int64_t v = 0;
      const auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      if (ec != std::errc() || ptr != f.data() + f.size() || v < 1) {
        fail(number, column(name), name, "expected a positive integer, got '" + std::string(f) + "'");
      }
      return v;
    };
    const auto micros = [&](const char* name) {
      const std::string_view f = field(name);
      double v = 0;
      const auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      // In seconds it must stay a normal number: 1e-320 us would become 0 s.
      if (ec != std::errc() || ptr != f.data() + f.size() || !std::isfinite(v) || !std::isnormal(v * 1e-6) ||
          !(v > 0)) {
        fail(number, column(name), name, "expected a positive time in microseconds, got '" + std::string(f) + "'");
      }
      // Simulated time counts whole picoseconds: a kernel that rounds to 0 ps
      // (1e-300 us) would run in no time at all.
      if (v * 1e6 < 0.5) {
        fail(number, column(name), name,
             "'" + std::string(f) + "' us rounds to 0 ps, below the simulator's resolution of 1 ps (is the unit us?)");
      }
      return v;
    };
    const auto dtype = [&](KernelShape& s) {
      if (!index.count("dtype")) return;  // attention tables without it: bf16
      s.dtype = std::string(field("dtype"));
      if (dtype_bytes(s.dtype) == 0) {
        fail(number, column("dtype"), "dtype", "unknown dtype '" + s.dtype + "' (expected bf16, fp16, fp8, fp32 or tf32)");
      }
    };
    KernelCsvRow row;
    row.line = number;
    row.text = std::string(line);
    const auto sample = [&](const KernelShape& s, double us) {
      row.samples.push_back(KernelSample{s, us * 1e-6, path, number});
    };
    KernelShape s;
    const std::string op(field("op"));
    switch (csv.format) {
      case KernelCsvFormat::kGemm: {
        if (op != "gemm") fail(number, column("op"), "op", "expected 'gemm', got '" + op + "'");
        s.kind = KernelKind::kGemm;
        dtype(s);
        s.m = dim("m");
        s.n = dim("n");
        s.k = dim("k");
        sample(s, micros("time_us"));
        break;
      }
      case KernelCsvFormat::kAttention: {
        if (op != "sdpa_causal" && op != "sdpa") {
          fail(number, column("op"), "op", "expected 'sdpa_causal' or 'sdpa', got '" + op + "'");
        }
        s.kind = KernelKind::kAttention;
        s.causal = op == "sdpa_causal";
        dtype(s);
        s.batch = dim("batch");
        s.heads = dim("heads");
        s.seq = dim("seq");
        s.head_dim = dim("head_dim");
        const double fwd = micros("fwd_us");
        const double both = micros("fwd_bwd_us");
        if (!(both > fwd) || !std::isnormal((both - fwd) * 1e-6) || (both - fwd) * 1e6 < 0.5) {
          fail(number, column("fwd_bwd_us"), "fwd_bwd_us",
               "forward + backward (" + std::string(field("fwd_bwd_us")) + " us) must be longer than the forward (" +
                   std::string(field("fwd_us")) + " us) by at least 1 ps");
        }
        sample(s, fwd);
        s.backward = true;
        sample(s, both - fwd);
        break;
      }
      case KernelCsvFormat::kMembound: {
        if (op.empty()) fail(number, column("op"), "op", "empty op name");
        s.kind = KernelKind::kMembound;
        s.op = op;
        dtype(s);
        s.elements = dim("elements");
        sample(s, micros("time_us"));
        break;
      }
    }
    csv.rows.push_back(std::move(row));
  }
  return csv;
}

namespace {

struct BuiltinTable {
  const char* name;  // "<gpu>/<file>.csv"
  const char* text;
};
// configs/kernels/<gpu>/*.csv, compiled in (compute/CMakeLists.txt).
constexpr BuiltinTable kBuiltinTables[] = {
#include "builtin_kernel_tables.inc"
};
constexpr std::string_view kBuiltinPrefix = "builtin:";

const BuiltinTable* builtin_table(std::string_view name) {
  for (const BuiltinTable& t : kBuiltinTables) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

}  // namespace

bool is_builtin_kernel_table(const std::string& source) { return source.rfind(kBuiltinPrefix, 0) == 0; }

std::vector<std::string> builtin_kernel_tables() {
  std::vector<std::string> gpus;
  for (const BuiltinTable& t : kBuiltinTables) {
    const std::string_view name = t.name;
    const std::string gpu(name.substr(0, name.find('/')));
    if (gpus.empty() || gpus.back() != gpu) gpus.push_back(gpu);
  }
  return gpus;
}

KernelCsv read_kernel_csv(const std::string& path) {
  if (is_builtin_kernel_table(path)) {
    const BuiltinTable* t = builtin_table(std::string_view(path).substr(kBuiltinPrefix.size()));
    if (!t) throw InputError(path + ": no such built-in kernel table");
    return parse_kernel_csv(t->text, path);
  }
  return parse_kernel_csv(read_input_file(path, "kernel table"), path);
}

std::vector<std::string> kernel_table_files(const std::string& source) {
  namespace fs = std::filesystem;
  if (is_builtin_kernel_table(source)) {
    const std::string gpu = source.substr(kBuiltinPrefix.size());
    // One file of a shipped folder (builtin:h100/gemm.csv), to combine with
    // another folder's (an attention table of another kernel).
    if (gpu.find('/') != std::string::npos) {
      if (!builtin_table(gpu)) {
        throw InputError(source + ": no such built-in kernel table file (a folder's gemm.csv, attention.csv or membound.csv)");
      }
      return {source};
    }
    std::vector<std::string> files;
    for (const char* name : {"gemm.csv", "attention.csv", "membound.csv"}) {
      if (builtin_table(gpu + "/" + name)) files.push_back(source + "/" + name);
    }
    if (files.empty()) {
      std::string known;
      for (const std::string& g : builtin_kernel_tables()) known += (known.empty() ? "" : ", ") + std::string(kBuiltinPrefix) + g;
      throw InputError(source + ": no such built-in kernel table (built in: " + known + ")");
    }
    return files;
  }
  std::error_code ec;
  if (!fs::exists(source, ec)) throw InputError(source + ": no such kernel table file or folder");
  if (!fs::is_directory(source, ec)) {
    if (!fs::is_regular_file(source, ec)) {
      throw InputError(source + ": a kernel table is a CSV file or a folder of them; this is neither (a device, a FIFO?)");
    }
    return {source};
  }
  std::vector<std::string> files;
  for (const char* name : {"gemm.csv", "attention.csv", "membound.csv"}) {
    const fs::path p = fs::path(source) / name;
    if (fs::exists(p, ec)) files.push_back(p.string());
  }
  if (files.empty()) {
    throw InputError(source + ": a kernel table folder must hold gemm.csv, attention.csv or membound.csv; it has none");
  }
  return files;
}

std::vector<KernelSample> read_kernel_samples(const std::vector<std::string>& files) {
  std::vector<KernelSample> samples;
  for (const std::string& f : files) {
    KernelCsv csv = read_kernel_csv(f);
    for (KernelCsvRow& row : csv.rows) {
      for (KernelSample& s : row.samples) samples.push_back(std::move(s));
    }
  }
  return samples;
}

}  // namespace sim
