// A CollectiveOp as text, every field: tests compare two programs' ops with
// it, so a mismatch prints what differs.
#pragma once

#include <sstream>
#include <string>

#include "system/program/collective_program.h"

namespace sim::testing {

inline std::string show(const CollectiveOp& o) {
  std::ostringstream s;
  s << "{kind " << static_cast<int>(o.kind) << " peer " << o.peer << " bytes " << o.bytes << " tag " << o.tag
    << " duration " << o.duration << " channel " << o.channel << " rate " << o.rate << " node " << o.node << " proxy "
    << o.proxy_ns << "}";
  return s.str();
}

}  // namespace sim::testing
