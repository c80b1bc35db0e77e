// A measured duration (µs, a JSON number) as the whole microseconds an ET
// node holds, checked against the largest simulated time (core/time.h) at
// import, so a trace that cannot run is refused naming the event instead of
// failing when the simulation reaches it.
#pragma once

#include <cstdint>
#include <string>

namespace sim::pytorch {

// `us` rounded to whole µs. Throws InputError "<where>: field 'dur' is <us>
// us, longer than the largest simulated time ..." when it is negative, not
// finite, or passes kMaxTime once in picoseconds.
std::uint64_t checked_micros(double us, const std::string& where);

}  // namespace sim::pytorch
