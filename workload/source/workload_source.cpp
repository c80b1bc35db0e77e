#include "workload/source/workload_source.h"

#include <cctype>

#include "core/error.h"
#include "workload/generators/workload_generator.h"
#include "workload/source/scheme_sources.h"

namespace sim {
namespace {

constexpr std::string_view kGeneratedPrefix = "gen:";

// "gen:" names a microbenchmark by its kind, else a training iteration.
std::shared_ptr<const WorkloadSource> open_gen(const std::string& text) {
  return is_microbenchmark_workload(text) ? source::open_microbenchmark(text) : source::open_generated(text);
}

// The scheme registry: a new kind of workload is one entry here and its source.
struct Scheme {
  std::string_view prefix;
  std::shared_ptr<const WorkloadSource> (*open)(const std::string& text);
};
constexpr Scheme kSchemes[] = {
    {kGeneratedPrefix, open_gen},
    {"pytorch:", source::open_pytorch},
};

// "xyz:..." as a URI scheme is spelled: what a user who meant a scheme would
// have typed. Only a hint in a message: such a text is still opened as a path.
bool looks_like_a_scheme(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || !std::isalpha(static_cast<unsigned char>(text[0]))) return false;
  for (std::size_t i = 1; i < colon; ++i) {
    const char c = text[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<const WorkloadSource> open_workload(const std::string& text) {
  for (const Scheme& s : kSchemes) {
    if (text.starts_with(s.prefix)) return s.open(text);
  }
  try {
    return source::open_files(text);
  } catch (const InputError& e) {
    if (!looks_like_a_scheme(text)) throw;
    std::string known;
    for (const Scheme& s : kSchemes) known += (known.empty() ? "" : ", ") + std::string(s.prefix);
    throw InputError(std::string(e.what()) + " (--workload '" + text + "': '" + text.substr(0, text.find(':') + 1) +
                     "' is not a workload scheme; the schemes are " + known + ", else ET files)");
  }
}

std::shared_ptr<const WorkloadSource> open_swept_workload(const std::string& text) {
  if (is_microbenchmark_workload(text)) return source::open_microbenchmark(text, UnevenSize::kRoundDown);
  return open_workload(text);
}

bool is_generated(std::string_view text) { return text.starts_with(kGeneratedPrefix); }

bool is_generated_training(std::string_view text) {
  return is_generated(text) && !is_microbenchmark_workload(text);
}

}  // namespace sim
