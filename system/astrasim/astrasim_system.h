// ASTRA-sim's system JSON (its --system-configuration), read as it is.
//
// Every key ASTRA-sim 2.x reads is honoured (mapped onto SystemConfig) or
// rejected with the reason; keys ASTRA-sim itself ignores are warned about
// (SystemConfig::warnings); any other key is an error (ASTRA-sim would ignore
// a typo silently). The mapping, key by key, is in docs/system.md.
#pragma once

#include <string>

#include "system/config/system_config.h"

namespace sim {

SystemConfig parse_astrasim_system(const std::string& json_text, const std::string& source);

// ASTRA-sim's remote-memory JSON: only {"memory-type": "NO_MEMORY_EXPANSION"}
// is accepted (the other types model remote memory pools this simulator does
// not have); throws InputError with the reason otherwise.
void check_astrasim_remote_memory(const std::string& path);
// The same on text already read; `path` names it in messages.
void check_astrasim_remote_memory_text(const std::string& json_text, const std::string& path);

}  // namespace sim
