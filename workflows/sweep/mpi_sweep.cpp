// The libsim_mpi.so module: the only file that includes <mpi.h>.
#include "workflows/sweep/mpi_sweep.h"

#include <mpi.h>

#include <cstdint>
#include <stdexcept>

namespace sim::workflows {

namespace {

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    int provided = 0;
    // Points run on threads, but only the main thread calls MPI.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCommunicator() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> gather(const std::string& mine) override {
    // Lengths first, then the bytes (one MPI_Gatherv; results are small JSON).
    if (mine.size() > static_cast<std::size_t>(INT32_MAX)) throw std::runtime_error("MPI gather: results too large");
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(rank_ == 0 ? size_ : 0);
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> offsets(lengths.size(), 0);
    long long total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    if (total > INT32_MAX) throw std::runtime_error("MPI gather: results too large");
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (std::size_t r = 0; r < lengths.size(); ++r) out.push_back(all.substr(offsets[r], lengths[r]));
    return out;
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

}  // namespace sim::workflows

extern "C" sim::workflows::Communicator* sim_mpi_communicator() { return new sim::workflows::MpiCommunicator(); }
