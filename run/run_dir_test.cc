#include "run/run_dir.h"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "launch/run_registry.h"
#include "launch/launcher.h"
#include "load/json_document.h"
#include "run/workspace_owner.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RunDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "run-dir-XXXXXX";
    parent_ = mkdtemp(tmpl.data());
    ::chmod(parent_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(parent_); }

  Profile HostProfile(const std::string& extra = "") {
    StatusOr<JsonDocument> doc = JsonDocument::Parse(
        R"({"name": "p", "description": "d", "backend": "host", "injection": "host-path", "lifecycle": "oneshot",
            "probe_path": "{probe_dir}/probe", "run": ["{probe}", "{probe_args...}"],
            "sweep": {"list": ["ls", "{run_id}"], "remove": ["rm", "{id}"]})" + extra + "}",
        parent_ + "/p.json");
    EXPECT_TRUE(doc.ok()) << doc.status().message();
    return *ParseProfile(*doc);
  }
  static struct stat Stat(const std::string& path) {
    struct stat st {};
    ::lstat(path.c_str(), &st);
    return st;
  }
  // Whether uid 65534 (no groups) can create a file in `dir`: a real attempt, through setpriv.
  static bool OtherUidCanWrite(const std::string& dir) {
    ProcessLauncher launcher;
    LaunchSpec spec;
    spec.argv = {"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "sh", "-c", "echo x > \"$1\"/planted",
                 "sh", dir};
    StatusOr<LaunchResult> r = launcher.Launch(spec);
    return r.ok() && r->exit_code == 0;
  }

  std::string parent_;
};

TEST_F(RunDirTest, TheRunDirIs0755TheWorkspace0700AndNeitherIsWritableByAnotherUid) {
  StatusOr<RunDir> dir = RunDir::Create(parent_, "0123456789ab", HostProfile());
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  EXPECT_EQ(Stat(dir->root()).st_mode & 07777, 0755u);
  EXPECT_EQ(Stat(dir->workspace()).st_mode & 07777, 0700u);
  EXPECT_EQ(Stat(dir->workspace()).st_uid, ::geteuid());
  EXPECT_EQ(Stat(dir->root() + "/owner.json").st_mode & 07777, 0600u);
  if (::geteuid() == 0) {
    EXPECT_FALSE(OtherUidCanWrite(dir->workspace()));
    EXPECT_FALSE(OtherUidCanWrite(dir->root()));
  }
}

TEST_F(RunDirTest, AnExistingDirectoryOfThatNameIsNeverTakenOver) {
  fs::create_directories(parent_ + "/sandprobe-0123456789ab/workspace");
  StatusOr<RunDir> dir = RunDir::Create(parent_, "0123456789ab", HostProfile());
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(dir.status().message(), HasSubstr("EEXIST"));
  EXPECT_TRUE(fs::exists(parent_ + "/sandprobe-0123456789ab/workspace")) << "not ours to remove";
}

// As root, the workspace is given to the uid the profile says the sandbox writes as.
TEST_F(RunDirTest, AsRootTheWorkspaceBelongsToTheDeclaredUid) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  StatusOr<RunDir> dir =
      RunDir::Create(parent_, "0123456789ab", HostProfile(R"(, "workspace_owner": {"uid": 65534, "gid": 65534})"));
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  struct stat st = Stat(dir->workspace());
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_TRUE(OtherUidCanWrite(dir->workspace())) << "the sandbox's uid must write it";
}

// The ACL a non-root harness uses to give its workspace to the sandbox's uid: that uid writes,
// a third uid does not, and what the sandbox makes inside stays removable by the harness.
TEST_F(RunDirTest, AnAclGivesTheWorkspaceToOneUidAlone) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to play two other uids";
  std::string ws = parent_ + "/ws";
  ASSERT_EQ(::mkdir(ws.c_str(), 0700), 0);
  Status granted = GrantByAcl(ws, 65534);
  if (!granted.ok() && granted.message().find("EOPNOTSUPP") != std::string::npos) {
    GTEST_SKIP() << "no POSIX ACLs on " << parent_ << ": " << granted.message();
  }
  ASSERT_TRUE(granted.ok()) << granted.message();
  EXPECT_GT(::getxattr(ws.c_str(), "system.posix_acl_access", nullptr, 0), 0);
  EXPECT_TRUE(OtherUidCanWrite(ws));
  ProcessLauncher launcher;
  LaunchSpec third;
  third.argv = {"setpriv", "--reuid", "65533", "--regid", "65533", "--clear-groups", "sh", "-c", "echo x > \"$1\"/third", "sh", ws};
  StatusOr<LaunchResult> r = launcher.Launch(third);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->exit_code, 0) << "a third uid wrote into the workspace";
  EXPECT_EQ(Stat(ws).st_mode & 07, 0u) << "nothing for others";
}

TEST_F(RunDirTest, SweepCommandsAreRecordedExpandedForThisRun) {
  StatusOr<RunDir> dir = RunDir::Create(parent_, "0123456789ab", HostProfile());
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  ASSERT_TRUE(dir->RecordSweeps(HostProfile(), "/pd").ok());
  StatusOr<OwnerRecord> owner = LoadOwner(dir->root());
  ASSERT_TRUE(owner.ok()) << owner.status().message();
  ASSERT_TRUE(owner->sweeps);
  ASSERT_EQ(owner->sweeps->size(), 1u);
  EXPECT_EQ((*owner->sweeps)[0].list, (std::vector<std::string>{"ls", "0123456789ab"}));
  EXPECT_EQ((*owner->sweeps)[0].RemoveArgv("x"), (std::vector<std::string>{"rm", "x"}));
}

TEST_F(RunDirTest, DiskFactsSayHowMuchRoomTheWorkspaceHas) {
  StatusOr<RunDir> dir = RunDir::Create(parent_, "0123456789ab", HostProfile());
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  nlohmann::json disk = dir->DiskFacts();
  EXPECT_EQ(disk["path"], dir->workspace());
  EXPECT_TRUE(disk["bytes_free"].is_number_unsigned()) << disk.dump();
  EXPECT_EQ(disk["full"].get<bool>(), disk["bytes_free"].get<unsigned long long>() < RunDir::kFullBelowBytes);
  EXPECT_FALSE(disk["read_only"].get<bool>());
}

// What the sandbox's uid made in its workspace is removed with the run dir, and a link it
// planted there is removed, never followed.
TEST_F(RunDirTest, RemovalNeverFollowsALinkPlantedInTheWorkspace) {
  std::string outside = parent_ + "/outside";
  fs::create_directories(outside);
  std::ofstream(outside + "/keep") << "x";
  std::string root;
  {
    StatusOr<RunDir> dir = RunDir::Create(parent_, "0123456789ab", HostProfile());
    ASSERT_TRUE(dir.ok()) << dir.status().message();
    root = dir->root();
    fs::create_directories(dir->workspace() + "/sub");
    fs::create_directory_symlink(outside, dir->workspace() + "/sub/escape");
  }
  EXPECT_FALSE(fs::exists(root));
  EXPECT_TRUE(fs::exists(outside + "/keep"));
}

}  // namespace
}  // namespace sandprobe
