#include "core/temp_file_registry.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "core/error.h"

namespace sim {

namespace {

// A fixed table: a signal handler may neither allocate nor take locks, so
// paths are copied into static storage and published with an atomic state.
constexpr int kSlots = 64;
enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};

Slot g_slots[kSlots];
// SIGABRT covers std::terminate and failed assertions. Faults (SIGSEGV...)
// are left to the default action and to sanitizers, which handle them.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGABRT};

void unlink_all_and_reraise(int sig) {
  const int saved_errno = errno;
  for (Slot& s : g_slots) {
    if (s.state.load(std::memory_order_acquire) == kLive) ::unlink(s.path);
  }
  // Default action, then re-raise: the signal is blocked while this handler
  // runs, so it is delivered (and ends the process) as the handler returns.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
  errno = saved_errno;
}

void install_handlers() {
  for (const int sig : kSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    struct sigaction act {};
    act.sa_handler = &unlink_all_and_reraise;
    sigfillset(&act.sa_mask);  // no second handler runs halfway through the first
    act.sa_flags = 0;
    ::sigaction(sig, &act, nullptr);
  }
}

}  // namespace

void install_temp_file_cleanup() {
  static std::once_flag installed;
  std::call_once(installed, install_handlers);
}

int register_temp_file(const std::string& path) {
  install_temp_file_cleanup();
  if (path.size() >= PATH_MAX) throw InputError("output path too long: '" + path + "'");
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kLive, std::memory_order_release);
    return i;
  }
  throw InputError("cannot write '" + path + "': more than " + std::to_string(kSlots) +
                   " output files open at once");
}

void unregister_temp_file(int slot) {
  if (slot >= 0 && slot < kSlots) g_slots[slot].state.store(kFree, std::memory_order_release);
}

int registered_temp_files() {
  int n = 0;
  for (const Slot& s : g_slots) n += s.state.load(std::memory_order_acquire) == kLive;
  return n;
}

}  // namespace sim
