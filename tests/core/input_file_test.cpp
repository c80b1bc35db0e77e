#include "core/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace sim {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("input_file_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

TEST(FileBuffer, ReadsFilesOneAfterAnotherIntoOneBuffer) {
  const fs::path d = temp_dir();
  write(d / "big", std::string(1000, 'x') + "end");
  write(d / "small", "abc");
  write(d / "empty", "");
  FileBuffer buffer;
  EXPECT_EQ(buffer.read((d / "big").string(), "trace", 1 << 20), std::string(1000, 'x') + "end");
  const std::size_t room = buffer.capacity();
  EXPECT_EQ(buffer.read((d / "small").string(), "trace", 1 << 20), "abc");
  EXPECT_EQ(buffer.capacity(), room);  // the smaller file reuses the room
  EXPECT_EQ(buffer.read((d / "empty").string(), "trace", 1 << 20), "");
  buffer.release();
  EXPECT_EQ(buffer.capacity(), 0u);
  EXPECT_EQ(buffer.read((d / "small").string(), "trace", 1 << 20), "abc");
  fs::remove_all(d);
}

TEST(FileBuffer, RefusesWhatReadInputFileRefusesWithTheSameMessage) {
  const fs::path d = temp_dir();
  write(d / "four", "1234");
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  FileBuffer buffer;
  for (const fs::path& p : {d, d / "absent", d / "fifo", d / "four"}) {
    std::string expected, got;
    try {
      read_input_file(p.string(), "trace", 3);
    } catch (const InputError& e) {
      expected = e.what();
    }
    try {
      buffer.read(p.string(), "trace", 3);
    } catch (const InputError& e) {
      got = e.what();
    }
    EXPECT_FALSE(expected.empty()) << p;
    EXPECT_EQ(got, expected) << p;
  }
  fs::remove_all(d);
}

// read_sized trusts a size only while the file still has it: a file that grew
// or shrank since its stat, or is gone or a FIFO, reads (or is refused) as
// with read().
TEST(FileBuffer, ReadSizedReadsTheFileAsItIsNow) {
  const fs::path d = temp_dir();
  write(d / "f", "0123456789");
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  FileBuffer buffer;
  const std::string f = (d / "f").string();
  EXPECT_EQ(buffer.read_sized(f, "trace", 1 << 20, 10), "0123456789");
  EXPECT_EQ(buffer.read_sized(f, "trace", 1 << 20, 4), "0123456789");   // grew since the stat
  EXPECT_EQ(buffer.read_sized(f, "trace", 1 << 20, 30), "0123456789");  // shrank since
  write(d / "e", "");
  EXPECT_EQ(buffer.read_sized((d / "e").string(), "trace", 1 << 20, 0), "");
  for (const fs::path& p : {d / "absent", d / "fifo", d / "f"}) {
    std::string expected, got;
    try {
      buffer.read(p.string(), "trace", 3);
    } catch (const InputError& e) {
      expected = e.what();
    }
    try {
      buffer.read_sized(p.string(), "trace", 3, 2);
    } catch (const InputError& e) {
      got = e.what();
    }
    EXPECT_FALSE(expected.empty()) << p;
    EXPECT_EQ(got, expected) << p;
  }
  fs::remove_all(d);
}

}  // namespace
}  // namespace sim
