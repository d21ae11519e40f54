#include "launch/pinned_process.h"

#include <signal.h>

#include <atomic>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "launch/launcher.h"
#include "launch/proc_info.h"

namespace sandprobe {
namespace {

using std::chrono::milliseconds;

bool Alive(int pid) {
  std::optional<ProcStat> stat = ReadProcStat(pid);
  return stat && !stat->dead();
}

// `sh -c SCRIPT TOKEN` started through the real launcher on a thread of its own; the shell's
// pid once it has `children` descendants. Stopped at destruction if the test did not kill it.
class Tree {
 public:
  Tree(const std::string& script, std::size_t children) {
    std::random_device random;
    token_ = "pinned-test-" + std::to_string(random()) + std::to_string(random());
    thread_ = std::thread([this, script] {
      ProcessLauncher launcher;
      LaunchSpec spec;
      spec.argv = {"sh", "-c", script, token_};
      spec.timeout = std::chrono::seconds(60);
      spec.cancel = &stop_;
      StatusOr<LaunchResult> r = launcher.Launch(spec);
      if (r.ok()) result_ = *r;
    });
    for (int i = 0; i < 500 && (root_ == 0 || below_.size() < children); ++i) {
      for (int pid : ListPids()) {
        std::optional<ProcStat> stat = ReadProcStat(pid);
        if (stat && CarriesToken(pid) && !CarriesToken(stat->ppid)) root_ = pid;
      }
      if (root_ != 0) below_ = ListDescendants(root_).value_or(std::vector<int>{});
      if (root_ == 0 || below_.size() < children) std::this_thread::sleep_for(milliseconds(10));
    }
  }
  ~Tree() { Finish(); }
  bool CarriesToken(int pid) const { return CmdlineHasArg(ReadProcFile(pid, "cmdline"), token_); }
  int root() const { return root_; }
  const std::vector<int>& below() const { return below_; }
  const LaunchResult& Finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return result_;
  }

 private:
  std::string token_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int root_ = 0;
  std::vector<int> below_;
  LaunchResult result_;
};

// The root carries the token; one child left the session (setsid), one did not: both go, and
// they are dead when KillProcessTree returns (before the launcher's own group kill).
TEST(PinnedProcessTest, KillProcessTreeKillsTheRootAndEveryDescendant) {
  Tree tree("setsid sleep 300 & sleep 300 & wait", 2);
  ASSERT_GT(tree.root(), 0);
  ASSERT_EQ(tree.below().size(), 2u);
  KillOutcome killed = KillProcessTree(tree.root(), [&](int pid) { return tree.CarriesToken(pid); });
  EXPECT_TRUE(killed.errors.empty()) << killed.errors[0];
  ASSERT_EQ(killed.killed.size(), 3u);
  EXPECT_EQ(killed.killed[0].pid, tree.root());
  EXPECT_NE(killed.killed[0].argv.find("sh -c setsid sleep 300"), std::string::npos) << killed.killed[0].argv;
  for (int pid : tree.below()) EXPECT_FALSE(Alive(pid)) << pid;
  EXPECT_FALSE(Alive(tree.root()));
  EXPECT_EQ(tree.Finish().signal, SIGKILL);
}

TEST(PinnedProcessTest, AnUnconfirmedOrUntouchableRootIsLeftAlone) {
  Tree tree("sleep 300 & wait", 1);
  ASSERT_GT(tree.root(), 0);
  EXPECT_TRUE(KillProcessTree(tree.root(), [](int) { return false; }).killed.empty());
  EXPECT_TRUE(KillProcessTree(tree.root(), [](int) { return true; }, {tree.root()}).killed.empty());
  EXPECT_TRUE(KillPinned(tree.root(), [](int) { return false; }).killed.empty());
  EXPECT_TRUE(Alive(tree.root()));
  for (int pid : tree.below()) EXPECT_TRUE(Alive(pid));
  std::optional<ProcStat> stat = ReadProcStat(tree.root());
  ASSERT_TRUE(stat);
  EXPECT_NE(stat->state, 'T') << "an unconfirmed process must not be stopped either";
}

// An untouchable child is neither stopped nor killed, and what is below it is not reached.
// (Whether it is alive afterwards is the launcher's business: it kills the group of a launch
// whose child died, so only the outcome is asserted.)
TEST(PinnedProcessTest, KillProcessTreeSkipsAnUntouchableDescendant) {
  Tree tree("sh -c 'sleep 300; :' & wait", 2);
  ASSERT_EQ(tree.below().size(), 2u);
  int child = 0;  // the inner shell; its sleep is below it
  for (int pid : tree.below()) {
    std::optional<ProcStat> stat = ReadProcStat(pid);
    if (stat && stat->ppid == tree.root()) child = pid;
  }
  ASSERT_GT(child, 0);
  KillOutcome killed = KillProcessTree(tree.root(), [](int) { return true; }, {child});
  EXPECT_TRUE(killed.errors.empty());
  ASSERT_EQ(killed.killed.size(), 1u);
  EXPECT_EQ(killed.killed[0].pid, tree.root());
}

TEST(PinnedProcessTest, KillPinnedKillsOneConfirmedProcess) {
  Tree tree("sleep 300 & wait", 1);
  ASSERT_GT(tree.root(), 0);
  KillOutcome killed = KillPinned(tree.root(), [&](int pid) { return tree.CarriesToken(pid); });
  EXPECT_TRUE(killed.errors.empty());
  ASSERT_EQ(killed.killed.size(), 1u);
  EXPECT_FALSE(Alive(tree.root()));
  EXPECT_EQ(tree.Finish().signal, SIGKILL);
}

TEST(PinnedProcessTest, AGonePidIsNothingToDo) {
  EXPECT_FALSE(PinnedProcess::Open(0x7ffffff0).has_value());
  KillOutcome killed = KillPinned(0x7ffffff0, [](int) { return true; });
  EXPECT_TRUE(killed.killed.empty());
  EXPECT_TRUE(killed.errors.empty());
}

}  // namespace
}  // namespace sandprobe
