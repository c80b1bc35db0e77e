#include "system/collective_tools.h"

#include "core/error.h"

namespace sim {

int generate_algorithm(const GenOptions&, std::ostream&) { throw InputError("collective gen: not yet implemented"); }
int check_algorithm(const CheckOptions&, std::ostream&) { throw InputError("collective check: not yet implemented"); }

}  // namespace sim
