#include "workflows/sweep/progress.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

namespace sim::workflows {

namespace {
using clock = std::chrono::steady_clock;

std::string seconds_text(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
  return buf;
}
}  // namespace

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

SweepProgress::SweepProgress(std::ostream& out, bool terminal, std::size_t total, std::size_t reused,
                             double interval_seconds)
    : out_(out), terminal_(terminal), total_(total), reused_(reused), interval_(interval_seconds),
      start_(clock::now()), last_(start_) {}

void SweepProgress::point_done(bool failed) {
  std::lock_guard lock(mutex_);
  ++done_;
  if (failed) ++failed_;
  const double since = std::chrono::duration<double>(clock::now() - last_).count();
  if (since >= (terminal_ ? 0.1 : interval_)) print(false);
}

void SweepProgress::finish() {
  std::lock_guard lock(mutex_);
  print(true);
}

void SweepProgress::print(bool final_line) {
  last_ = clock::now();
  const double elapsed = std::chrono::duration<double>(last_ - start_).count();
  const double eta = done_ == 0 ? 0 : elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
  std::string text = std::to_string(done_) + "/" + std::to_string(total_) + " points";
  if (reused_) text += " (+" + std::to_string(reused_) + " cached)";
  text += ", " + std::to_string(failed_) + " failed, " + seconds_text(elapsed) + " elapsed";
  if (!final_line && done_ < total_) text += ", ETA " + seconds_text(eta);
  if (terminal_) {
    constexpr int kWidth = 30;
    const int filled = total_ == 0 ? kWidth : static_cast<int>(kWidth * done_ / total_);
    out_ << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << text << "   ";
    if (final_line) out_ << "\n";
  } else {
    out_ << "sweep: " << text << "\n";
  }
  out_.flush();
}

std::function<void(const SimulationProgress&)> long_run_progress(std::ostream& out, double after_seconds,
                                                                  double every_seconds) {
  struct State {
    clock::time_point start = clock::now(), last = start;
  };
  auto state = std::make_shared<State>();
  return [&out, state, after_seconds, every_seconds](const SimulationProgress& p) {
    const auto now = clock::now();
    if (std::chrono::duration<double>(now - state->start).count() < after_seconds) return;
    if (state->last != state->start && std::chrono::duration<double>(now - state->last).count() < every_seconds) return;
    state->last = now;
    char buf[160];
    std::snprintf(buf, sizeof buf, "sim: progress: simulated %.3f us, %.1f M events, %llu/%llu nodes done\n",
                  to_us(p.now), static_cast<double>(p.events) / 1e6, static_cast<unsigned long long>(p.nodes_done),
                  static_cast<unsigned long long>(p.nodes_total));
    out << buf << std::flush;
  };
}

}  // namespace sim::workflows
