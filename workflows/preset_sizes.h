// A preset at each size a reference's rows ask for: `sim calibrate --preset`
// and `sim compare --preset` simulate every row of a curve that covers several
// node counts (2, 4, ... 32 nodes of p5 in one file) on the preset generated
// at that row's node count, the files `sim system gen NAME --nodes N` writes,
// made in memory once per node count.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "presets/preset.h"
#include "workflows/curve_table.h"

namespace sim::workflows {

// One size of a preset: the three texts `sim system gen NAME --nodes N`
// writes, and names for them in messages ("p5 --nodes 2: network.yml").
struct SizedSystem {
  std::uint32_t nodes = 0, npus = 0;
  std::string network_text, system_text, calibration_text;
  std::string network_source, system_source, calibration_source;
};

// The most nodes a row may ask for: what `sim system gen --nodes` takes.
inline constexpr std::uint32_t kMaxPresetNodes = 1u << 16;

// The node count `p` asks for on `preset`: its `nodes` column, else its rank
// count (`ranks` of a reference-curve CSV, `npus` of a sim results CSV, the
// ranks of nccl-tests output) divided by the preset's GPUs per node. Throws
// InputError naming the row's line when the count is not a whole number from
// 1 to kMaxPresetNodes, the ranks are not a whole number of nodes, the two
// columns disagree, or the row has neither.
std::uint32_t row_nodes(const CurvePoint& p, const presets::Preset& preset);

// Generates each node count's files once and keeps them.
class PresetSizes {
 public:
  explicit PresetSizes(const presets::Preset& preset) : preset_(preset) {}
  // The preset on `nodes` nodes; an InputError starting with `where` when
  // the preset cannot be built so (a level's radix, docs/presets.md).
  const SizedSystem& at(std::uint32_t nodes, const std::string& where);
  const presets::Preset& preset() const { return preset_; }

 private:
  const presets::Preset& preset_;
  std::map<std::uint32_t, SizedSystem> sizes_;
};

}  // namespace sim::workflows
