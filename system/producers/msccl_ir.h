// MSCCL-IR XML, read into memory (one parser for every reader).
//
// The format (msccl-tools' emitter; ../shared/reference/chakra-and-producers.md
// section 4): <algo> holds <gpu id i_chunks o_chunks s_chunks>, each holds
// <tb id send recv chan>, each holds <step s type srcbuf srcoff dstbuf dstoff
// cnt depid deps hasdep>. Two readers use it: the importer
// (system/producers/msccl_import.h), which validates everything and turns it
// into Chakra ETs, and the checker's chunk recovery for ETs that the
// collectiveapi converter wrote (system/producers/msccl_xml_chunks.h), which only looks
// steps up. So parsing checks syntax and attribute types only; what the steps
// mean is checked by the importer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sim {

struct MscclStep {
  std::int64_t s = -1;      // index within the threadblock, nops counted
  std::string type;         // s r rrc rcs rrs rrcs cpy re nop (not checked here)
  std::string srcbuf, dstbuf;  // i o s
  std::int64_t srcoff = -1, dstoff = -1, cnt = -1;
  std::int64_t depid = -1, deps = -1;  // waits for step `deps` of threadblock `depid` (same GPU)
  bool hasdep = false;
  std::uint32_t line = 0;
};

struct MscclThreadblock {
  std::int64_t id = -1, send = -1, recv = -1, chan = 0;
  std::vector<MscclStep> steps;
  std::uint32_t line = 0;
};

struct MscclGpu {
  std::int64_t id = -1;
  std::int64_t i_chunks = 0, o_chunks = 0, s_chunks = 0;
  std::vector<MscclThreadblock> tbs;  // in file order
  std::uint32_t line = 0;
};

struct MscclAlgo {
  std::string file;  // for messages
  std::string name, proto, coll;
  std::int64_t ngpus = -1, nchannels = -1, nchunksperloop = -1;
  std::int64_t inplace = -1;  // -1: not given
  std::vector<MscclGpu> gpus;  // in file order
  std::uint32_t line = 0;
  // "<file>:<line>" for messages.
  std::string at(std::uint32_t line_no) const { return file + ":" + std::to_string(line_no); }
};

// Parses `text` (named `file` in messages). Throws InputError "<file>:<line>:
// ..." for malformed XML, a missing <algo>, or an attribute that is not an
// integer where one is expected.
MscclAlgo parse_msccl_ir(const std::string& text, const std::string& file);

// Reads and parses a file (InputError when it cannot be read).
MscclAlgo load_msccl_ir(const std::string& path);

}  // namespace sim
