#include "workflows/sweep/content_hash.h"

#include <openssl/evp.h>

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace sim::workflows {

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

std::string read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read file");
  return text.str();
}

std::string FileDigests::of(const std::string& path) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = digests_.find(path); it != digests_.end()) return it->second;
  }
  // Hashed outside the lock: two threads may hash one file at once, harmlessly.
  std::string digest = sha256_hex(read_file_text(path));
  std::lock_guard lock(mutex_);
  return digests_.emplace(path, std::move(digest)).first->second;
}

}  // namespace sim::workflows
