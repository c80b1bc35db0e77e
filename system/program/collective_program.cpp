#include "system/program/collective_program.h"

namespace sim {

std::string CollectiveProgram::label(std::uint32_t pos, OpRef ref) const {
  static const char* const kKind[] = {"send", "recv", "reduce"};
  return name() + "." + kKind[static_cast<int>(op(pos, ref).kind)] + " #" + std::to_string(ref);
}

}  // namespace sim
