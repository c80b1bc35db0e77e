#include "workload/pytorch/json_element_stream.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <istream>
#include <memory>
#include <streambuf>
#include <vector>

#include "core/error.h"

namespace sim::pytorch {

namespace {

// The file's size in bytes; a path that is not a regular file is an error.
std::uint64_t regular_file_size(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": no such file");
  if (!S_ISREG(st.st_mode)) throw InputError(path + ": not a regular file");
  return static_cast<std::uint64_t>(st.st_size);
}

// gzread reads gzip and plain files alike (zlib's "transparent" mode), so one
// reader serves .json and .json.gz; the file's bytes decide, not its name.
class GzStreamBuf : public std::streambuf {
 public:
  // Buffers of 256 KiB for a large trace, of the file's size for a small
  // one (a few KiB): zlib's buffers and ours are allocated per open, and a
  // small file read often (a peek, then the stream) should not pay for 1 MB.
  explicit GzStreamBuf(const std::string& path) : path_(path) {
    const std::uint64_t size = regular_file_size(path);
    const auto bytes = static_cast<unsigned>(std::clamp<std::uint64_t>(size, 4096, 1 << 18));
    file_ = gzopen(path.c_str(), "rb");
    if (!file_) throw InputError(path + ": cannot open");
    gzbuffer(file_, bytes);
    buffer_.reset(new char[bytes]);
    buffer_size_ = bytes;
  }
  ~GzStreamBuf() override {
    if (file_) gzclose(file_);
  }
  GzStreamBuf(const GzStreamBuf&) = delete;
  GzStreamBuf& operator=(const GzStreamBuf&) = delete;
  std::uint64_t consumed() const { return consumed_ - static_cast<std::uint64_t>(egptr() - gptr()); }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int n = gzread(file_, buffer_.get(), buffer_size_);
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(file_, &code);
      throw InputError(path_ + ": corrupt gzip data (" + std::string(msg ? msg : "unknown") + ")");
    }
    if (n == 0) {
      int code = 0;
      gzerror(file_, &code);
      if (code == Z_BUF_ERROR) throw InputError(path_ + ": truncated gzip data");
      return traits_type::eof();
    }
    consumed_ += static_cast<std::uint64_t>(n);
    setg(buffer_.get(), buffer_.get(), buffer_.get() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
  std::unique_ptr<char[]> buffer_;  // not zeroed: gzread fills what is read
  unsigned buffer_size_ = 0;
  std::uint64_t consumed_ = 0;
};

using json = nlohmann::json;

// Builds one JSON value from SAX events; done() once the value is complete.
class DomBuilder {
 public:
  void begin(json* root) {
    root_ = root;
    stack_.clear();
    keys_.clear();
    started_ = false;
  }
  bool done() const { return started_ && stack_.empty(); }
  std::size_t depth() const { return stack_.size(); }
  void value(json&& v) {
    json* slot = place();
    *slot = std::move(v);
  }
  void open(json&& container) {
    json* slot = place();
    *slot = std::move(container);
    stack_.push_back(slot);
  }
  void key(std::string&& k) { keys_.push_back(std::move(k)); }
  void close() { stack_.pop_back(); }

 private:
  json* place() {
    started_ = true;
    if (stack_.empty()) return root_;
    json* top = stack_.back();
    if (top->is_array()) {
      top->push_back(nullptr);
      return &top->back();
    }
    json* slot = &(*top)[keys_.back()];
    keys_.pop_back();
    return slot;
  }
  json* root_ = nullptr;
  std::vector<json*> stack_;
  std::vector<std::string> keys_;
  bool started_ = false;
};

class ElementSax {
 public:
  ElementSax(const std::string& array_key, const std::function<void(json&)>& on_element,
             int max_depth)
      : array_key_(array_key), on_element_(on_element), max_depth_(max_depth) {}

  json top = json::object();
  bool saw_array = false;
  std::string error;

  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool v) { return scalar(json(v)); }
  bool number_integer(json::number_integer_t v) { return scalar(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(json(v)); }
  bool number_float(json::number_float_t v, const std::string&) { return scalar(json(v)); }
  bool string(std::string& v) { return scalar(json(std::move(v))); }
  bool binary(json::binary_t&) { return scalar(json(nullptr)); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    if (state_ == kTop) {
      top_key_ = k;
      return true;
    }
    builder_.key(std::move(k));
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    error = "bad JSON near byte " + std::to_string(position) + ": " + e.what();
    return false;
  }

 private:
  enum State { kStart, kTop, kMember, kArray, kElement, kEnd };

  bool scalar(json&& v) {
    switch (state_) {
      case kStart:
        error = "expected a JSON object at the top level";
        return false;
      case kTop:
        if (top_key_ == array_key_) {
          error = "'" + array_key_ + "' is not a list";
          return false;
        }
        top[top_key_] = std::move(v);
        return true;
      case kArray:
        on_element_(v);
        return true;
      case kMember:
      case kElement:
        builder_.value(std::move(v));
        return true;
      default:
        error = "data after the end of the top-level object";
        return false;
    }
  }
  bool open(json&& container) {
    switch (state_) {
      case kStart:
        if (!container.is_object()) {
          error = "expected a JSON object at the top level";
          return false;
        }
        state_ = kTop;
        return true;
      case kTop:
        if (top_key_ == array_key_) {
          if (!container.is_array()) {
            error = "'" + array_key_ + "' is not a list";
            return false;
          }
          saw_array = true;
          state_ = kArray;
          return true;
        }
        state_ = kMember;
        builder_.begin(&top[top_key_]);
        builder_.open(std::move(container));
        return true;
      case kArray:
        state_ = kElement;
        element_ = nullptr;
        builder_.begin(&element_);
        builder_.open(std::move(container));
        return true;
      case kMember:
      case kElement:
        if (static_cast<int>(builder_.depth()) + 2 > max_depth_) {
          error = "nested deeper than " + std::to_string(max_depth_) + " levels";
          return false;
        }
        builder_.open(std::move(container));
        return true;
      default:
        error = "data after the end of the top-level object";
        return false;
    }
  }
  bool close() {
    switch (state_) {
      case kTop:
        state_ = kEnd;
        return true;
      case kArray:
        state_ = kTop;
        return true;
      case kMember:
        builder_.close();
        if (builder_.done()) state_ = kTop;
        return true;
      case kElement:
        builder_.close();
        if (builder_.done()) {
          state_ = kArray;
          on_element_(element_);
          element_ = nullptr;
        }
        return true;
      default:
        error = "unbalanced JSON";
        return false;
    }
  }

  const std::string& array_key_;
  const std::function<void(json&)>& on_element_;
  int max_depth_;
  State state_ = kStart;
  std::string top_key_;
  DomBuilder builder_;
  json element_;
};

}  // namespace

nlohmann::json stream_json_array(const std::string& path, const std::string& array_key,
                                 const std::function<void(nlohmann::json&)>& on_element, int max_depth) {
  GzStreamBuf buf(path);
  std::istream in(&buf);
  in.exceptions(std::ios::badbit);
  ElementSax sax(array_key, on_element, max_depth);
  bool ok = false;
  try {
    ok = json::sax_parse(in, &sax, json::input_format_t::json, /*strict=*/true);
  } catch (const std::ios_base::failure&) {
    throw InputError(path + ": read error");
  }
  if (!ok) throw InputError(path + ": " + (sax.error.empty() ? std::string("bad JSON") : sax.error));
  if (!sax.saw_array) throw InputError(path + ": no '" + array_key + "' list");
  return std::move(sax.top);
}

std::string peek_json_text(const std::string& path, std::size_t max_bytes) {
  GzStreamBuf buf(path);
  std::string out(max_bytes, '\0');
  const std::streamsize n = buf.sgetn(out.data(), static_cast<std::streamsize>(max_bytes));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace sim::pytorch
