#include "launch/launch_executable.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class LaunchExecutableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sp-exe-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A file `name` in `sub` (made 0755 when new) with `content` and `mode`.
  std::string Make(const std::string& sub, const std::string& name, const std::string& content,
                   mode_t mode = 0755) {
    const std::string d = sub.empty() ? dir_ : dir_ + "/" + sub;
    if (!fs::exists(d)) {
      fs::create_directory(d);
      ::chmod(d.c_str(), 0755);
    }
    const std::string path = d + "/" + name;
    std::ofstream(path) << content;
    ::chmod(path.c_str(), mode);
    return path;
  }
  std::string dir_;
};

TEST_F(LaunchExecutableTest, FirstPathEntryWithTheNameWins) {
  const std::string shadow = Make("shadow", "env", "#!/bin/sh\n");
  StatusOr<ResolvedExecutable> r = ResolveExecutable("env", dir_ + "/shadow:/usr/bin", "");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->path, shadow);
  StatusOr<ResolvedExecutable> system = ResolveExecutable("env", "/usr/bin:" + dir_ + "/shadow", "");
  ASSERT_TRUE(system.ok());
  EXPECT_EQ(system->path, "/usr/bin/env");
}

TEST_F(LaunchExecutableTest, SkipsWhatExecvpSkips) {
  Make("plain", "tool", "data\n", 0644);           // not executable: EACCES, execvp goes on
  fs::create_directories(dir_ + "/dirs/tool");     // a directory: EACCES too
  const std::string real = Make("bin", "tool", "#!/bin/sh\n");
  StatusOr<ResolvedExecutable> r = ResolveExecutable(
      "tool", dir_ + "/missing:" + dir_ + "/plain:" + dir_ + "/dirs:" + dir_ + "/bin", "");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->path, real);
}

TEST_F(LaunchExecutableTest, EmptyEntryIsTheWorkingDirectory) {
  const std::string here = Make("", "tool", "#!/bin/sh\n");
  StatusOr<ResolvedExecutable> r = ResolveExecutable("tool", "/nonexistent::/usr/bin", dir_);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->path, here);
}

TEST_F(LaunchExecutableTest, NameWithASlashIsMadeAbsoluteAgainstTheWorkingDirectory) {
  StatusOr<ResolvedExecutable> r = ResolveExecutable("./bin/tool", "/usr/bin", dir_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->path, dir_ + "/bin/tool");
  StatusOr<ResolvedExecutable> absolute = ResolveExecutable("/usr/bin/true", "", "/tmp");
  ASSERT_TRUE(absolute.ok());
  EXPECT_EQ(absolute->path, "/usr/bin/true");
}

TEST_F(LaunchExecutableTest, UnsetPathUsesTheLibcDefault) {
  StatusOr<ResolvedExecutable> r = ResolveExecutable("true", std::nullopt, "");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->path == "/bin/true" || r->path == "/usr/bin/true") << r->path;
}

TEST_F(LaunchExecutableTest, NotFoundNamesTheErrnoExecvpWouldGive) {
  StatusOr<ResolvedExecutable> none = ResolveExecutable("sandprobe-no-such", "/usr/bin", "");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "execve(sandprobe-no-such): ENOENT (not in PATH)");
  const std::string plain = Make("plain", "tool", "data\n", 0644);
  StatusOr<ResolvedExecutable> unexecutable = ResolveExecutable("tool", dir_ + "/plain", "");
  ASSERT_FALSE(unexecutable.ok());
  EXPECT_THAT(unexecutable.status().message(), HasSubstr("execve(tool): EACCES"));
  EXPECT_THAT(unexecutable.status().message(), HasSubstr(plain));
}

// The hash runs beside the launch, from the file opened at the start: a path renamed over
// afterwards (the window between the fork and execve) does not change what is hashed.
TEST_F(LaunchExecutableTest, PendingHashIsOfTheFileOpenedAtStart) {
  const std::string path = Make("bin", "big", std::string(3 * 1024 * 1024, 'a'), 0755);
  std::future<StatusOr<std::string>> pending = StartExecutableSha256(path);
  const std::string other = Make("bin", "other", "abc", 0755);
  ASSERT_EQ(::rename(other.c_str(), path.c_str()), 0);
  StatusOr<std::string> hash = pending.get();
  ASSERT_TRUE(hash.ok()) << hash.status().message();
  // hashlib.sha256(b"a" * 3 * 1024 * 1024)
  EXPECT_EQ(*hash, "6f850bc94ae6f7de14297c01616c36d712d22864497b28a63b81d776b035e656");
  StatusOr<std::string> now = ExecutableSha256(path);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(*now, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // "abc"
}

TEST_F(LaunchExecutableTest, HashIsTheFilesSha256AndFollowsChanges) {
  const std::string path = Make("bin", "tool", "abc", 0755);
  StatusOr<std::string> first = ExecutableSha256(path);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(*first, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Same size, same inode, new bytes: the cache key (its ctime) changed, so it is hashed again.
  std::ofstream(path, std::ios::trunc) << "abd";
  StatusOr<std::string> second = ExecutableSha256(path);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, "a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9");
  // Never read a device or FIFO as a program: /dev/zero would never end, a FIFO never open.
  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0755), 0);
  StatusOr<std::string> fifo = ExecutableSha256(dir_ + "/fifo");
  ASSERT_FALSE(fifo.ok());
  EXPECT_THAT(fifo.status().message(), HasSubstr("not a regular file"));
  StatusOr<std::string> missing = ExecutableSha256(dir_ + "/none");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("ENOENT"));
}

TEST_F(LaunchExecutableTest, SystemBinaryHasNoWarning) {
  EXPECT_EQ(ExecutableWarning("/usr/bin/true"), "");
  EXPECT_EQ(ExecutableWarning("/bin/true"), "");  // /bin may be a link
}

TEST_F(LaunchExecutableTest, WorldAndGroupWritableDirectoriesAreNamed) {
  const std::string world = Make("world", "env", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((dir_ + "/world").c_str(), 0777), 0);
  EXPECT_THAT(ExecutableWarning(world),
              HasSubstr("in a world-writable directory " + dir_ + "/world"));
  const std::string group = Make("group", "env", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((dir_ + "/group").c_str(), 0775), 0);
  EXPECT_THAT(ExecutableWarning(group),
              HasSubstr("in a group-writable directory " + dir_ + "/group"));
  // The sticky bit (as on /tmp) keeps others from swapping the file: no directory warning.
  const std::string sticky = Make("sticky", "env", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((dir_ + "/sticky").c_str(), 01777), 0);
  EXPECT_EQ(ExecutableWarning(sticky), "");
}

TEST_F(LaunchExecutableTest, WritableOrForeignFileIsNamed) {
  const std::string writable = Make("bin", "env", "#!/bin/sh\n", 0757);
  EXPECT_THAT(ExecutableWarning(writable), HasSubstr("the file is world-writable"));
  const std::string foreign = Make("bin", "other", "#!/bin/sh\n");
  if (::chown(foreign.c_str(), 12345, 12345) != 0) GTEST_SKIP() << "chown needs root";
  EXPECT_THAT(ExecutableWarning(foreign), HasSubstr("the file is owned by uid 12345"));
}

TEST_F(LaunchExecutableTest, BareNameFoundOutsideTheSystemPathsIsNamedOnlyThen) {
  const std::string shadow = Make("shadow", "env", "#!/bin/sh\n");
  EXPECT_EQ(PathLocationNote(shadow, /*found_in_path=*/true),
            "found on PATH in " + dir_ + "/shadow, outside the system paths " + std::string(kSystemPath));
  EXPECT_EQ(PathLocationNote(shadow, /*found_in_path=*/false), "");
  EXPECT_EQ(PathLocationNote("/usr/bin/env", /*found_in_path=*/true), "");
  // Its location is no reason to distrust it: only who could replace it is.
  EXPECT_EQ(ExecutableWarning(shadow), "");
}

TEST_F(LaunchExecutableTest, SymlinkIntoAWritableDirectoryIsJudgedAtItsTarget) {
  const std::string target = Make("world", "env", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((dir_ + "/world").c_str(), 0777), 0);
  fs::create_directory(dir_ + "/bin");
  fs::create_symlink(target, dir_ + "/bin/env");
  EXPECT_THAT(ExecutableWarning(dir_ + "/bin/env"),
              HasSubstr("in a world-writable directory " + dir_ + "/world"));
}

}  // namespace
}  // namespace sandprobe
