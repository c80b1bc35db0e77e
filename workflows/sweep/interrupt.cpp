#include "workflows/sweep/interrupt.h"

#include <csignal>

namespace sim::workflows {

namespace {
// A signal handler may only touch lock-free atomics / sig_atomic_t.
volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_old_int, g_old_term;

void on_signal(int sig) { g_signal = sig; }
}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

bool InterruptGuard::requested() { return g_signal != 0; }
int InterruptGuard::signal_number() { return g_signal; }

}  // namespace sim::workflows
