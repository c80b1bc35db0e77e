#include "core/units.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace sim {

namespace {

// __extension__: __int128 is a GCC/Clang extension, fine for exact intermediates.
__extension__ typedef unsigned __int128 u128;

// A unit as an exact ratio to the base unit (bytes/s, picoseconds or bytes):
// bits are 1/8 of a byte, so bandwidths need a denominator.
struct Unit {
  std::string_view name;
  std::uint64_t num;
  std::uint64_t den;
};

constexpr std::uint64_t kKilo = 1'000, kMega = 1'000'000, kGiga = 1'000'000'000,
                        kTera = 1'000'000'000'000;
constexpr std::uint64_t kKi = 1ULL << 10, kMi = 1ULL << 20, kGi = 1ULL << 30, kTi = 1ULL << 40;

constexpr std::array kBandwidthUnits{
    Unit{"B/s", 1, 1},        Unit{"Bps", 1, 1},
    Unit{"KB/s", kKilo, 1},   Unit{"kB/s", kKilo, 1},  Unit{"KBps", kKilo, 1}, Unit{"kBps", kKilo, 1},
    Unit{"MB/s", kMega, 1},   Unit{"MBps", kMega, 1},
    Unit{"GB/s", kGiga, 1},   Unit{"GBps", kGiga, 1},
    Unit{"TB/s", kTera, 1},   Unit{"TBps", kTera, 1},
    Unit{"KiB/s", kKi, 1},    Unit{"MiB/s", kMi, 1},   Unit{"GiB/s", kGi, 1},  Unit{"TiB/s", kTi, 1},
    Unit{"b/s", 1, 8},        Unit{"bps", 1, 8},
    Unit{"Kb/s", kKilo, 8},   Unit{"kb/s", kKilo, 8},  Unit{"Kbps", kKilo, 8}, Unit{"kbps", kKilo, 8},
    Unit{"Mb/s", kMega, 8},   Unit{"Mbps", kMega, 8},
    Unit{"Gb/s", kGiga, 8},   Unit{"Gbps", kGiga, 8},
    Unit{"Tb/s", kTera, 8},   Unit{"Tbps", kTera, 8},
};

constexpr std::array kTimeUnits{
    Unit{"ps", 1, 1},
    Unit{"ns", kNanosecond, 1},
    Unit{"us", kMicrosecond, 1},
    Unit{"\xC2\xB5s", kMicrosecond, 1},  // µs
    Unit{"ms", kMillisecond, 1},
    Unit{"s", kSecond, 1},
};

constexpr std::array kSizeUnits{
    Unit{"B", 1, 1},      Unit{"KB", kKilo, 1}, Unit{"kB", kKilo, 1}, Unit{"MB", kMega, 1},
    Unit{"GB", kGiga, 1}, Unit{"TB", kTera, 1}, Unit{"KiB", kKi, 1},  Unit{"MiB", kMi, 1},
    Unit{"GiB", kGi, 1},  Unit{"TiB", kTi, 1},
};

// Beyond this an intermediate could overflow 128 bits; no sane quantity gets close.
constexpr u128 kLimit = static_cast<u128>(1) << 126;

[[noreturn]] void fail(std::string_view what, std::string_view text, const std::string& why) {
  throw std::invalid_argument("invalid " + std::string(what) + " '" + std::string(text) + "': " + why);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

// Parses "<decimal>[e<exp>] [unit]" and returns value * unit exactly, in base
// units. Integer arithmetic throughout so "12.5GB/s" is exactly 12500000000.
template <std::size_t N>
u128 parse_quantity(std::string_view text, std::string_view what, const std::array<Unit, N>& units,
                    const Unit& bare, u128 max) {
  std::size_t i = 0;
  while (i < text.size() && is_space(text[i])) ++i;
  if (i == text.size()) fail(what, text, "empty");
  if (text[i] == '-') fail(what, text, "must not be negative");
  if (text[i] == '+') ++i;

  u128 mantissa = 0;
  int exponent = 0;  // value = mantissa * 10^exponent
  std::size_t digits = 0;
  auto take_digit = [&](char c) {
    mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
    if (mantissa >= kLimit) fail(what, text, "out of range");
    ++digits;
  };
  while (i < text.size() && is_digit(text[i])) take_digit(text[i++]);
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) {
      take_digit(text[i++]);
      --exponent;
    }
  }
  if (digits == 0) fail(what, text, "not a number");
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E') && i + 1 < text.size() &&
      (is_digit(text[i + 1]) || ((text[i + 1] == '-' || text[i + 1] == '+') && i + 2 < text.size() &&
                                 is_digit(text[i + 2])))) {
    ++i;
    const bool neg = text[i] == '-';
    if (text[i] == '-' || text[i] == '+') ++i;
    int e = 0;
    while (i < text.size() && is_digit(text[i])) {
      e = e * 10 + (text[i++] - '0');
      if (e > 1000) fail(what, text, "out of range");
    }
    exponent += neg ? -e : e;
  }
  while (i < text.size() && is_space(text[i])) ++i;
  std::size_t end = text.size();
  while (end > i && is_space(text[end - 1])) --end;
  const std::string_view suffix = text.substr(i, end - i);

  const Unit* unit = &bare;
  if (!suffix.empty()) {
    unit = nullptr;
    for (const Unit& u : units) {
      if (u.name == suffix) unit = &u;
    }
    if (unit == nullptr) {
      std::string known;
      for (const Unit& u : units) known.append(known.empty() ? "" : ", ").append(u.name);
      fail(what, text, "unknown unit '" + std::string(suffix) + "' (known: " + known + ")");
    }
  }
  if (mantissa == 0) return 0;

  // Trailing zeros move into the exponent so "1.50" and "1.5" behave alike.
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  u128 num = mantissa;
  auto times = [&](u128 f) {
    if (num > kLimit / f) fail(what, text, "out of range");
    num *= f;
  };
  times(unit->num);
  u128 den = unit->den;
  for (; exponent > 0; --exponent) times(10);
  for (; exponent < 0; ++exponent) {
    if (den > kLimit / 10) fail(what, text, "too many decimal places");
    den *= 10;
  }
  if (num % den != 0) fail(what, text, "not a whole number of base units");
  const u128 value = num / den;
  if (value > max) fail(what, text, "out of range");
  return value;
}

std::string decimal(std::uint64_t value, std::uint64_t unit) {
  std::string s = std::to_string(value / unit);
  std::uint64_t frac = value % unit;
  if (frac == 0) return s;
  std::string f = std::to_string(frac);
  f.insert(0, std::to_string(unit).size() - 1 - f.size(), '0');
  while (f.back() == '0') f.pop_back();
  return s + "." + f;
}

}  // namespace

BytesPerSecond parse_bandwidth(std::string_view text) { return parse_bandwidth(text, 1e9); }

BytesPerSecond parse_bandwidth(std::string_view text, double bare_unit) {
  if (!(bare_unit >= 1 && bare_unit <= 1e18) || std::floor(bare_unit) != bare_unit) {
    throw std::invalid_argument("parse_bandwidth: bare unit must be a whole number of B/s");
  }
  const Unit bare{"", static_cast<std::uint64_t>(bare_unit), 1};
  return static_cast<BytesPerSecond>(parse_quantity(text, "bandwidth", kBandwidthUnits, bare,
                                                    std::numeric_limits<BytesPerSecond>::max()));
}

Time parse_time(std::string_view text) {
  const Unit bare{"", kNanosecond, 1};
  return static_cast<Time>(
      parse_quantity(text, "time", kTimeUnits, bare, std::numeric_limits<Time>::max()));
}

std::uint64_t parse_size(std::string_view text) {
  const Unit bare{"", 1, 1};
  return static_cast<std::uint64_t>(
      parse_quantity(text, "size", kSizeUnits, bare, std::numeric_limits<std::uint64_t>::max()));
}

std::string format_bandwidth(BytesPerSecond bw) {
  static constexpr std::array<Unit, 5> kScale{Unit{"TB/s", kTera, 1}, Unit{"GB/s", kGiga, 1},
                                               Unit{"MB/s", kMega, 1}, Unit{"KB/s", kKilo, 1},
                                               Unit{"B/s", 1, 1}};
  for (const Unit& u : kScale) {
    if (bw >= u.num || u.num == 1) return decimal(bw, u.num) + " " + std::string(u.name);
  }
  return {};  // unreachable: the last unit always matches
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<Unit, 4> kScale{Unit{"TiB", kTi, 1}, Unit{"GiB", kGi, 1},
                                               Unit{"MiB", kMi, 1}, Unit{"KiB", kKi, 1}};
  for (const Unit& u : kScale) {
    if (bytes < u.num) continue;
    const std::string exact = " (" + std::to_string(bytes) + " B)";
    if (bytes % u.num == 0) return std::to_string(bytes / u.num) + " " + std::string(u.name) + exact;
    // Truncated (never rounded up) so an inexact size never looks like a round one.
    const auto hundredths = static_cast<std::uint64_t>(static_cast<u128>(bytes) * 100 / u.num);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%llu.%02llu ", static_cast<unsigned long long>(hundredths / 100),
                  static_cast<unsigned long long>(hundredths % 100));
    return buf + std::string(u.name) + exact;
  }
  return std::to_string(bytes) + " B";
}

}  // namespace sim
