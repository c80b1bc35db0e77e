#include "core/input_file.h"

#include <sys/stat.h>

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
}  // namespace

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
