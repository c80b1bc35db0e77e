// Ctrl-C (SIGINT) and SIGTERM during a sweep: the first asks the sweep to
// stop taking new points (finished ones are already saved) and write what it
// has; the handler is installed only while a sweep runs.
#pragma once

namespace sim::workflows {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handler
  ~InterruptGuard();  // restores the previous one
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  static bool requested();
  static int signal_number();  // the signal that asked (0: none)
};

}  // namespace sim::workflows
