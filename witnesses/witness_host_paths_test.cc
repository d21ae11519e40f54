// The host witness hashes exactly what the probe hashes (contract/path_content.h), names a path
// the host lacks, and reads the host's root and block-device mounts from its mount table.
#include "witnesses/witness_host_paths.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "families/test_policies.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

// A host root as --host-root sees it (a node's / through /proc/1/root): its files, and its init's
// mount table at proc/1/mountinfo.
std::string MakeHostRoot() {
  std::string tmpl = (fs::temp_directory_path() / "sp-hp-XXXXXX").string();
  std::string root = ::mkdtemp(tmpl.data());
  fs::create_directories(root + "/etc/d");
  fs::create_directories(root + "/proc/1");
  std::ofstream(root + "/etc/file") << "hello\n";
  std::ofstream(root + "/etc/d/b");
  std::ofstream(root + "/etc/d/a");
  std::ofstream(root + "/proc/1/mountinfo")
      << "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
         "42 27 254:0 /var/lib/docker /var/lib/docker rw - ext4 /dev/vda rw\n"
         "50 27 259:1 / /boot rw - vfat /dev/nvme0n1p1 rw\n"
         "51 27 0:25 / /tmp rw - tmpfs tmpfs rw\n";
  return root;
}

TEST(WitnessHostPathsTest, HashesLikeTheProbeAndReadsTheMountTable) {
  const std::string root = MakeHostRoot();
  StatusOr<HostView> host = HostView::Through(root);
  ASSERT_TRUE(host.ok()) << host.status().message();
  nlohmann::json facts = HostPathFacts({"/etc/file", "/etc/d", "/etc/missing"}, *host);
  const auto& paths = facts["paths"];
  EXPECT_EQ(facts["host_root"], root);
  EXPECT_EQ(paths["/etc/file"]["sha256"], Sha256Hex("hello\n"));
  EXPECT_EQ(paths["/etc/file"]["bytes"], 6);
  EXPECT_EQ(paths["/etc/file"]["kind"], "file");
  EXPECT_TRUE(paths["/etc/file"]["dev"].is_string());
  EXPECT_EQ(paths["/etc/d"]["sha256"], Sha256Hex("a\nb"));  // sorted names joined by "\n"
  EXPECT_EQ(paths["/etc/d"]["entries"], 2);
  EXPECT_EQ(paths["/etc/missing"]["ok"], false);
  EXPECT_EQ(paths["/etc/missing"]["errno"], "ENOENT");
  EXPECT_EQ(facts["root"]["dev"], "254:0");
  EXPECT_EQ(facts["root"]["source"], "/dev/vda");
  ASSERT_EQ(facts["block_mounts"].size(), 3u);  // not the tmpfs
  EXPECT_EQ(facts["block_mounts"][2]["mount_point"], "/boot");
  EXPECT_FALSE(facts.contains("mountinfo_error"));
  fs::remove_all(root);
}

// The harness's own view reads the harness's files and table: no "host_root".
TEST(WitnessHostPathsTest, TheOwnViewReadsTheHarnesssRoot) {
  const std::string root = MakeHostRoot();
  nlohmann::json facts = HostPathFacts({root + "/etc/file"}, HostView());
  EXPECT_FALSE(facts.contains("host_root"));
  EXPECT_EQ(facts["paths"][root + "/etc/file"]["sha256"], Sha256Hex("hello\n"));
  EXPECT_FALSE(facts["root"].is_null());  // this machine's own "/" mount
  fs::remove_all(root);
}

// An absolute symlink on the node points into the node: through the view it resolves inside the
// root, never to the harness's own file of that name (the pod's /etc/hostname here).
TEST(WitnessHostPathsTest, AnAbsoluteSymlinkStaysInsideTheHostRoot) {
  const std::string root = MakeHostRoot();
  fs::create_symlink("/etc/file", root + "/etc/link");
  fs::create_symlink("../../../../../../etc/file", root + "/etc/dots");
  std::ofstream(root + "/etc/hostname") << "the node\n";
  StatusOr<HostView> host = HostView::Through(root);
  ASSERT_TRUE(host.ok()) << host.status().message();
  nlohmann::json facts = HostPathFacts({"/etc/link", "/etc/dots", "/etc/hostname"}, *host);
  EXPECT_EQ(facts["paths"]["/etc/link"]["sha256"], Sha256Hex("hello\n"));
  EXPECT_EQ(facts["paths"]["/etc/dots"]["sha256"], Sha256Hex("hello\n"));
  EXPECT_EQ(facts["paths"]["/etc/hostname"]["sha256"], Sha256Hex("the node\n"));
  fs::remove_all(root);
}

// A process's root (/proc/PID/root, as a pod with hostPID reads the node) goes with that process's
// own mount table: this test's own root and table, identical to the harness's own view.
TEST(WitnessHostPathsTest, AProcesssRootGoesWithItsOwnMountTable) {
  const std::string root = MakeHostRoot();
  StatusOr<HostView> host = HostView::Through("/proc/" + std::to_string(::getpid()) + "/root");
  ASSERT_TRUE(host.ok()) << host.status().message();
  nlohmann::json through = HostPathFacts({root + "/etc/file"}, *host);
  nlohmann::json own = HostPathFacts({root + "/etc/file"}, HostView());
  EXPECT_EQ(through["paths"], own["paths"]);
  EXPECT_EQ(through["root"], own["root"]);
  EXPECT_EQ(through["block_mounts"], own["block_mounts"]);
  fs::remove_all(root);
}

// A root that is not a host (no proc/1/mountinfo under it, or no directory) is refused before
// any launch, naming the flag: otherwise every denied path would read ENOENT there.
TEST(WitnessHostPathsTest, AHostRootWithoutTheHostsMountTableIsRefused) {
  const std::string root = MakeHostRoot();
  fs::remove(root + "/proc/1/mountinfo");
  StatusOr<HostView> no_table = HostView::Through(root);
  ASSERT_FALSE(no_table.ok());
  EXPECT_NE(no_table.status().message().find("--host-root " + root + ": cannot read the host's mount table"),
            std::string::npos) << no_table.status().message();
  EXPECT_NE(no_table.status().message().find("ENOENT"), std::string::npos);
  StatusOr<HostView> missing = HostView::Through(root + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "--host-root " + root + "/nope: ENOENT");
  StatusOr<HostView> no_process = HostView::Through("/proc/999999999/root");
  ASSERT_FALSE(no_process.ok());
  StatusOr<HostView> relative = HostView::Through("proc/1/root");
  ASSERT_FALSE(relative.ok());
  EXPECT_NE(relative.status().message().find("an absolute path"), std::string::npos);
  fs::remove_all(root);
}

TEST(WitnessHostPathsTest, OnlyDeniedReadTargetsThatAreNotCanaries) {
  Policy policy = testing::TierLowPolicy();  // unreadable: /etc/shadow, {host_canary}
  auto plan = ExpandChecks(policy, testing::SuiteOf({"fs.read", "fs.write", "fs.alias"}),
                           PlanContext{"/var/tmp/c.txt", "/workspace"});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(DeniedHostPaths(*plan), (std::set<std::string>{"/etc/shadow"}));
}

}  // namespace
}  // namespace sandprobe
