// Linked into every test binary.
//
// Temporary files: GoogleTest's TempDir() reads TEST_TMPDIR, while
// std::filesystem::temp_directory_path(), mktemp and `sim` read TMPDIR.
// ctest sets TMPDIR to the build tree's test-tmp (tests/CMakeLists.txt); this
// makes TempDir() agree, so no test writes to /tmp.
//
// Skips: each skipped test leaves its message in $TMPDIR/skips/<test> for the
// run's last line (scripts/checks/test_summary.py), which says how many skipped and
// why, and fails a CI run that skipped for want of ../shared/testdata while
// it was there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

class SkipRecorder : public ::testing::EmptyTestEventListener {
 public:
  explicit SkipRecorder(std::filesystem::path dir) : dir_(std::move(dir)) {}
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const ::testing::TestResult* result = info.result();
    if (result == nullptr || !result->Skipped()) return;
    std::string message;
    for (int i = 0; i < result->total_part_count(); ++i) {
      const auto& part = result->GetTestPartResult(i);
      if (part.skipped() && part.message() != nullptr) message += part.message();
    }
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    std::ofstream(dir_ / (std::string(info.test_suite_name()) + "." + info.name())) << message << "\n";
  }

 private:
  std::filesystem::path dir_;
};

const bool kTestEnvironment = [] {
  const char* tmp = std::getenv("TMPDIR");
  if (tmp != nullptr && tmp[0] != '\0') {
    ::setenv("TEST_TMPDIR", tmp, /*overwrite=*/0);
    ::testing::UnitTest::GetInstance()->listeners().Append(new SkipRecorder(std::filesystem::path(tmp) / "skips"));
  }
  return true;
}();

}  // namespace
