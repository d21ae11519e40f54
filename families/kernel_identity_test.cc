#include "families/kernel_identity.h"

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using nlohmann::json;

const json kHost = {{"release", "6.18.44-fc-v669"},
                    {"version", "#1 SMP PREEMPT_DYNAMIC"},
                    {"boot_id", "aaaa-host"},
                    {"boot_time_ms", 1795733722000LL},
                    {"nsfs_dev", "0:4"}};

TEST(KernelIdentityTest, TheHarnessKernelIsTheSame) {
  KernelComparison c = CompareKernels(kHost, kHost);
  EXPECT_TRUE(c.known);
  EXPECT_FALSE(c.another) << c.text;
  EXPECT_NE(c.text.find("the harness's kernel"), std::string::npos) << c.text;
}

// The runtime that mounted a random boot_id of its own: one signal is not another kernel.
TEST(KernelIdentityTest, AMountedBootIdAloneIsNotAnotherKernel) {
  json probe = kHost;
  probe["boot_id"] = "bbbb-mounted";
  probe["boot_time_ms"] = 1795733722900LL;  // computed a moment later: within the slack
  KernelComparison c = CompareKernels(probe, kHost);
  EXPECT_FALSE(c.another) << c.text;
  EXPECT_NE(c.text.find("not enough independent signals"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("boot_id bbbb-mounted"), std::string::npos) << c.text;
  // A time namespace on top shifts the boot time too: two signals against the build then say
  // another kernel. The rule's limit, kept visible: it takes two independent signals to fake.
  probe["boot_time_ms"] = 1795733722000LL + 3600 * 1000;
  EXPECT_TRUE(CompareKernels(probe, kHost).another);
}

// gVisor: its own build string, booted with the sandbox, its own nsfs device, no boot_id file.
TEST(KernelIdentityTest, GvisorIsAnotherKernel) {
  const json gvisor = {{"release", "4.4.0"},
                       {"version", "#1 SMP Sun Jan 10 15:06:54 PST 2016"},
                       {"boot_id_errno", "ENOENT"},
                       {"boot_time_ms", 1795738028000LL},
                       {"nsfs_dev", "0:10"}};
  KernelComparison c = CompareKernels(gvisor, kHost);
  EXPECT_TRUE(c.another) << c.text;
  EXPECT_NE(c.text.find("4.4.0"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("nsfs device 0:10"), std::string::npos) << c.text;
}

// A VM's guest with the host's very build: boot_id and boot time still say another kernel; the
// nsfs device being equal says nothing (every kernel numbers it alike).
TEST(KernelIdentityTest, AGuestOfTheSameBuildIsAnotherKernelByTwoSignals) {
  json guest = kHost;
  guest["boot_id"] = "cccc-guest";
  guest["boot_time_ms"] = 1795738000000LL;
  KernelComparison c = CompareKernels(guest, kHost);
  EXPECT_TRUE(c.another) << c.text;
  EXPECT_NE(c.text.find("only build"), std::string::npos) << c.text;
}

TEST(KernelIdentityTest, NothingToCompareIsNotAnotherKernel) {
  KernelComparison c = CompareKernels(json::object(), kHost);
  EXPECT_FALSE(c.known);
  EXPECT_FALSE(c.another);
  EXPECT_FALSE(CompareKernels(kHost, nullptr).another);
  // One differing signal and nothing else: not enough.
  EXPECT_FALSE(CompareKernels({{"release", "4.4.0"}}, kHost).another);
}

}  // namespace
}  // namespace sandprobe
