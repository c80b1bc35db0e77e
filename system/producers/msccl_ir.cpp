#include "system/producers/msccl_ir.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <pugixml.hpp>

#include "core/error.h"

namespace sim {

namespace {

// Byte offsets -> 1-based line numbers (pugixml reports offsets). Nodes are
// asked for in document order, so a lookup first walks on from the previous
// answer: linear in the file's lines overall, where a binary search per step
// cost a log factor on files with thousands of steps.
class Lines {
 public:
  explicit Lines(const std::string& text) {
    for (std::size_t i = text.find('\n'); i != std::string::npos; i = text.find('\n', i + 1)) breaks_.push_back(i);
  }
  std::uint32_t of(std::ptrdiff_t offset) const {
    if (offset < 0) return 0;
    const auto at = static_cast<std::size_t>(offset);
    // breaks_[0, hint_) lie before the previous offset asked for.
    if (hint_ > 0 && breaks_[hint_ - 1] >= at) {
      hint_ = static_cast<std::size_t>(std::lower_bound(breaks_.begin(), breaks_.end(), at) - breaks_.begin());
    } else {
      while (hint_ < breaks_.size() && breaks_[hint_] < at) ++hint_;
    }
    return static_cast<std::uint32_t>(hint_) + 1;
  }

 private:
  std::vector<std::size_t> breaks_;
  mutable std::size_t hint_ = 0;
};

class Reader {
 public:
  Reader(const std::string& file, const Lines& lines) : file_(file), lines_(lines) {}

  std::uint32_t line(const pugi::xml_node& n) const { return lines_.of(n.offset_debug()); }

  // An integer attribute, or `fallback` when absent; anything else is an error.
  std::int64_t integer(const pugi::xml_node& n, const char* name, std::int64_t fallback) const {
    const pugi::xml_attribute a = n.attribute(name);
    if (!a) return fallback;
    const std::string_view v = a.value();
    std::int64_t out = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || end != v.data() + v.size()) {
      throw InputError(file_ + ":" + std::to_string(line(n)) + ": <" + n.name() + "> attribute " + name + "=\"" +
                       std::string(v) + "\" is not an integer");
    }
    return out;
  }

 private:
  const std::string& file_;
  const Lines& lines_;
};

MscclStep read_step(const Reader& rd, const pugi::xml_node& n) {
  MscclStep st;
  st.line = rd.line(n);
  st.s = rd.integer(n, "s", -1);
  st.type = n.attribute("type").value();
  st.srcbuf = n.attribute("srcbuf").value();
  st.dstbuf = n.attribute("dstbuf").value();
  st.srcoff = rd.integer(n, "srcoff", -1);
  st.dstoff = rd.integer(n, "dstoff", -1);
  st.cnt = rd.integer(n, "cnt", -1);
  st.depid = rd.integer(n, "depid", -1);
  st.deps = rd.integer(n, "deps", -1);
  st.hasdep = rd.integer(n, "hasdep", 0) != 0;
  return st;
}

}  // namespace

MscclAlgo parse_msccl_ir(const std::string& text, const std::string& file) {
  const Lines lines(text);
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size());
  if (!parsed) {
    throw InputError(file + ":" + std::to_string(lines.of(parsed.offset)) + ": malformed XML (" +
                     parsed.description() + ")");
  }
  const pugi::xml_node root = doc.child("algo");
  if (!root) throw InputError(file + ": not MSCCL-IR XML (no <algo> element)");
  const Reader rd(file, lines);
  MscclAlgo algo;
  algo.file = file;
  algo.line = rd.line(root);
  algo.name = root.attribute("name").value();
  algo.proto = root.attribute("proto").value();
  algo.coll = root.attribute("coll").value();
  algo.ngpus = rd.integer(root, "ngpus", -1);
  algo.nchannels = rd.integer(root, "nchannels", -1);
  algo.nchunksperloop = rd.integer(root, "nchunksperloop", -1);
  algo.inplace = rd.integer(root, "inplace", -1);
  for (const pugi::xml_node g : root.children("gpu")) {
    MscclGpu& gpu = algo.gpus.emplace_back();
    gpu.line = rd.line(g);
    gpu.id = rd.integer(g, "id", -1);
    gpu.i_chunks = rd.integer(g, "i_chunks", 0);
    gpu.o_chunks = rd.integer(g, "o_chunks", 0);
    gpu.s_chunks = rd.integer(g, "s_chunks", 0);
    for (const pugi::xml_node t : g.children("tb")) {
      MscclThreadblock& tb = gpu.tbs.emplace_back();
      tb.line = rd.line(t);
      tb.id = rd.integer(t, "id", -1);
      tb.send = rd.integer(t, "send", -1);
      tb.recv = rd.integer(t, "recv", -1);
      tb.chan = rd.integer(t, "chan", 0);
      for (const pugi::xml_node s : t.children("step")) tb.steps.push_back(read_step(rd, s));
    }
  }
  return algo;
}

MscclAlgo load_msccl_ir(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open MSCCL-IR XML '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_msccl_ir(ss.str(), path);
}

}  // namespace sim
