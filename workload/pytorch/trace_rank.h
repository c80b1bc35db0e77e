// Which rank a trace file is. One rule for host and device traces:
//  1. the rank the file records wins: a Kineto trace's distributedInfo.rank
//     (host execution traces record none);
//  2. else its name, when the name says it unambiguously: "rank<N>" (also
//     rank_<N>, rank-<N>, any case), or, without such a marker, the name's
//     only number (".json" / ".json.gz" aside). PyTorch's default profiler
//     name <host>_<pid>.<ts>.pt.trace.json.gz holds several numbers: no rank;
//  3. a host trace whose name states none is the rank of the device trace of
//     its process (equal "pid"), when device traces are given;
//  4. a file whose name rank contradicts its recorded rank is an error, as
//     are two files of one rank (both named) and a file with no rank.
// One file alone (per option) with no recorded rank is rank 0 whatever its name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sim::pytorch {

// The rank a file name states (rule 2), -1 when none or ambiguous.
int rank_in_name(const std::string& path);

// distributedInfo.rank of a Kineto trace, -1 when it records none. Reads the
// trace's head (the field precedes traceEvents); reads the whole file only
// when the head ends before both.
int recorded_rank(const std::string& kineto_path);

// The process a trace is of: a host trace's top-level "pid" (from its head,
// where PyTorch writes it; else from the whole file); a Kineto trace's first
// host operator's (cpu_op, user_annotation) "pid" in its head (GPU events
// carry the device there). -1 when the trace does not say.
std::int64_t trace_pid(const std::string& path, bool kineto);

// file -> rank for the files of one option ("--host-et", "--kineto"), ranks
// 0..N-1 each once, by the rule above. `kineto`: the files are device traces
// (their recorded ranks are read). Throws InputError naming the option and files.
// `rank_of_pid` (host traces): the device traces' ranks by process, for rule 3.
std::map<int, std::string> ranks_of_files(const std::vector<std::string>& files, bool kineto, const char* option,
                                          const std::map<std::int64_t, int>& rank_of_pid = {});

}  // namespace sim::pytorch
