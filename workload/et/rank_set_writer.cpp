#include "workload/et/rank_set_writer.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/checked_count.h"
#include "core/error.h"
#include "core/output_file.h"
#include "core/rank_ranges.h"

namespace sim {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& option, const std::string& prefix, const std::string& why) {
  throw InputError(option + " '" + prefix + "': " + why +
                   "; a prefix is a path and the start of a file name (" + option +
                   " wl/job writes wl/job.0.et, wl/job.1.et, ...)");
}

// What exists at `path`, for the message ("a folder", "a file", ...).
std::string kind_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "a dangling symbolic link";
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISREG(st.st_mode)) return "a file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  return "a socket";
}

}  // namespace

void prepare_rank_prefix(const std::string& prefix, const std::string& option) {
  if (prefix.empty()) refuse(option, prefix, "empty");
  if (prefix == "-") refuse(option, prefix, "rank files cannot go to standard output");
  if (prefix.back() == '/') refuse(option, prefix, "ends in '/', so the files would be hidden ('.0.et')");
  const std::string base = fs::path(prefix).filename().string();
  if (base == "." || base == "..") refuse(option, prefix, "names a folder");
  struct stat st {};
  if (::lstat(prefix.c_str(), &st) == 0) {
    const std::string kind = kind_of(prefix);
    refuse(option, prefix,
           "names " + kind + (kind == "a folder" ? "" : ", which --workload " + prefix + " would read instead"));
  }
  const fs::path parent = fs::path(prefix).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw InputError(option + " '" + prefix + "': cannot create folder '" + parent.string() + "': " + ec.message());
}

RankSetWriter::RankSetWriter(std::string prefix, std::uint32_t ranks, const std::string& option)
    : prefix_(std::move(prefix)), option_(option), ranks_(ranks), written_(ranks, 0) {
  prepare_rank_prefix(prefix_, option);
  if (ranks_ == 0) throw InputError(option + " '" + prefix_ + "': no ranks to write");
  for (auto& [rank, file] : rank_files_of(prefix_)) {
    if (rank < 0 || static_cast<std::uint32_t>(rank) >= ranks_ || file != path(static_cast<std::uint32_t>(rank)))
      stale_.emplace_back(rank, std::move(file));
  }
}

RankSetWriter::~RankSetWriter() {
  if (!committed_) discard();
}

void RankSetWriter::clear_earlier() {
  std::call_once(cleared_, [this] {
    started_ = true;
    // The earlier rank 0 goes first: until the new one is in place no set of
    // this prefix can be run.
    std::vector<std::string> doomed{path(0)};
    for (const auto& s : stale_) doomed.push_back(s.second);
    for (const std::string& f : doomed) {
      if (::unlink(f.c_str()) != 0 && errno != ENOENT) {
        throw InputError("cannot remove '" + f + "', a rank file of an earlier write of " + prefix_ + ": " +
                         std::strerror(errno));
      }
    }
  });
}

void RankSetWriter::check_space(std::uint64_t rank_bytes) {
  std::call_once(space_checked_, [&] {
    const fs::path parent = fs::path(prefix_).parent_path();
    struct statvfs fsinfo {};
    if (::statvfs(parent.empty() ? "." : parent.c_str(), &fsinfo) != 0) return;  // unknown: the writes will tell
    const std::uint64_t free = static_cast<std::uint64_t>(fsinfo.f_bavail) * fsinfo.f_frsize;
    const CheckedCount product = CheckedCount(rank_bytes) * ranks_;
    const std::uint64_t need = product.fits() ? product.value() : UINT64_MAX;
    if (need <= free) return;
    char need_text[64], free_text[64];
    std::snprintf(need_text, sizeof need_text, "%.1f GiB", static_cast<double>(need) / (1ull << 30));
    std::snprintf(free_text, sizeof free_text, "%.1f GiB", static_cast<double>(free) / (1ull << 30));
    throw InputError(option_ + " '" + prefix_ + "': " + std::to_string(ranks_) + " rank files of about " +
                     std::to_string(rank_bytes) + " B (the first one written) need about " + need_text +
                     ", but the file system of '" + (parent.empty() ? std::string(".") : parent.string()) +
                     "' has " + free_text + " free; write fewer ranks or smaller ones, or elsewhere");
  });
}

std::uint64_t RankSetWriter::write(std::uint32_t rank, const EtTrace& trace) {
  if (rank >= ranks_) throw InputError(path(rank) + ": rank outside the " + std::to_string(ranks_) + " ranks written");
  const std::string file = path(rank);
  const std::string bytes = et_bytes(trace, file);
  // Before any file is touched (an earlier set stays whole): a set that
  // cannot fit on the disk is refused now, not after minutes of writing.
  check_space(bytes.size());
  clear_earlier();
  if (rank == 0) {
    rank0_ = std::make_unique<OutputFile>(file);
    rank0_->write(bytes);
  } else {
    write_output_file(file, bytes);
  }
  written_[rank] = 1;
  bytes_ += bytes.size();
  return bytes.size();
}

void RankSetWriter::commit() {
  for (std::uint32_t r = 0; r < ranks_; ++r) {
    if (!written_[r]) throw InputError(path(r) + ": rank " + std::to_string(r) + " was never written");
  }
  rank0_->commit();
  committed_ = true;
}

void RankSetWriter::discard() noexcept {
  rank0_.reset();  // its temporary file goes with it
  if (!started_.load()) return;  // nothing touched: an earlier set stays as it was
  // Writing had begun: what is left of the prefix is a broken set; remove it all.
  try {
    for (const auto& f : rank_files_of(prefix_)) ::unlink(f.second.c_str());
  } catch (...) {
  }
}

std::string RankSetWriter::removed_note() const {
  if (stale_.empty()) return "";
  std::vector<std::int64_t> ranks;
  for (const auto& s : stale_) ranks.push_back(s.first);
  return "; removed " + std::to_string(stale_.size()) + " rank file" + (stale_.size() == 1 ? "" : "s") +
         " of an earlier write of " + prefix_ + " (rank" + (stale_.size() == 1 ? " " : "s ") + rank_ranges(ranks) + ")";
}

}  // namespace sim
