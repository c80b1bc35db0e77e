// NCCL's algorithms and protocols as the indices of its tuning tables and the
// values of nccl::Params' "algo" and "proto".
#pragma once

#include "system/collectives/nccl/model/nccl_tuner.h"

namespace sim::testing {

inline constexpr int kTree = static_cast<int>(nccl::Algo::kTree);
inline constexpr int kRing = static_cast<int>(nccl::Algo::kRing);
inline constexpr int kNvls = static_cast<int>(nccl::Algo::kNvls);
inline constexpr int kNvlsTree = static_cast<int>(nccl::Algo::kNvlsTree);
inline constexpr int kLL = static_cast<int>(nccl::Proto::kLL);
inline constexpr int kLL128 = static_cast<int>(nccl::Proto::kLL128);
inline constexpr int kSimple = static_cast<int>(nccl::Proto::kSimple);

}  // namespace sim::testing
