// Warnings about unlinked operators stay on one readable line: CUDA kernel
// names (C++ templates) run to hundreds of characters.
#include "workload/pytorch/trace_linker.h"

#include <gtest/gtest.h>

namespace sim::pytorch {
namespace {

TEST(UnlinkedOps, KernelNamesStayOnOneShortLine) {
  Unlinked u;
  const std::string kernel = "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<" +
                             std::string(300, 'x') + ">>(int, T)";
  for (int i = 0; i < 40; ++i) u.add(kernel);
  const std::string s = u.describe("GPU activities with no launching host operator (kept, placed by their launch time)");
  EXPECT_LE(s.size(), 200u) << s;
  EXPECT_EQ(s.rfind("40 GPU activities with no launching host operator", 0), 0u) << s;
  EXPECT_NE(s.find("(first: void at::native::elementwise_kernel<128, 2, a..., void"), std::string::npos) << s;
  EXPECT_EQ(s.substr(s.size() - 6), ", ...)") << s;
}

}  // namespace
}  // namespace sim::pytorch
