// pytorch:DIR: PyTorch host (and Kineto) traces, imported rank by rank in memory.
#include "core/error.h"
#include "workload/pytorch/pytorch_workload.h"
#include "workload/source/scheme_sources.h"

namespace sim::source {
namespace {

class PytorchSource final : public WorkloadSource {
 public:
  explicit PytorchSource(const std::string& text) : WorkloadSource(text) {
    if (text.size() == pytorch::kWorkloadScheme.size()) {
      throw InputError("--workload pytorch: needs a folder, e.g. pytorch:traces/ddp4");
    }
  }

  std::string_view scheme() const override { return "pytorch"; }
  // The importer links ranks' groups across traces, so it runs on one thread.
  std::vector<RankGraph> graphs(const GraphOptions& options, unsigned /*threads*/) const override {
    return pytorch::load_pytorch_graphs(text(), options);
  }
};

}  // namespace

std::shared_ptr<const WorkloadSource> open_pytorch(const std::string& text) {
  return std::make_shared<const PytorchSource>(text);
}

}  // namespace sim::source
