// Temporary output files the process must not leave behind, even when a
// signal (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGABRT) ends it.
//
// Registering the first file installs handlers for those signals. A handler
// unlinks every registered file using only async-signal-safe calls, restores
// the default action and re-raises the signal, so the process ends "killed by
// SIGINT/SIGTERM" as a caller expects (a shell reports 130 / 143). A signal
// the process ignored when the first file was registered (e.g. SIGINT under
// nohup) stays ignored.
#pragma once

#include <string>

namespace sim {

// Remembers `path` (absolute or relative to the current folder, which the
// process does not change) until unregister_temp_file. Returns a slot id.
// Throws InputError when too many temporary files are open at once.
int register_temp_file(const std::string& path);
void unregister_temp_file(int slot);

// Installs the handlers now (idempotent). `sim` calls it first thing, so a
// command that catches SIGINT/SIGTERM itself for a while (a sweep finishing
// its running points, workflows/sweep/interrupt.h) overrides them and restores
// them after, rather than being overridden by the first file it writes.
void install_temp_file_cleanup();

// How many temporary files are registered now (for tests).
int registered_temp_files();

}  // namespace sim
