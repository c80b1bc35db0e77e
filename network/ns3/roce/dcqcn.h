// DCQCN's reaction point: one queue pair's sending rate (Zhu et al.,
// "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015,
// section 3.1, the RP algorithm). Plain arithmetic: the caller runs the
// rate-increase timer T and says when CNPs arrive and bytes leave. Alpha's
// timer K is not run as events: the decay owed for every K without a CNP is
// applied when the next CNP comes, which gives the same alpha at every cut.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/time.h"
#include "network/ns3/ns3_options.h"

namespace sim {

class DcqcnRate {
 public:
  DcqcnRate(const RoceOptions& o, BytesPerSecond line_rate)
      : o_(&o), line_(static_cast<double>(line_rate)), current_(line_), target_(line_) {}

  double rate() const { return current_; }  // bytes per second
  bool at_line_rate() const { return current_ >= line_ && target_ >= line_; }
  double alpha() const { return alpha_; }

  // A CNP arrived at `now`: decay alpha for the periods K without one, then
  // remember the rate as the target, cut by alpha/2, raise alpha, and start
  // the increase stages over.
  void on_cnp(Time now) {
    if (last_cnp_ >= 0) alpha_ *= std::pow(1 - o_->g, static_cast<double>((now - last_cnp_) / o_->alpha_timer));
    last_cnp_ = now;
    // Cuts with no increase between them keep the target: the rate the
    // queue pair had before the congestion is what recovery heads back to
    // (ConnectX's clamp_tgt_rate 0; HPCC's simulator's ClampTargetRate false).
    if (increased_since_cut_) target_ = current_;
    increased_since_cut_ = false;
    current_ = std::max(static_cast<double>(o_->min_rate), current_ * (1 - alpha_ / 2));
    alpha_ = (1 - o_->g) * alpha_ + o_->g;
    timer_events_ = byte_events_ = 0;
    bytes_ = 0;
  }
  // The rate-increase timer (T) expired.
  void on_rate_timer() {
    ++timer_events_;
    increase();
  }
  // `bytes` more were sent; every byte_counter bytes is an increase event.
  void on_sent(std::uint64_t bytes) {
    if (at_line_rate()) return;
    bytes_ += bytes;
    while (bytes_ >= o_->byte_counter) {
      bytes_ -= o_->byte_counter;
      ++byte_events_;
      increase();
    }
  }

 private:
  // Fast recovery while both counters are below F, then additive increase of
  // the target while one is, hyper increase once both are; the current rate
  // moves half way to the target each time.
  void increase() {
    const std::uint32_t f = o_->fast_recovery_steps;
    const std::uint32_t hi = std::max(timer_events_, byte_events_), lo = std::min(timer_events_, byte_events_);
    if (hi >= f && lo >= f) {
      target_ += static_cast<double>(lo - f + 1) * static_cast<double>(o_->rate_hai);
    } else if (hi >= f) {
      target_ += static_cast<double>(o_->rate_ai);
    }
    target_ = std::min(target_, line_);
    current_ = std::min(line_, (target_ + current_) / 2);
    increased_since_cut_ = true;
  }

  const RoceOptions* o_;
  double line_, current_, target_;
  double alpha_ = 1.0;  // the paper's initial alpha
  Time last_cnp_ = -1;
  bool increased_since_cut_ = true;
  std::uint32_t timer_events_ = 0, byte_events_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace sim
