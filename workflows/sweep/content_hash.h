// SHA-256 content digests (OpenSSL's libcrypto) that key a sweep's points.
//
// A point's key is the digest of a canonical text naming the sim version, the
// digest of every file it reads and every option it applies; equal keys mean
// the point would compute the same result, so a rerun reuses it.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace sim::workflows {

// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

// Digests of files by path, each read once per sweep (thread-safe).
class FileDigests {
 public:
  // Throws InputError naming the path when it cannot be read.
  std::string of(const std::string& path);

 private:
  std::mutex mutex_;
  std::map<std::string, std::string> digests_;
};

// The whole content of a file; throws InputError naming the path.
std::string read_file_text(const std::string& path);

}  // namespace sim::workflows
