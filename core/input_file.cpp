#include "core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace sim {

namespace {
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

[[noreturn]] void refuse(const std::string& path, const std::string& what, const struct stat& st, std::uint64_t max_bytes) {
  if (!S_ISREG(st.st_mode)) {
    throw InputError(what + " '" + path + "' is not a regular file (it is " + kind_of(st.st_mode) + ")");
  }
  throw InputError(what + " '" + path + "' is " + std::to_string(st.st_size) + " B, more than the limit of " +
                   std::to_string(max_bytes) + " B");
}
}  // namespace

std::string_view FileBuffer::read(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  // O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st {};
  if (fd < 0) {
    const int err = errno;
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) refuse(path, what, st, max_bytes);  // a socket
    throw InputError("cannot open " + what + " '" + path + "': " + std::strerror(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) throw InputError("cannot open " + what + " '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > max_bytes) refuse(path, what, st, max_bytes);
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > capacity_) {
    bytes_.reset();  // before allocating the larger one: never both at once
    bytes_.reset(new char[size]);
    capacity_ = size;
  }
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, bytes_.get() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError("cannot read " + what + " '" + path + "'");
    if (n == 0) break;  // the file shrank since fstat
    got += static_cast<std::size_t>(n);
  }
  return {bytes_.get(), got};
}

std::string_view FileBuffer::read_sized(const std::string& path, const std::string& what, std::uint64_t max_bytes,
                                        std::uint64_t size) {
  if (size > max_bytes || size >= (std::uint64_t{1} << 30)) return read(path, what, max_bytes);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return read(path, what, max_bytes);  // its message
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // One byte more than the size: a read that returns the size exactly has
  // met the end of the file (a regular file's read is short only there).
  const auto want = static_cast<std::size_t>(size) + 1;
  if (want > capacity_) {
    bytes_.reset();
    bytes_.reset(new char[want]);
    capacity_ = want;
  }
  ssize_t n;
  do {
    n = ::read(fd, bytes_.get(), want);
  } while (n < 0 && errno == EINTR);
  if (n >= 0 && static_cast<std::uint64_t>(n) == size) return {bytes_.get(), size};
  return read(path, what, max_bytes);  // it changed since the stat (or could not be read): as if unknown
}

std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw InputError("cannot open " + what + " '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw InputError(what + " '" + path + "' is not a regular file (it is " + kind_of(st.st_mode) + ")");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    throw InputError(what + " '" + path + "' is " + std::to_string(st.st_size) + " B, more than the limit of " +
                     std::to_string(max_bytes) + " B");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open " + what + " '" + path + "': " + std::strerror(errno));
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (in.bad()) throw InputError("cannot read " + what + " '" + path + "'");
  data.resize(static_cast<std::size_t>(in.gcount()));
  return data;
}

}  // namespace sim
