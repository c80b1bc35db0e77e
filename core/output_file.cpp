#include "core/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <streambuf>
#include <vector>

#include "core/error.h"
#include "core/temp_file_registry.h"

namespace sim {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw InputError(std::string("cannot write '").append(path).append("': ").append(why));
}

// Writes all of `data`, retrying on EINTR and short writes; returns 0 or errno.
int write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

// A plain buffer in front of a file descriptor: std::ofstream cannot be
// opened on a descriptor, and the temporary file must be created with
// O_EXCL and the mode set with fchmod.
class FdBuffer final : public std::streambuf {
 public:
  explicit FdBuffer(int fd) : fd_(fd), buffer_(1 << 18) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  int error() const { return error_; }
  bool flush_all() {
    if (error_ == 0) error_ = write_all(fd_, pbase(), static_cast<std::size_t>(pptr() - pbase()));
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return error_ == 0;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!flush_all()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n > epptr() - pptr()) {
      if (!flush_all()) return 0;
      if (n >= static_cast<std::streamsize>(buffer_.size())) {  // large block: straight through
        error_ = write_all(fd_, s, static_cast<std::size_t>(n));
        return error_ == 0 ? n : 0;
      }
    }
    std::memcpy(pptr(), s, static_cast<std::size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  int sync() override { return flush_all() ? 0 : -1; }

 private:
  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

std::string parent_folder(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The descriptor N when `p` is /dev/fd/N, /proc/self/fd/N or /proc/<our pid>/fd/N
// (where /dev/stdout and /dev/stderr lead), else -1.
int descriptor_alias(const std::string& p) {
  for (const std::string& prefix :
       {std::string("/dev/fd/"), std::string("/proc/self/fd/"), "/proc/" + std::to_string(::getpid()) + "/fd/"}) {
    if (p.size() <= prefix.size() || p.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = p.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return -1;
    return std::stoi(digits);
  }
  return -1;
}

// Follows symlinks (relative targets resolve against the link's folder) to
// the path that will really be written; `st` gets its status, `exists`
// whether it exists. A chain through one of our descriptors (/dev/stdout)
// stops there, `fd` set: that descriptor is written, whatever it points at,
// so a shell's redirection (even to a file, even appending) is honoured.
std::string final_target(const std::string& path, struct stat& st, bool& exists, int& fd) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    if ((fd = descriptor_alias(p)) >= 0) return p;
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno != ENOENT) fail(path, errno_text(errno));
      exists = false;
      return p;
    }
    if (!S_ISLNK(st.st_mode)) {
      exists = true;
      return p;
    }
    std::vector<char> target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4095) + 1);
    const ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
    if (n < 0) fail(path, "cannot read symlink '" + p + "': " + errno_text(errno));
    const std::string t(target.data(), static_cast<std::size_t>(n));
    p = t.front() == '/' ? t : parent_folder(p) + "/" + t;
  }
  fail(path, "too many levels of symbolic links");
}

std::atomic<unsigned> g_temp_counter{0};

}  // namespace

struct OutputFile::State {
  int fd = -1;
  bool direct = false;   // device, FIFO or stdout: no temporary file
  bool is_stdout = false;
  bool done = false;
  std::string target;    // the regular file the rename replaces
  std::string temp;
  int slot = -1;
  std::unique_ptr<FdBuffer> buffer;
  std::unique_ptr<std::ostream> stream;

  void discard() {
    if (fd >= 0 && !is_stdout) ::close(fd);
    fd = -1;
    if (!temp.empty()) ::unlink(temp.c_str());
    unregister_temp_file(slot);
    slot = -1;
    temp.clear();
  }
};

namespace {

// A device or FIFO: opened as it is (a FIFO blocks here until a reader opens it).
void open_direct(const std::string& path, OutputFile::State& s) {
  s.fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (s.fd < 0) fail(path, errno_text(errno));
  s.direct = true;
}

// An exclusive temporary file next to s.target, registered before it exists
// so that a signal arriving just after its creation still finds it.
void create_temp(const std::string& path, OutputFile::State& s) {
  const std::string folder = parent_folder(s.target);
  for (int attempt = 0;; ++attempt) {
    s.temp = folder + "/." + base_name(s.target) + ".tmp-" + std::to_string(::getpid()) + "-" +
             std::to_string(g_temp_counter.fetch_add(1));
    s.slot = register_temp_file(s.temp);
    s.fd = ::open(s.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (s.fd >= 0) return;
    const int err = errno;
    unregister_temp_file(s.slot);
    s.slot = -1;
    s.temp.clear();
    if (err == EEXIST && attempt < 100) continue;
    if (err == ENOENT) fail(path, "folder '" + folder + "' does not exist");
    fail(path, "cannot create a file in folder '" + folder + "' (" + errno_text(err) +
                   "); sim writes a temporary file there and renames it over the output");
  }
}

// The replaced file's mode and owner go to its successor. Only root may give
// a file to someone else: an unprivileged user's copy becomes theirs (as
// with any editor that saves by renaming), keeping the group if it can.
void keep_mode_and_owner(int fd, const struct stat& st) {
  ::fchmod(fd, st.st_mode & 07777);
  if (::fchown(fd, st.st_uid, st.st_gid) != 0) (void)::fchown(fd, static_cast<uid_t>(-1), st.st_gid);
}

}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path), state_(std::make_unique<State>()) {
  State& s = *state_;
  if (path.empty()) fail(path, "empty path");
  if (path == "-") {
    std::cout.flush();  // what the program printed before comes first
    s.fd = STDOUT_FILENO;
    s.direct = s.is_stdout = true;
  } else {
    struct stat st {};
    bool exists = false;
    int alias = -1;
    s.target = final_target(path, st, exists, alias);
    if (alias >= 0) {
      std::cout.flush();
      s.fd = ::dup(alias);
      if (s.fd < 0) fail(path, "descriptor " + std::to_string(alias) + ": " + errno_text(errno));
      s.direct = true;
    } else if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
      open_direct(path, s);
    } else if (exists && S_ISDIR(st.st_mode)) {
      fail(path, "it is a folder; give a file name");
    } else if (exists && !S_ISREG(st.st_mode)) {
      fail(path, S_ISBLK(st.st_mode) ? "it is a block device; sim writes only to files, character devices and FIFOs"
                                     : "it is a socket; sim writes only to files, character devices and FIFOs");
    } else {
      create_temp(path, s);
      if (exists) keep_mode_and_owner(s.fd, st);
    }
  }
  s.buffer = std::make_unique<FdBuffer>(s.fd);
  s.stream = std::make_unique<std::ostream>(s.buffer.get());
}

OutputFile::~OutputFile() {
  if (state_ && !state_->done) state_->discard();
}

std::ostream& OutputFile::stream() { return *state_->stream; }

void OutputFile::write(std::string_view bytes) { state_->stream->write(bytes.data(), static_cast<std::streamsize>(bytes.size())); }

bool OutputFile::direct() const { return state_->direct; }

void OutputFile::commit() {
  State& s = *state_;
  if (s.done) return;
  s.buffer->flush_all();
  int err = s.buffer->error();
  if (err == 0 && !*s.stream) err = EIO;
  if (!s.is_stdout && s.fd >= 0) {
    if (::close(s.fd) != 0 && err == 0) err = errno;
    s.fd = -1;
  }
  if (err == 0 && !s.temp.empty() && ::rename(s.temp.c_str(), s.target.c_str()) != 0) err = errno;
  if (err != 0) {
    s.discard();
    s.done = true;
    fail(path_, errno_text(err));
  }
  unregister_temp_file(s.slot);
  s.slot = -1;
  s.temp.clear();
  s.done = true;
}

void write_output_file(const std::string& path, std::string_view content) {
  OutputFile out(path);
  out.write(content);
  out.commit();
}

}  // namespace sim
