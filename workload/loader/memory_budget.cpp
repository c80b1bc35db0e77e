#include "workload/loader/memory_budget.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace sim {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "VmSize:  1234 kB" from /proc/self/status: the address space RLIMIT_AS counts.
std::uint64_t address_space_in_use() {
  const std::string status = slurp("/proc/self/status");
  const auto at = status.find("VmSize:");
  if (at == std::string::npos) return 0;
  return std::strtoull(status.c_str() + at + 7, nullptr, 10) * 1024;
}

// This process's cgroup v2 folder ("0::/user.slice/x" in /proc/self/cgroup).
std::string cgroup_dir() {
  const std::string text = slurp("/proc/self/cgroup");
  const auto at = text.find("0::");
  if (at == std::string::npos) return {};
  std::string rel = text.substr(at + 3);
  rel = rel.substr(0, rel.find('\n'));
  return "/sys/fs/cgroup" + (rel == "/" ? std::string() : rel);
}

std::string mib(std::uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

struct TraceFile {
  std::uint64_t disk = 0;      // size on disk
  std::uint64_t inflated = 0;  // bytes held while decoding
  bool json = false;
};

TraceFile inspect(const std::string& path) {
  // Plain syscalls (open, fstat, one or two preads): this runs once per trace
  // before loading, and a stream's buffering doubled the cost of opening
  // thousands of small traces (benchmark (b): 4,096 of 76 B).
  TraceFile f;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return f;  // the loader names the file when it cannot read it
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return f;
  }
  f.disk = static_cast<std::uint64_t>(st.st_size);
  f.inflated = f.disk;
  unsigned char head[2] = {0, 0};
  if (::pread(fd, head, 2, 0) == 2 && head[0] == 0x1f && head[1] == 0x8b && f.disk >= 18) {
    // gzip keeps the inflated size modulo 2^32 in its last 4 bytes (RFC 1952).
    unsigned char tail[4];
    if (::pread(fd, tail, 4, static_cast<off_t>(f.disk - 4)) == 4) {
      const std::uint64_t isize = tail[0] | tail[1] << 8 | tail[2] << 16 | static_cast<std::uint64_t>(tail[3]) << 24;
      f.inflated = std::max(isize, f.disk);
    }
  }
  ::close(fd);
  f.json = head[0] == '{' || head[0] == '[';
  return f;
}

}  // namespace

std::uint64_t parse_meminfo_available(const std::string& meminfo) {
  const auto at = meminfo.find("MemAvailable:");
  if (at == std::string::npos) return UINT64_MAX;
  return std::strtoull(meminfo.c_str() + at + 13, nullptr, 10) * 1024;
}

std::uint64_t parse_cgroup_limit(const std::string& text) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return UINT64_MAX;  // "max"
  return std::strtoull(text.c_str(), nullptr, 10);
}

MemoryAvailable available_memory() {
  MemoryAvailable best;
  const auto consider = [&](std::uint64_t bytes, const char* source) {
    if (bytes < best.bytes) best = MemoryAvailable{bytes, source};
  };
  consider(parse_meminfo_available(slurp("/proc/meminfo")), "MemAvailable in /proc/meminfo");
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t used = address_space_in_use();
    consider(as.rlim_cur > used ? as.rlim_cur - used : 0, "RLIMIT_AS (ulimit -v) minus the address space in use");
  }
  if (const std::string dir = cgroup_dir(); !dir.empty()) {
    const std::uint64_t limit = parse_cgroup_limit(slurp(dir + "/memory.max"));
    if (limit != UINT64_MAX) {
      const std::uint64_t used = parse_cgroup_limit(slurp(dir + "/memory.current"));
      consider(used != UINT64_MAX && limit > used ? limit - used : 0, "cgroup memory.max minus memory.current");
    }
  }
  return best;
}

std::uint64_t estimate_load_bytes(const std::vector<std::string>& files) {
  double graphs = 0;
  std::uint64_t largest = 0;
  for (const std::string& path : files) {
    const TraceFile f = inspect(path);
    // JSON text is far larger than the graph it describes; count a tenth of the binary ratio.
    graphs += static_cast<double>(f.inflated) * kGraphBytesPerTraceByte * (f.json ? 0.1 : 1.0);
    largest = std::max(largest, f.inflated);
  }
  return largest + static_cast<std::uint64_t>(graphs);
}

void check_memory_for_load(const std::vector<std::string>& files, const std::string& what,
                           std::vector<std::int64_t>* sizes) {
  if (sizes) sizes->assign(files.size(), -1);
  const MemoryAvailable avail = available_memory();
  if (avail.bytes == UINT64_MAX) return;
  // A bound from the sizes alone first (one stat per trace): each trace as
  // if it were gzip at deflate's largest ratio (about 1032:1). When even that
  // fits, the estimate below cannot refuse, and opening every trace to read
  // its header (twice the system calls of loading 4,096 small traces) is
  // skipped.
  {
    constexpr double kMaxInflation = 1032;
    double bound = 0, largest = 0;
    bool known = true;
    for (std::size_t i = 0; i < files.size(); ++i) {
      struct stat st {};
      if (::stat(files[i].c_str(), &st) != 0) {
        known = false;  // the loader names it
        break;
      }
      if (sizes && S_ISREG(st.st_mode)) (*sizes)[i] = st.st_size;
      const double inflated = static_cast<double>(st.st_size) * kMaxInflation;
      bound += inflated * kGraphBytesPerTraceByte;
      largest = std::max(largest, inflated);
    }
    if (known && largest + bound <= static_cast<double>(avail.bytes)) return;
  }
  const std::uint64_t need = estimate_load_bytes(files);
  if (need <= avail.bytes) return;
  char per_byte[32];
  std::snprintf(per_byte, sizeof per_byte, "%g", kGraphBytesPerTraceByte);
  throw InputError(what + ": the workload is too large for the memory available: loading its " +
                   std::to_string(files.size()) + " trace(s) needs at least " + mib(need) + " (" +
                   std::to_string(need) + " B: the largest trace read whole plus " +
                   per_byte + " B of graph per trace byte) but only " +
                   mib(avail.bytes) + " (" + std::to_string(avail.bytes) + " B) is available (" + avail.source +
                   "); run it on a machine with more memory or split the workload");
}

}  // namespace sim
