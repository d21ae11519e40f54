// Unit tests for the privilege families' parsers: capability names, /proc/self/status fields,
// capability masks and mountinfo lines.
#include <gtest/gtest.h>

#include "contract/mountinfo.h"
#include "probes/priv_families.h"

namespace sandprobe {
namespace {

TEST(CapabilityNames, DecodesKnownBitsAndNumbersUnknownOnes) {
  EXPECT_EQ(CapabilityName(21), "CAP_SYS_ADMIN");
  EXPECT_EQ(CapabilityName(0), "CAP_CHOWN");
  EXPECT_EQ(CapabilityName(40), "CAP_CHECKPOINT_RESTORE");
  EXPECT_EQ(CapabilityName(41), "CAP_41");
  EXPECT_EQ(CapabilityNames(0), std::vector<std::string>{});
  // Docker's default set.
  std::vector<std::string> docker = CapabilityNames(0x00000000a80425fbULL);
  EXPECT_EQ(docker.size(), 14u);
  EXPECT_EQ(docker.front(), "CAP_CHOWN");
  EXPECT_EQ(docker.back(), "CAP_SETFCAP");
  EXPECT_EQ(std::count(docker.begin(), docker.end(), "CAP_SYS_ADMIN"), 0);
  EXPECT_EQ(CapabilityNames(0x000001ffffffffffULL).size(), 41u);
}

TEST(StatusField, FindsExactKeysAndTrimsBlanks) {
  const std::string status =
      "Name:\tsandprobe-probe\nUid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000200000\n"
      "NoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";
  EXPECT_EQ(StatusField(status, "CapEff"), "0000000000200000");
  EXPECT_EQ(StatusField(status, "Seccomp"), "2");
  EXPECT_EQ(StatusField(status, "Seccomp_filters"), "1");
  EXPECT_EQ(StatusField(status, "Uid"), "1000\t1000\t1000\t1000");
  EXPECT_EQ(StatusField(status, "CapAmb"), std::nullopt);
  EXPECT_EQ(StatusField(status, "Seccom"), std::nullopt);  // a prefix is not a key
}

TEST(ParseCapMask, AcceptsHexOnly) {
  EXPECT_EQ(ParseCapMask("0000000000200000"), 0x200000u);
  EXPECT_EQ(ParseCapMask("000001ffffffffff"), 0x1ffffffffffULL);
  EXPECT_EQ(ParseCapMask(""), std::nullopt);
  EXPECT_EQ(ParseCapMask("zz"), std::nullopt);
  EXPECT_EQ(ParseCapMask("00000000002000001"), std::nullopt);  // 17 digits
}

// priv.kernel_knob and priv.cgroups read the mount table with the shared parser
// (contract/mountinfo.h): options, fstype and the mount a path lies on.
TEST(PrivMounts, ReadFieldsOptionalTagsAndTheMountAPathIsOn) {
  const std::string text =
      "22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw,lowerdir=/a\n"
      "30 22 0:26 / /proc/sys ro,nosuid,nodev,noexec,relatime - proc proc rw\n"
      "31 22 0:27 / /sys/fs/cgroup rw,nosuid master:3 shared:9 - cgroup2 cgroup rw\n"
      "32 22 0:28 / /run/my\\040dir/docker.sock rw - tmpfs tmpfs rw\n"
      "garbage\n";
  std::vector<MountEntry> mounts = ParseMountinfo(text);
  ASSERT_EQ(mounts.size(), 4u);
  EXPECT_EQ(mounts[1].mount_point, "/proc/sys");
  EXPECT_TRUE(HasMountOption(mounts[1].mount_options, "ro"));
  EXPECT_FALSE(HasMountOption(mounts[0].mount_options, "ro"));
  EXPECT_EQ(mounts[2].fstype, "cgroup2");
  EXPECT_EQ(mounts[3].mount_point, "/run/my dir/docker.sock");
  EXPECT_EQ(MountHolding(mounts, "/proc/sys/kernel/core_pattern")->mount_point, "/proc/sys");
  EXPECT_EQ(MountHolding(mounts, "/proc/system")->mount_point, "/");
  EXPECT_EQ(MountHolding({}, "/x"), nullptr);
}

TEST(KnownProbeSyscalls, CoversTheIssueList) {
  for (const char* name : {"chroot", "mount", "unshare", "setns", "bpf", "keyctl", "add_key", "ptrace",
                           "perf_event_open", "userfaultfd", "io_uring_setup", "open_by_handle_at",
                           "init_module", "kexec_load", "clone3", "personality"}) {
    EXPECT_NE(std::find(KnownProbeSyscalls().begin(), KnownProbeSyscalls().end(), name),
              KnownProbeSyscalls().end()) << name;
  }
  EXPECT_EQ(CheckSyscallArgs({"mount", "reboot"}), "priv.syscalls: unknown syscall reboot");
  EXPECT_EQ(CheckSyscallArgs({"mount"}), "");
}

}  // namespace
}  // namespace sandprobe
