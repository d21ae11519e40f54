// The host-mounts witness: the identities it records are what stat and the probe's listing
// show, the probe directory's files are handed in, only mounts seen at both reads are kept, and
// the socket walk skips filesystems that cannot hold a socket.
#include "witnesses/witness_host_mounts.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(WitnessHostMountsTest, RecordsIdentitiesAndWhatIsHandedIn) {
  std::string tmpl = (fs::temp_directory_path() / "sp-hm-XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  fs::create_directories(dir + "/etc");
  for (const char* name : {"a", "b", "c", "d"}) std::ofstream(dir + "/etc/" + name);
  fs::create_directories(dir + "/probe");
  std::ofstream(dir + "/probe/sandprobe-probe") << "elf";
  fs::create_directories(dir + "/ws");
  // The host is read through a root (as --host-root reads a node): its table at proc/1/mountinfo,
  // its /etc under the root; what the harness hands in is read where the harness sees it.
  fs::create_directories(dir + "/proc/1");
  std::ofstream(dir + "/proc/1/mountinfo") << "27 1 254:0 / / rw - ext4 /dev/vda rw\n"
                                              "22 27 0:21 / /proc rw - proc proc rw\n";
  StatusOr<HostView> host = HostView::Through(dir);
  ASSERT_TRUE(host.ok()) << host.status().message();
  HostMountsInput input{*host, {"/etc", "/missing"}, dir + "/ws", dir + "/probe"};
  const json facts = ReadHostMounts(input);
  EXPECT_EQ(facts["host_root"], dir);
  ASSERT_EQ(facts["mounts"].size(), 2u);
  EXPECT_EQ(facts["mounts"][0], (json{{"id", 27}, {"dev", "254:0"}, {"root", "/"}, {"mount_point", "/"}, {"fstype", "ext4"}}));
  const json& etc = facts["critical"]["/etc"];
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/etc").c_str(), &st), 0);
  EXPECT_EQ(etc["ino"], st.st_ino);
  EXPECT_EQ(etc["entries"], 4);
  EXPECT_EQ(etc["sha256"], Sha256Hex("a\nb\nc\nd"));  // as the probe hashes a listing
  EXPECT_EQ(facts["critical"]["/missing"]["ok"], false);
  ASSERT_EQ(facts["handed_in"].size(), 3u);
  EXPECT_EQ(facts["handed_in"][0]["what"], "workspace");
  EXPECT_EQ(facts["handed_in"][1]["what"], "probe_dir");
  EXPECT_EQ(facts["handed_in"][2]["what"], "probe");
  EXPECT_EQ(facts["handed_in"][2]["path"], dir + "/probe/sandprobe-probe");
  EXPECT_EQ(facts["handed_in"][2]["kind"], "file");
  fs::remove_all(dir);
}

TEST(WitnessHostMountsTest, KeepsOnlyMountsSeenAtBothReads) {
  json facts = {{"mounts", json::array({{{"id", 27}, {"dev", "254:0"}, {"root", "/"}, {"mount_point", "/"}, {"fstype", "ext4"}},
                                        {{"id", 90}, {"dev", "0:57"}, {"root", "/"}, {"mount_point", "/var/lib/docker/containers/x/mounts/shm"}, {"fstype", "tmpfs"}}})},
                {"unstable", 0}};
  // The container's shm went away between the reads (its device number may be reused).
  KeepStableMounts(facts, ParseMountinfo("27 1 254:0 / / rw - ext4 /dev/vda rw\n"
                                         "91 27 0:58 / /new rw - tmpfs tmpfs rw\n"));
  ASSERT_EQ(facts["mounts"].size(), 1u);
  EXPECT_EQ(facts["mounts"][0]["id"], 27);
  EXPECT_EQ(facts["unstable"], 1);
}

TEST(WitnessHostMountsTest, WalksOnlyFilesystemsThatCanHoldSockets) {
  const json mounts = json::array({{{"dev", "254:0"}, {"fstype", "ext4"}}, {{"dev", "0:21"}, {"fstype", "proc"}},
                                   {{"dev", "0:22"}, {"fstype", "sysfs"}}, {{"dev", "0:23"}, {"fstype", "tmpfs"}},
                                   {{"dev", "254:0"}, {"fstype", "ext4"}}, {{"dev", "0:29"}, {"fstype", "cgroup"}}});
  EXPECT_EQ(SocketWalkDevices(mounts), "254:0,0:23");
}

}  // namespace
}  // namespace sandprobe
