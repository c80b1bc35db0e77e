// The fast ET node decoder: protobuf's wire format read by hand.
//
// It follows what protobuf 3.21's generated parser (et_def.pb.cc) accepts, so
// that a file either loads the same on both paths or fails on both:
//  - tags: varints of up to 5 bytes, truncated to 32 bits; field number 0, an
//    end-group tag outside a group, and wire types 6 and 7 are errors;
//  - values: varints of up to 10 bytes (bits past 64 dropped); 32-bit fields
//    keep the low 32 bits; fixed32/fixed64 must fit in the message;
//  - lengths: varints of up to 5 bytes, at most INT_MAX - 16, within the message;
//  - a known field with an unexpected wire type is an unknown field, skipped
//    (and checked) like any other; repeated scalars come packed or not;
//  - proto3 strings must be valid UTF-8 (bytes fields need not);
//  - messages and groups nest at most 100 deep; a submessage must end exactly
//    at its length (no 0 or end-group tag inside).
#include <algorithm>
#include <climits>
#include <cstring>

#include "workload/et/et_io.h"

namespace sim {
namespace {

using u8 = unsigned char;

// IsStructurallyValidUTF8: no overlong forms, no surrogates, nothing past U+10FFFF.
bool valid_utf8(const u8* p, const u8* end) {
  while (p < end) {
    // ASCII eight bytes at a time.
    if (end - p >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      if ((w & 0x8080808080808080ull) == 0) {
        p += 8;
        continue;
      }
    }
    const u8 c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n;
    u8 lo = 0x80, hi = 0xbf;  // bounds of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      return false;
    }
    if (end - p <= n) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (int k = 2; k <= n; ++k) {
      if (p[k] < 0x80 || p[k] > 0xbf) return false;
    }
    p += n + 1;
  }
  return true;
}

enum Wire { kVarint = 0, kFixed64 = 1, kLen = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

class Decoder {
 public:
  Decoder(const char* bytes, std::size_t readable, std::string& error, std::size_t& error_at, WireAttrMemo* memo)
      : base_(reinterpret_cast<const u8*>(bytes)),
        readable_end_(base_ + readable),
        error_(error),
        error_at_(error_at),
        memo_(memo) {}

  bool node(const u8* p, const u8* end, WireNode& out) {
    constexpr int depth = 100;  // protobuf's default recursion limit
    while (p < end) {
      const u8* const at = p;
      std::uint32_t tag;
      if (!read_tag(p, end, tag)) return false;
      switch (tag) {
        case (1 << 3) | kVarint:
          if (!varint(p, end, out.id)) return false;
          continue;
        case (2 << 3) | kLen:
          if (!string(p, end, out.name)) return false;
          continue;
        case (3 << 3) | kVarint: {
          std::uint64_t v;
          if (!varint(p, end, v)) return false;
          out.type = static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
          continue;
        }
        case (4 << 3) | kVarint:
        case (5 << 3) | kVarint: {
          std::uint64_t v;
          if (!varint(p, end, v)) return false;
          (tag >> 3 == 4 ? out.ctrl_deps : out.data_deps).push_back(v);
          continue;
        }
        case (4 << 3) | kLen:
        case (5 << 3) | kLen: {
          const u8* sub_end;
          if (!length(p, end, sub_end)) return false;
          auto& list = tag >> 3 == 4 ? out.ctrl_deps : out.data_deps;
          while (p < sub_end) {
            std::uint64_t v;
            if (!varint(p, sub_end, v)) return false;
            list.push_back(v);
          }
          continue;
        }
        case (6 << 3) | kVarint: {
          std::uint64_t v;
          if (!varint(p, end, v)) return false;
          continue;
        }
        case (7 << 3) | kVarint:
          if (!varint(p, end, out.duration_micros)) return false;
          continue;
        case (8 << 3) | kLen:
        case (9 << 3) | kLen: {
          const u8* sub_end;
          if (!length(p, end, sub_end) || !io_info(p, sub_end, depth - 1)) return false;
          if (tag >> 3 == 8) io_values(p, sub_end, out.inputs_values);
          p = sub_end;
          continue;
        }
        case (10 << 3) | kLen: {
          const u8* sub_end;
          if (!length(p, end, sub_end)) return false;
          const auto size = static_cast<std::size_t>(sub_end - p);
          if (memo_ && size <= WireAttrMemo::kMaxBytes) {
            const std::size_t set = memo_set(p, size);
            WireAttrMemo::Entry* ways = memo_->ways[set];
            const WireAttrMemo::Entry* hit = nullptr;
            for (int w = 0; w < 2; ++w) {
              if (ways[w].bytes && ways[w].size == size && std::memcmp(ways[w].bytes, p, size) == 0) hit = &ways[w];
            }
            if (hit) {
              ++memo_->hits;
              out.attrs.push_back(hit->value);
              p = sub_end;
              continue;
            }
            ++memo_->misses;
            WireAttr& a = out.attrs.emplace_back();
            if (!attribute(p, sub_end, depth - 1, a)) return false;
            WireAttrMemo::Entry& e = ways[memo_->older[set]];
            memo_->older[set] ^= 1;
            e.bytes = reinterpret_cast<const char*>(p);
            e.size = static_cast<std::uint32_t>(size);
            e.value = a;
            p = sub_end;
            continue;
          }
          if (!attribute(p, sub_end, depth - 1, out.attrs.emplace_back())) return false;
          p = sub_end;
          continue;
        }
        default:
          if (!unknown(tag, at, p, end, depth)) return false;
          continue;
      }
    }
    return true;
  }

 private:
  // The memo set of an attribute's bytes: a hash of their length and first and
  // last 8 bytes (all of them are compared on a hit).
  static std::size_t memo_set(const u8* p, std::size_t size) {
    std::uint64_t a = 0, b = 0;
    if (size >= 8) {
      std::memcpy(&a, p, 8);
      std::memcpy(&b, p + size - 8, 8);
    } else {
      std::memcpy(&a, p, size);
    }
    const std::uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ ((b + size) * 0xc2b2ae3d27d4eb4full);
    return static_cast<std::size_t>((h ^ (h >> 29)) >> 58) % WireAttrMemo::kSets;
  }

  bool fail(const u8* at, const char* what) {
    error_ = what;
    error_at_ = static_cast<std::size_t>(at - base_);
    return false;
  }

  // Up to 10 bytes; bits past 64 dropped, as protobuf does.
  bool varint(const u8*& p, const u8* end, std::uint64_t& v) {
    if (readable_end_ - p >= 10) [[likely]] {  // no bounds checks while reading; `end` checked after
      std::uint64_t r = 0;
      for (int i = 0; i < 10; ++i) {
        const u8 b = p[i];
        r |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
        if (b < 0x80) {
          if (i + 1 > end - p) break;  // ran past the field: the slow path says how
          p += i + 1;
          v = r;
          return true;
        }
      }
    }
    return varint_slow(p, end, v);
  }
  [[gnu::noinline]] bool varint_slow(const u8*& p, const u8* end, std::uint64_t& v) {
    const u8* const at = p;
    v = 0;
    for (int i = 0; i < 10; ++i) {
      if (p >= end) return fail(at, "truncated varint");
      const u8 b = *p++;
      v |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
      if (b < 0x80) return true;
    }
    return fail(at, "varint longer than 10 bytes");
  }

  // Tags: up to 5 bytes, kept modulo 2^32. Field number 0, end-group tags
  // where no group is open and wire types 6-7 are errors.
  bool read_tag(const u8*& p, const u8* end, std::uint32_t& tag) {
    if (p < end && *p < 0x80 && *p >= 8 && (*p & 7) <= 5) [[likely]] {
      tag = *p++;
      return true;
    }
    return read_tag_slow(p, end, tag);
  }
  [[gnu::noinline]] bool read_tag_slow(const u8*& p, const u8* end, std::uint32_t& tag) {
    const u8* const at = p;
    std::uint32_t v = 0;
    for (int i = 0; i < 5; ++i) {
      if (p >= end) return fail(at, "truncated tag");
      const u8 b = *p++;
      v |= static_cast<std::uint32_t>(b & 0x7f) << (7 * i);
      if (b < 0x80) {
        tag = v;
        if ((v >> 3) == 0) return fail(at, "field number 0");
        if ((v & 7) > 5) return fail(at, "invalid wire type");
        return true;
      }
    }
    return fail(at, "tag varint longer than 5 bytes");
  }

  // A length prefix; sub_end is where the value ends.
  bool length(const u8*& p, const u8* end, const u8*& sub_end) {
    if (p < end && *p < 0x80 && *p < end - p) [[likely]] {
      sub_end = p + 1 + *p;
      ++p;
      return true;
    }
    return length_slow(p, end, sub_end);
  }
  [[gnu::noinline]] bool length_slow(const u8*& p, const u8* end, const u8*& sub_end) {
    const u8* const at = p;
    std::uint64_t v = 0;
    for (int i = 0;; ++i) {
      if (p >= end) return fail(at, "truncated length");
      const u8 b = *p++;
      if (i == 4 && b >= 8) return fail(at, "length of 2 GiB or more");
      v |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
      if (b < 0x80) break;
    }
    if (v > static_cast<std::uint64_t>(INT_MAX - 16)) return fail(at, "length of 2 GiB or more");
    if (v > static_cast<std::uint64_t>(end - p)) return fail(at, "length past the end of the message");
    sub_end = p + v;
    return true;
  }

  bool string(const u8*& p, const u8* end, std::string_view& out) {
    const u8* const at = p;
    const u8* sub_end;
    if (!length(p, end, sub_end)) return false;
    if (!valid_utf8(p, sub_end)) return fail(at, "string field is not valid UTF-8");
    out = std::string_view(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sub_end - p));
    p = sub_end;
    return true;
  }

  bool fixed(const u8*& p, const u8* end, int bytes, std::uint64_t& v) {
    if (end - p < bytes) return fail(p, "truncated fixed-width value");
    v = 0;
    std::memcpy(&v, p, static_cast<std::size_t>(bytes));  // little-endian hosts only (x86, arm64)
    p += bytes;
    return true;
  }

  // Skips (and checks) a field the decoder does not keep; `at` is its tag.
  bool unknown(std::uint32_t tag, const u8* at, const u8*& p, const u8* end, int depth) {
    std::uint64_t v;
    switch (tag & 7) {
      case kVarint: return varint(p, end, v);
      case kFixed64: return fixed(p, end, 8, v);
      case kFixed32: return fixed(p, end, 4, v);
      case kLen: {
        const u8* sub_end;
        if (!length(p, end, sub_end)) return false;
        p = sub_end;
        return true;
      }
      case kStartGroup: {
        if (depth - 1 < 0) return fail(at, "nesting deeper than 100");
        for (;;) {
          const u8* const inner = p;
          std::uint32_t t;
          if (p >= end) return fail(at, "group without its end");
          if (!read_tag(p, end, t)) return false;
          if ((t & 7) == kEndGroup) {
            if ((t >> 3) != (tag >> 3)) return fail(inner, "end-group tag of another group");
            return true;
          }
          if (!unknown(t, inner, p, end, depth - 1)) return false;
        }
      }
      default: return fail(at, "end-group tag outside a group");
    }
  }

  // Fields of a message the decoder only checks: strings at `string_fields`
  // (bit per field number), everything else skipped as unknown.
  bool checked_message(const u8* p, const u8* end, int depth, std::uint32_t string_fields) {
    if (depth < 0) return fail(p, "nesting deeper than 100");
    while (p < end) {
      const u8* const at = p;
      std::uint32_t tag;
      if (!read_tag(p, end, tag)) return false;
      const std::uint32_t field = tag >> 3;
      if ((tag & 7) == kLen && field < 32 && (string_fields >> field & 1)) {
        std::string_view s;
        if (!string(p, end, s)) return false;
        continue;
      }
      if (!unknown(tag, at, p, end, depth)) return false;
    }
    return true;
  }

  bool io_info(const u8* p, const u8* end, int depth) {
    return checked_message(p, end, depth, (1u << 1) | (1u << 2) | (1u << 3));
  }

  // IOInfo.values (field 1) of a message io_info accepted; the last one wins, as in protobuf.
  void io_values(const u8* p, const u8* end, std::string_view& out) {
    while (p < end) {
      const u8* const at = p;
      std::uint32_t tag;
      read_tag(p, end, tag);
      if (tag == ((1u << 3) | kLen)) {
        string(p, end, out);
      } else {
        unknown(tag, at, p, end, 100);
      }
    }
  }

  // The values of a BoolList message `list` accepted (packed or not).
  void bool_values(const u8* p, const u8* end, WireAttr& a) {
    a.bits = 0;
    a.count = 0;
    auto add = [&](std::uint64_t v) {
      if (a.count < 64 && v != 0) a.bits |= 1ull << a.count;
      ++a.count;
    };
    while (p < end) {
      const u8* const at = p;
      std::uint32_t tag;
      read_tag(p, end, tag);
      std::uint64_t v;
      if (tag == ((1u << 3) | kLen)) {
        const u8* sub_end;
        length(p, end, sub_end);
        while (p < sub_end) {
          varint(p, sub_end, v);
          add(v);
        }
      } else if (tag == ((1u << 3) | kVarint)) {
        varint(p, end, v);
        add(v);
      } else {
        unknown(tag, at, p, end, 100);
      }
    }
  }

  // A *List message: field 1 repeated, packed (wire type 2) or not (`wire`).
  // width 0: varints; 4 or 8: fixed; -1: strings (UTF-8); -2: bytes.
  bool list(const u8* p, const u8* end, int depth, int width, int wire) {
    if (depth < 0) return fail(p, "nesting deeper than 100");
    if (width < 0) return checked_message(p, end, depth, width == -1 ? (1u << 1) : 0u);
    while (p < end) {
      const u8* const at = p;
      std::uint32_t tag;
      if (!read_tag(p, end, tag)) return false;
      std::uint64_t v;
      if (tag == ((1u << 3) | kLen)) {
        const u8* sub_end;
        if (!length(p, end, sub_end)) return false;
        if (width == 0) {
          while (p < sub_end) {
            if (!varint(p, sub_end, v)) return false;
          }
        } else if ((sub_end - p) % width != 0) {
          return fail(at, "packed fixed-width list of a partial element");
        }
        p = sub_end;
        continue;
      }
      if (tag == ((1u << 3) | static_cast<std::uint32_t>(wire))) {
        if (!(width == 0 ? varint(p, end, v) : fixed(p, end, width, v))) return false;
        continue;
      }
      if (!unknown(tag, at, p, end, depth)) return false;
    }
    return true;
  }

  bool attribute(const u8* p, const u8* end, int depth, WireAttr& a) {
    if (depth < 0) return fail(p, "nesting deeper than 100");
    while (p < end) {
      const u8* const at = p;
      std::uint32_t tag;
      if (!read_tag(p, end, tag)) return false;
      const std::uint32_t field = tag >> 3;
      const int wire = static_cast<int>(tag & 7);
      std::uint64_t v = 0;
      if (field == 1 && wire == kLen) {
        if (!string(p, end, a.name)) return false;
        continue;
      }
      if (field == 2 && wire == kLen) {
        std::string_view s;
        if (!string(p, end, s)) return false;
        continue;
      }
      if (field >= 3 && field <= 32) {
        // Scalars at odd numbers 3..31 (and 27 bool, 29 string, 31 bytes); lists at even ones.
        if (field % 2 == 0) {
          if (wire == kLen) {
            // double, float, int32, int64, uint32, uint64, sint32, sint64, fixed32, fixed64, sfixed32, sfixed64, bool, string, bytes
            static constexpr int kWidth[] = {8, 4, 0, 0, 0, 0, 0, 0, 4, 8, 4, 8, 0, -1, -2};
            static constexpr int kWire[] = {kFixed64, kFixed32, kVarint, kVarint, kVarint, kVarint, kVarint, kVarint,
                                            kFixed32, kFixed64, kFixed32, kFixed64, kVarint, kLen, kLen};
            const int k = static_cast<int>(field / 2) - 2;
            const u8* sub_end;
            if (!length(p, end, sub_end) || !list(p, sub_end, depth - 1, kWidth[k], kWire[k])) return false;
            a.value_case = static_cast<int>(field);
            a.bits = 0;
            a.count = 0;
            if (field == 28) bool_values(p, sub_end, a);
            p = sub_end;
            continue;
          }
        } else {
          int expected;
          switch (field) {
            case 3: case 21: case 25: expected = kFixed64; break;
            case 5: case 19: case 23: expected = kFixed32; break;
            case 29: case 31: expected = kLen; break;
            default: expected = kVarint; break;
          }
          if (wire == expected) {
            switch (field) {
              case 3: case 21: case 25:
                if (!fixed(p, end, 8, v)) return false;
                break;
              case 5: case 19: case 23:
                if (!fixed(p, end, 4, v)) return false;
                if (field == 23) v = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(v)));
                break;
              case 29:
                if (!string(p, end, a.str)) return false;
                break;
              case 31: {
                const u8* sub_end;
                if (!length(p, end, sub_end)) return false;
                p = sub_end;
                break;
              }
              default: {
                if (!varint(p, end, v)) return false;
                switch (field) {
                  case 7:  // int32
                    v = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(v)));
                    break;
                  case 11: v = static_cast<std::uint32_t>(v); break;  // uint32
                  case 15: {  // sint32
                    const auto u = static_cast<std::uint32_t>(v);
                    v = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>((u >> 1) ^ (0u - (u & 1)))));
                    break;
                  }
                  case 17: v = (v >> 1) ^ (0 - (v & 1)); break;  // sint64
                  case 27: v = v != 0; break;                       // bool
                  default: break;                                   // int64, uint64
                }
              }
            }
            a.value_case = static_cast<int>(field);
            a.bits = v;
            a.count = 0;
            continue;
          }
        }
      }
      if (!unknown(tag, at, p, end, depth)) return false;
    }
    return true;
  }

  const u8* base_;
  const u8* readable_end_;  // bytes up to here may be read (never used past `end`)
  std::string& error_;
  std::size_t& error_at_;
  WireAttrMemo* memo_;
};

}  // namespace

bool decode_wire_node(const char* bytes, std::size_t size, WireNode& out, std::string& error, std::size_t& error_at,
                      std::size_t readable, WireAttrMemo* memo) {
  out.id = 0;
  out.name = {};
  out.type = 0;
  out.duration_micros = 0;
  out.ctrl_deps.clear();
  out.data_deps.clear();
  out.attrs.clear();
  out.inputs_values = {};
  const auto* p = reinterpret_cast<const u8*>(bytes);
  return Decoder(bytes, std::max(size, readable), error, error_at, memo).node(p, p + size, out);
}

}  // namespace sim
