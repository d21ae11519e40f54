#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <sys/wait.h>

#include <array>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/write_temp.h"
#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using report_fixture::ListDir;
using report_fixture::MakeTempDir;
using report_fixture::ReadFile;

mode_t TypeOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

std::string LinkText(const std::string& path) {
  std::array<char, 4096> buffer{};
  const ssize_t n = ::readlink(path.c_str(), buffer.data(), buffer.size());
  return n < 0 ? "" : std::string(buffer.data(), static_cast<std::size_t>(n));
}

class WriteFileAtomicallyTest : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A null device (1:3, as /dev/null) made in the temp dir: tests never touch /dev itself.
  // Empty when this process may not make or use device nodes (not root, a nodev mount).
  std::string MakeNullDevice(const std::string& name) {
    const std::string path = dir_ + "/" + name;
    struct statvfs vfs {};
    if (::statvfs(dir_.c_str(), &vfs) == 0 && (vfs.f_flag & ST_NODEV)) return "";
    if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) return "";
    return path;
  }
  std::string dir_ = MakeTempDir();
};

#define NULL_DEVICE_OR_SKIP(var, name)                                             \
  const std::string var = MakeNullDevice(name);                                   \
  if (var.empty()) GTEST_SKIP() << "cannot mknod a usable device in " << dir_      \
                                << " (needs root and a mount without nodev)"

// Sets the umask for one test and puts the old one back.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

TEST_F(WriteFileAtomicallyTest, ANewFileGetsTheContentsAndWhatTheUmaskAllows) {
  const std::string path = dir_ + "/report.json";
  {
    ScopedUmask mask(077);
    ASSERT_TRUE(WriteFileAtomically(path, std::string("a\0b", 3)).ok());
  }
  EXPECT_EQ(ReadFile(path), std::string("a\0b", 3));
  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_THAT(ListDir(dir_), ElementsAre("report.json"));  // no temp file left behind
  const std::string other = dir_ + "/other.json";
  {
    ScopedUmask mask(022);
    ASSERT_TRUE(WriteFileAtomically(other, "x").ok());
  }
  EXPECT_EQ(ModeOf(other), 0644u);
}

TEST_F(WriteFileAtomicallyTest, AFixedModeIsExactWhateverTheUmask) {
  const std::string path = dir_ + "/owner.json";
  ScopedUmask mask(0);
  ASSERT_TRUE(WriteFileAtomically(path, "x", {.mode = 0600}).ok());
  EXPECT_EQ(ModeOf(path), 0600u);
}

TEST_F(WriteFileAtomicallyTest, AnExistingFileKeepsItsModeAndGroupAndGetsANewInode) {
  const std::string path = dir_ + "/report.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  // A group of the file that is not this process's own (root may give any).
  const gid_t group = ::geteuid() == 0 ? 65534 : ::getegid();
  ASSERT_EQ(::chown(path.c_str(), -1, group), 0);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  ScopedUmask mask(0);
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(ReadFile(path), "new");
  EXPECT_EQ(after.st_mode & 07777, 0640u);
  EXPECT_EQ(after.st_gid, group);
  EXPECT_EQ(after.st_uid, ::geteuid());
  EXPECT_NE(after.st_ino, before.st_ino);  // replaced, never rewritten in place
}

TEST_F(WriteFileAtomicallyTest, AnotherUsersFileIsRefusedAndLeftAsItWas) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a file of another uid";
  const std::string path = dir_ + "/theirs.json";
  ASSERT_TRUE(WriteFileAtomically(path, "theirs").ok());
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  const Status status = WriteFileAtomically(path, "root's");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("owned by uid 65534"));
  EXPECT_EQ(ReadFile(path), "theirs");
  EXPECT_THAT(ListDir(dir_), ElementsAre("theirs.json"));
  // And before the run: a usage error.
  const Status checked = CheckReportOutputs({{"--json", path}});
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.message(), HasSubstr("--json " + path));
  EXPECT_THAT(checked.message(), HasSubstr("owned by uid 65534"));
}

// A pid that ran and is gone (its start time is never 1 tick).
WriterId DeadWriter() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return WriterId{child, 1};
}

TEST_F(WriteFileAtomicallyTest, ADeadWritersTempOfTheSameTargetIsRemovedByTheNextWrite) {
  const WriterId dead = DeadWriter();
  const WriterId self = *ThisWriter();
  auto temp = [](const std::string& target, WriterId w) {
    return fmt::format(".{}.sandprobe-tmp.{}.{}.0123456789ab", target, w.pid, w.start_ticks);
  };
  const std::string dead_temp = temp("report.json", dead), live_temp = temp("report.json", self);
  const std::string other_target = temp("other.json", dead), dead_link = temp("report.json", {dead.pid, 2});
  for (const std::string& name : {dead_temp, live_temp, other_target}) {
    std::ofstream(dir_ + "/" + name) << "partial";
  }
  ASSERT_EQ(::symlink("/etc/hostname", (dir_ + "/" + dead_link).c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/report.json", "whole").ok());
  EXPECT_THAT(ListDir(dir_), ::testing::UnorderedElementsAre("report.json", live_temp, other_target, dead_link));
}

TEST_F(WriteFileAtomicallyTest, ReplacesAnExistingFile) {
  const std::string path = dir_ + "/report.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old, and longer than the new one").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  EXPECT_EQ(ReadFile(path), "new");
}

TEST_F(WriteFileAtomicallyTest, MissingDirectoryIsAnErrorNamingThePath) {
  const std::string path = dir_ + "/no/such/dir/report.json";
  const Status status = WriteFileAtomically(path, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("\"" + path + "\""));
  EXPECT_THAT(status.message(), HasSubstr("ENOENT"));
  EXPECT_TRUE(ListDir(dir_).empty());
}

TEST_F(WriteFileAtomicallyTest, DirectoryIsRefusedAndNoTempFileIsLeft) {
  const std::string path = dir_ + "/taken";
  ASSERT_TRUE(std::filesystem::create_directory(path));
  const Status status = WriteFileAtomically(path, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("EISDIR"));
  EXPECT_THAT(status.message(), HasSubstr("\"" + path + "\""));
  EXPECT_THAT(ListDir(dir_), ElementsAre("taken"));
  EXPECT_EQ(TypeOf(path), S_IFDIR);
}

TEST_F(WriteFileAtomicallyTest, NeverRenamesOverASymlink) {
  const std::string real = dir_ + "/real.json", link = dir_ + "/link.json";
  ASSERT_TRUE(WriteFileAtomically(real, "real").ok());
  ASSERT_EQ(::symlink("real.json", link.c_str()), 0);
  const Status status = WriteFileAtomically(link, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("refusing to replace"));
  EXPECT_EQ(TypeOf(link), S_IFLNK);
  EXPECT_EQ(ReadFile(real), "real");
  EXPECT_THAT(ListDir(dir_), ElementsAre("link.json", "real.json"));
}

TEST_F(WriteFileAtomicallyTest, NeverRenamesOverADevice) {
  NULL_DEVICE_OR_SKIP(device, "null");
  const Status status = WriteFileAtomically(device, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("refusing to replace"));
  EXPECT_EQ(TypeOf(device), S_IFCHR);
  EXPECT_THAT(ListDir(dir_), ElementsAre("null"));
}

TEST_F(WriteFileAtomicallyTest, PathWithoutFileNameIsAnError) {
  const Status status = WriteFileAtomically(dir_ + "/", "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("not a file name"));
}

// --- WriteReportOutput: what a --json/--junit path leads to ---

using ReportOutputTest = WriteFileAtomicallyTest;

TEST_F(ReportOutputTest, MissingFileIsCreated) {
  const std::string path = dir_ + "/r.json";
  ASSERT_TRUE(WriteReportOutput(path, "new").ok());
  EXPECT_EQ(ReadFile(path), "new");
  EXPECT_EQ(TypeOf(path), S_IFREG);
}

TEST_F(ReportOutputTest, RegularFileIsReplaced) {
  const std::string path = dir_ + "/r.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old and longer").ok());
  ASSERT_TRUE(WriteReportOutput(path, "new").ok());
  EXPECT_EQ(ReadFile(path), "new");
  EXPECT_THAT(ListDir(dir_), ElementsAre("r.json"));
}

TEST_F(ReportOutputTest, CharacterDeviceIsWrittenThroughAndStaysADevice) {
  NULL_DEVICE_OR_SKIP(device, "devnull");
  ASSERT_TRUE(WriteReportOutput(device, "into the null device").ok());
  struct stat st {};
  ASSERT_EQ(::lstat(device.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_THAT(ListDir(dir_), ElementsAre("devnull"));  // no temp file beside it
}

TEST_F(ReportOutputTest, SymlinkToADeviceWritesThroughAndKeepsBoth) {
  NULL_DEVICE_OR_SKIP(device, "devnull");
  const std::string link = dir_ + "/r.json";
  ASSERT_EQ(::symlink("devnull", link.c_str()), 0);
  ASSERT_TRUE(WriteReportOutput(link, "x").ok());
  EXPECT_EQ(TypeOf(link), S_IFLNK);
  EXPECT_EQ(LinkText(link), "devnull");
  EXPECT_EQ(TypeOf(device), S_IFCHR);
  EXPECT_THAT(ListDir(dir_), ElementsAre("devnull", "r.json"));
}

TEST_F(ReportOutputTest, FifoWithAReaderGetsTheBytesAndStaysAFifo) {
  const std::string fifo = dir_ + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const Status status = WriteReportOutput(fifo, "through the fifo");
  std::array<char, 64> buffer{};
  const ssize_t n = ::read(reader, buffer.data(), buffer.size());
  ::close(reader);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(std::string(buffer.data(), n > 0 ? static_cast<std::size_t>(n) : 0),
            "through the fifo");
  EXPECT_EQ(TypeOf(fifo), S_IFIFO);
  EXPECT_THAT(ListDir(dir_), ElementsAre("pipe"));
}

TEST_F(ReportOutputTest, FifoWithoutAReaderFailsAtOnceInsteadOfHanging) {
  const std::string fifo = dir_ + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Status status = WriteReportOutput(fifo, "nobody reads this");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("ENXIO"));
  EXPECT_THAT(status.message(), HasSubstr("no reader"));
  EXPECT_THAT(status.message(), HasSubstr(fifo));
  EXPECT_EQ(TypeOf(fifo), S_IFIFO);
}

TEST_F(ReportOutputTest, SymlinkToARegularFileReplacesTheTargetAndKeepsTheLink) {
  ASSERT_TRUE(std::filesystem::create_directory(dir_ + "/real"));
  ASSERT_TRUE(std::filesystem::create_directory(dir_ + "/out"));
  const std::string real = dir_ + "/real/report.json", link = dir_ + "/out/report.json";
  ASSERT_TRUE(WriteFileAtomically(real, "old report").ok());
  ASSERT_EQ(::symlink("../real/report.json", link.c_str()), 0);
  struct stat before {};
  ASSERT_EQ(::stat(real.c_str(), &before), 0);
  ASSERT_TRUE(WriteReportOutput(link, "new").ok());
  EXPECT_EQ(TypeOf(link), S_IFLNK);
  EXPECT_EQ(LinkText(link), "../real/report.json");
  EXPECT_EQ(ReadFile(real), "new");
  struct stat after {};
  ASSERT_EQ(::stat(real.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);  // a new file renamed in, not the old one rewritten
  EXPECT_THAT(ListDir(dir_ + "/out"), ElementsAre("report.json"));
  EXPECT_THAT(ListDir(dir_ + "/real"), ElementsAre("report.json"));
}

TEST_F(ReportOutputTest, DanglingSymlinkCreatesItsTargetAndKeepsTheLink) {
  const std::string link = dir_ + "/r.json";
  ASSERT_EQ(::symlink("first-run.json", link.c_str()), 0);
  ASSERT_TRUE(WriteReportOutput(link, "made").ok());
  EXPECT_EQ(TypeOf(link), S_IFLNK);
  EXPECT_EQ(ReadFile(dir_ + "/first-run.json"), "made");
}

TEST_F(ReportOutputTest, SymlinkOwnedBySomeoneElseIsNotFollowed) {
  const std::string real = dir_ + "/victim", link = dir_ + "/r.json";
  ASSERT_TRUE(WriteFileAtomically(real, "precious").ok());
  ASSERT_EQ(::symlink("victim", link.c_str()), 0);
  if (::lchown(link.c_str(), 12345, 12345) != 0) GTEST_SKIP() << "lchown needs root";
  const Status status = WriteReportOutput(link, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("owned by uid 12345"));
  EXPECT_EQ(ReadFile(real), "precious");
  EXPECT_EQ(TypeOf(link), S_IFLNK);
}

TEST_F(ReportOutputTest, DirectoryAndBlockDeviceAreRefused) {
  ASSERT_TRUE(std::filesystem::create_directory(dir_ + "/d"));
  const Status on_dir = WriteReportOutput(dir_ + "/d", "x");
  ASSERT_FALSE(on_dir.ok());
  EXPECT_THAT(on_dir.message(), HasSubstr("a directory"));
  EXPECT_EQ(TypeOf(dir_ + "/d"), S_IFDIR);
  // 7:0 is a loop device number; it is never opened, only refused.
  const std::string block = dir_ + "/disk";
  if (::mknod(block.c_str(), S_IFBLK | 0600, makedev(7, 0)) != 0) GTEST_SKIP() << "mknod needs root";
  const Status on_block = WriteReportOutput(block, "x");
  ASSERT_FALSE(on_block.ok());
  EXPECT_THAT(on_block.message(), HasSubstr("block device"));
  EXPECT_EQ(TypeOf(block), S_IFBLK);
}

TEST_F(ReportOutputTest, SymlinkLoopIsAnError) {
  ASSERT_EQ(::symlink("b", (dir_ + "/a").c_str()), 0);
  ASSERT_EQ(::symlink("a", (dir_ + "/b").c_str()), 0);
  const Status status = WriteReportOutput(dir_ + "/a", "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("ELOOP"));
  EXPECT_EQ(TypeOf(dir_ + "/a"), S_IFLNK);
}

TEST_F(ReportOutputTest, StdoutNamesAndLinksToThemAreTheStream) {
  for (const std::string path : {"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"}) {
    StatusOr<OutputTarget> target = ResolveOutput(path);
    ASSERT_TRUE(target.ok()) << path << ": " << target.status().message();
    EXPECT_EQ(target->kind, OutputKind::kStream) << path;
    EXPECT_EQ(target->fd, 1) << path;
  }
  const std::string link = dir_ + "/out";
  ASSERT_EQ(::symlink("/dev/stdout", link.c_str()), 0);
  EXPECT_TRUE(WritesToStdout(link));
  EXPECT_FALSE(WritesToStdout("/dev/stderr"));
  EXPECT_FALSE(WritesToStdout(dir_ + "/r.json"));
}

TEST_F(ReportOutputTest, DevStdoutWritesToTheHarnessStdout) {
  ::testing::internal::CaptureStdout();
  const Status status = WriteReportOutput("/dev/stdout", "hello\n");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "hello\n");
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(TypeOf("/dev/stdout"), S_IFLNK);  // read only: the host's link is still a link
}

// --- CheckReportOutputs: the check before the run ---

TEST_F(ReportOutputTest, CheckRefusesTwoReportsOnStdout) {
  const Status both = CheckReportOutputs({{"--json", "-"}, {"--junit", "-"}});
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.message(), HasSubstr("--json - and --junit - both write to stdout"));
  EXPECT_FALSE(CheckReportOutputs({{"--json", "-"}, {"--junit", "/dev/stdout"}}).ok());
  EXPECT_TRUE(CheckReportOutputs({{"--json", "-"}, {"--junit", ""}}).ok());
}

TEST_F(ReportOutputTest, CheckRefusesTwoReportsInOneFile) {
  const Status status =
      CheckReportOutputs({{"--json", dir_ + "/r"}, {"--junit", dir_ + "/./r"}});
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("both write to file "));
  EXPECT_TRUE(CheckReportOutputs({{"--json", dir_ + "/r"}, {"--junit", dir_ + "/x"}}).ok());
}

TEST_F(ReportOutputTest, CheckAllowsOneNullDeviceTwice) {
  NULL_DEVICE_OR_SKIP(device, "null");
  EXPECT_TRUE(CheckReportOutputs({{"--json", device}, {"--junit", device}}).ok());
  EXPECT_EQ(TypeOf(device), S_IFCHR);
}

TEST_F(ReportOutputTest, CheckNamesTheFlagAndWhyAndCreatesNothing) {
  ASSERT_TRUE(std::filesystem::create_directory(dir_ + "/d"));
  const Status on_dir = CheckReportOutputs({{"--junit", dir_ + "/d"}});
  ASSERT_FALSE(on_dir.ok());
  EXPECT_THAT(on_dir.message(), HasSubstr("--junit " + dir_ + "/d"));
  EXPECT_THAT(on_dir.message(), HasSubstr("a directory"));
  const Status no_dir = CheckReportOutputs({{"--json", dir_ + "/missing/r.json"}});
  ASSERT_FALSE(no_dir.ok());
  EXPECT_THAT(no_dir.message(), HasSubstr("ENOENT"));
  EXPECT_TRUE(CheckReportOutputs({{"--json", dir_ + "/new.json"}}).ok());
  EXPECT_THAT(ListDir(dir_), ElementsAre("d"));
}

TEST_F(ReportOutputTest, CheckDoesNotOpenAFifo) {
  // Opening would hand a reader waiting in open() an EOF at once. inotify sees every open.
  const std::string fifo = dir_ + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, fifo.c_str(), IN_OPEN), 0);
  std::array<char, 4096> events{};
  EXPECT_TRUE(CheckReportOutputs({{"--json", fifo}}).ok());  // no reader yet: still fine
  EXPECT_EQ(::read(watch, events.data(), events.size()), -1);  // no open seen
  // The watch does see an open (so the line above could fail).
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_GT(::read(watch, events.data(), events.size()), 0);
  ::close(reader);
  ::close(watch);
  EXPECT_EQ(TypeOf(fifo), S_IFIFO);
}

TEST(WriteToStdout, WritesTheBytes) {
  ::testing::internal::CaptureStdout();
  const Status status = WriteToStdout("hello\n");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "hello\n");
  EXPECT_TRUE(status.ok());
}

}  // namespace
}  // namespace sandprobe
