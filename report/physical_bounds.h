// Sanity of results against what the hardware can do at all.
//
// Without in-network reduction, every rank of a collective must move at
// least busbw x time bytes through its own ports (the nccl-tests bus bandwidth
// is defined so), so a collective's busbw can never exceed what one NPU can
// inject or eject: the sum of its outgoing (incoming) link bandwidths. A
// result above that bound means the model or its input is wrong (e.g. an
// algorithm ET written for a smaller size than it runs at), and is warned about.
// With in-network reduction (an NPU under a switch marked
// in_network_reduction) an all-reduce's bound is twice that: each rank sends
// its data up once and takes the sum down once.
//
// A link carries at most its bandwidth over the run: the analytical backend,
// which gives every message a link whole, can report more (a gather's
// senders into one port), and that is warned about too.
//
// Likewise a training iteration's model FLOPs per GPU per second can never
// exceed the GPU's peak: an MFU above 100 % means the model FLOPs or the
// iteration time are wrong (a wrapped count, a peak for the wrong dtype).
#pragma once

#include <string>
#include <vector>

#include "network/topology.h"
#include "report/training_report.h"
#include "system/runner/simulation.h"

namespace sim {

// One warning per kind of collective (type, size, group, algorithm) whose
// busbw on some rank exceeds that rank's NPU port bandwidth, and one naming
// the link most over its bandwidth (and how many are) when any is.
std::vector<std::string> physical_bound_warnings(const SimulationResult& result, const Topology& topology);

// One warning when the iteration's model TFLOP/s per GPU exceed the GPU's
// peak (MFU above 100 %); none when the peak is unknown.
std::vector<std::string> training_bound_warnings(const TrainingSummary& summary);

// One warning when an iteration with model FLOPs ran no compute at all: its
// time is communication only, and its model TFLOP/s per GPU (10,000 and more
// on an idle GPU) belong to no GPU.
std::vector<std::string> untimed_compute_warnings(const TrainingSummary& summary);

}  // namespace sim
