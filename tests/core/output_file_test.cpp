// OutputFile on every kind of path: regular (new, existing, mode kept),
// symlink, character device, FIFO, "-", folder, read-only folder; and no
// temporary file left behind on success, failure or abandonment.
#include "core/output_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "core/temp_file_registry.h"
#include "../common/temp_folder.h"

namespace sim {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public testing::TempFolderTest {
 protected:
  std::vector<std::string> entries() const { return TempFolderTest::entries(dir_); }
  static mode_t mode_of(const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  }

};

TEST_F(OutputFileTest, NewRegularFileGetsTheUmaskModeAndNoTemporaryStays) {
  const mode_t mask = ::umask(022);
  write_output_file(path("r.json"), "{}\n");
  ::umask(mask);
  EXPECT_EQ(read(path("r.json")), "{}\n");
  EXPECT_EQ(mode_of(path("r.json")), 0644u);
  EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
  EXPECT_EQ(registered_temp_files(), 0);
}

TEST_F(OutputFileTest, ExistingFileKeepsItsMode) {
  std::ofstream(path("r.json")) << "old";
  ::chmod(path("r.json").c_str(), 0600);
  write_output_file(path("r.json"), "new");
  EXPECT_EQ(read(path("r.json")), "new");
  EXPECT_EQ(mode_of(path("r.json")), 0600u);
  ::chmod(path("r.json").c_str(), 0640);
  write_output_file(path("r.json"), "newer");
  EXPECT_EQ(mode_of(path("r.json")), 0640u);
}

TEST_F(OutputFileTest, ExistingFileKeepsItsOwnerWhenRootCanGiveItAway) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can make a file owned by someone else";
  std::ofstream(path("r.json")) << "old";
  ASSERT_EQ(::chown(path("r.json").c_str(), 65534, 65534), 0);
  write_output_file(path("r.json"), "new");
  struct stat st {};
  ASSERT_EQ(::stat(path("r.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
}

TEST_F(OutputFileTest, ReaderNeverSeesHalfAFile) {
  std::ofstream(path("r.json")) << "old";
  OutputFile out(path("r.json"));
  out.write("new");
  out.stream().flush();
  EXPECT_EQ(read(path("r.json")), "old");  // until commit
  EXPECT_EQ(entries().size(), 2u);         // r.json and the hidden temporary file
  out.commit();
  EXPECT_EQ(read(path("r.json")), "new");
  EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
}

TEST_F(OutputFileTest, AbandonedOutputLeavesTheOldFileAndNoTemporary) {
  std::ofstream(path("r.json")) << "old";
  {
    OutputFile out(path("r.json"));
    out.write("half");
    EXPECT_EQ(registered_temp_files(), 1);
  }  // an error before commit: the destructor cleans up
  EXPECT_EQ(read(path("r.json")), "old");
  EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
  EXPECT_EQ(registered_temp_files(), 0);
}

TEST_F(OutputFileTest, SymlinkIsFollowedAndStays) {
  fs::create_directories(dir_ / "real");
  std::ofstream(path("real/target.json")) << "old";
  ::chmod(path("real/target.json").c_str(), 0600);
  fs::create_symlink("real/target.json", dir_ / "link.json");  // relative to the link's folder
  write_output_file(path("link.json"), "new");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.json"));
  EXPECT_EQ(read(path("real/target.json")), "new");
  EXPECT_EQ(mode_of(path("real/target.json")), 0600u);
  EXPECT_EQ(entries(), (std::vector<std::string>{"link.json", "real"}));
  // A chain of links, and a dangling one whose target is created.
  fs::create_symlink(dir_ / "link.json", dir_ / "link2.json");
  write_output_file(path("link2.json"), "newer");
  EXPECT_EQ(read(path("real/target.json")), "newer");
  fs::create_symlink("real/absent.json", dir_ / "dangling.json");
  write_output_file(path("dangling.json"), "made");
  EXPECT_TRUE(fs::is_symlink(dir_ / "dangling.json"));
  EXPECT_EQ(read(path("real/absent.json")), "made");
}

TEST_F(OutputFileTest, CharacterDeviceIsWrittenNotReplaced) {
  // /dev/null itself: replacing it would break the machine, so this is the check that matters.
  struct stat before {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  ASSERT_TRUE(S_ISCHR(before.st_mode));
  OutputFile out("/dev/null");
  EXPECT_TRUE(out.direct());
  out.write("discarded");
  out.commit();
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_rdev, before.st_rdev);
  EXPECT_EQ(after.st_mode, before.st_mode);
  // Through a symlink too.
  fs::create_symlink("/dev/null", dir_ / "null");
  write_output_file(path("null"), "x");
  EXPECT_TRUE(fs::is_symlink(dir_ / "null"));
  EXPECT_EQ(registered_temp_files(), 0);
}

TEST_F(OutputFileTest, FifoReaderGetsTheOutput) {
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read(path("pipe")); });
  write_output_file(path("pipe"), std::string(1 << 20, 'x') + "end");  // more than a pipe buffer
  reader.join();
  EXPECT_EQ(received.size(), (1u << 20) + 3);
  EXPECT_EQ(received.substr(received.size() - 3), "end");
  struct stat st {};
  ASSERT_EQ(::lstat(path("pipe").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(entries(), std::vector<std::string>{"pipe"});
}

TEST_F(OutputFileTest, DashIsStandardOutput) {
  // Point fd 1 at a file for the duration of the write.
  const int saved = ::dup(STDOUT_FILENO);
  const int fd = ::open(path("captured").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  fflush(stdout);
  ::dup2(fd, STDOUT_FILENO);
  ::close(fd);
  {
    OutputFile out("-");
    out.write("to stdout\n");
    out.commit();
  }
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  EXPECT_EQ(read(path("captured")), "to stdout\n");
  EXPECT_FALSE(fs::exists("-"));
}

// `sim --report /dev/stdout >> log`: the shell's file gets the report
// appended through descriptor 1; it is not replaced by a new file.
TEST_F(OutputFileTest, DevStdoutIsTheDescriptorEvenWhenItIsAFile) {
  std::ofstream(path("log")) << "earlier line\n";
  struct stat before {};
  ASSERT_EQ(::stat(path("log").c_str(), &before), 0);
  const int saved = ::dup(STDOUT_FILENO);
  const int fd = ::open(path("log").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  fflush(stdout);
  ::dup2(fd, STDOUT_FILENO);
  ::close(fd);
  write_output_file("/dev/stdout", "report\n");
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  struct stat after {};
  ASSERT_EQ(::stat(path("log").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(read(path("log")), "earlier line\nreport\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"log"});
}

TEST_F(OutputFileTest, FolderAndMissingFolderAreRefusedWithTheirPath) {
  try {
    OutputFile out(dir_.string());
    FAIL() << "a folder was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a folder"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(dir_.string()), std::string::npos) << e.what();
  }
  try {
    OutputFile out(path("absent/r.json"));
    FAIL() << "a missing folder was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST_F(OutputFileTest, SocketIsRefused) {
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path("sock");
  if (p.size() >= sizeof addr.sun_path) GTEST_SKIP() << "temporary folder path too long for a socket";
  std::strcpy(addr.sun_path, p.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_THROW(OutputFile out(p), InputError);
  ::close(s);
}

// Root ignores folder permissions, so the check runs in a child process that
// has given up root (setuid to "nobody") when the test runs as root.
TEST_F(OutputFileTest, ReadOnlyFolderIsExit2WithAClearMessage) {
  fs::create_directories(dir_ / "ro");
  std::ofstream(path("ro/r.json")) << "old";
  ::chmod(path("ro").c_str(), 0555);
  ::chmod(dir_.c_str(), 0755);
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipefd[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(10);
    int code = 11;  // accepted: wrong
    std::string message;
    try {
      write_output_file(path("ro/r.json"), "new");
    } catch (const InputError& e) {
      code = e.exit_code();
      message = e.what();
    }
    (void)!::write(pipefd[1], message.data(), message.size());
    ::_exit(code);
  }
  ::close(pipefd[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;) message.append(buf, static_cast<std::size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_NE(WEXITSTATUS(status), 10) << "could not give up root to test folder permissions";
  EXPECT_EQ(WEXITSTATUS(status), kExitBadInput) << message;
  EXPECT_NE(message.find("cannot create a file in folder"), std::string::npos) << message;
  EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
  EXPECT_NE(message.find("ro/r.json"), std::string::npos) << message;
  EXPECT_EQ(read(path("ro/r.json")), "old");
}

}  // namespace
}  // namespace sim
