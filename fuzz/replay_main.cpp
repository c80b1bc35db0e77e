// The replay driver: without libFuzzer (the normal GCC build), runs each file
// given, or each file below each folder given, through the harness's
// LLVMFuzzerTestOneInput once. ctest uses it to replay the seed corpora and
// the regression inputs in seconds; a harness abort fails the test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path p = argv[i];
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {  // ../shared/testdata may be absent: replay what there is
      std::fprintf(stderr, "replay: skipped (absent): %s\n", argv[i]);
    }
  }
  if (files.empty()) {
    std::printf("replay: no inputs found; skipped\n");
    // For the run's skip summary (scripts/checks/test_summary.py): every input of
    // such a harness is in ../shared/testdata.
    if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && tmp[0] != '\0') {
      const std::string name = fs::path(argv[0]).filename().string();
      std::error_code ec;
      fs::create_directories(fs::path(tmp) / "skips", ec);
      std::ofstream(fs::path(tmp) / "skips" / ("fuzz_" + name)) << "testdata absent: no inputs found\n";
    }
    return 77;
  }
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return 0;
}
