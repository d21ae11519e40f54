// The host witness hashes exactly what the probe hashes (contract/path_content.h), names a path
// the host lacks, and reads the host's root and block-device mounts from its mount table.
#include "witnesses/witness_host_paths.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "families/test_policies.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

TEST(WitnessHostPathsTest, HashesLikeTheProbeAndReadsTheMountTable) {
  std::string tmpl = (fs::temp_directory_path() / "sp-hp-XXXXXX").string();
  std::string dir = ::mkdtemp(tmpl.data());
  std::ofstream(dir + "/file") << "hello\n";
  fs::create_directory(dir + "/d");
  std::ofstream(dir + "/d/b");
  std::ofstream(dir + "/d/a");
  std::ofstream(dir + "/mountinfo")
      << "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
         "42 27 254:0 /var/lib/docker /var/lib/docker rw - ext4 /dev/vda rw\n"
         "50 27 259:1 / /boot rw - vfat /dev/nvme0n1p1 rw\n"
         "51 27 0:25 / /tmp rw - tmpfs tmpfs rw\n";
  nlohmann::json facts =
      HostPathFacts({dir + "/file", dir + "/d", dir + "/missing"}, dir + "/mountinfo");
  const auto& paths = facts["paths"];
  EXPECT_EQ(paths[dir + "/file"]["sha256"], Sha256Hex("hello\n"));
  EXPECT_EQ(paths[dir + "/file"]["bytes"], 6);
  EXPECT_EQ(paths[dir + "/file"]["kind"], "file");
  EXPECT_TRUE(paths[dir + "/file"]["dev"].is_string());
  EXPECT_EQ(paths[dir + "/d"]["sha256"], Sha256Hex("a\nb"));  // sorted names joined by "\n"
  EXPECT_EQ(paths[dir + "/d"]["entries"], 2);
  EXPECT_EQ(paths[dir + "/missing"]["ok"], false);
  EXPECT_EQ(paths[dir + "/missing"]["errno"], "ENOENT");
  EXPECT_EQ(facts["root"]["dev"], "254:0");
  EXPECT_EQ(facts["root"]["source"], "/dev/vda");
  ASSERT_EQ(facts["block_mounts"].size(), 3u);  // not the tmpfs
  EXPECT_EQ(facts["block_mounts"][2]["mount_point"], "/boot");
  EXPECT_FALSE(facts.contains("mountinfo_error"));
  EXPECT_EQ(HostPathFacts({}, dir + "/nope")["mountinfo_error"], "ENOENT");
  fs::remove_all(dir);
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
