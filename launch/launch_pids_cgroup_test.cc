#include "launch/launch_pids_cgroup.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "launch/launcher.h"
#include "launch/proc_info.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::EndsWith;
using ::testing::StartsWith;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string Self() { return std::to_string(getpid()); }
unsigned long long SelfTicks() { return ReadProcStat(getpid())->start_ticks; }

bool Alive(int pid) {
  std::optional<ProcStat> stat = ReadProcStat(pid);
  return stat && !stat->dead();
}

// A cgroupfs in a temp dir that behaves as the kernel's where the code looks: mkdir makes the
// interface files (on v2 a child's cgroup.controllers is its parent's subtree_control), rmdir
// drops them and refuses (EBUSY) while a pid listed in cgroup.procs is alive. A write to a
// cgroup.procs moves nothing out of another one here.
class FakeCgroupFs {
 public:
  explicit FakeCgroupFs(bool v2) : v2_(v2) {
    std::string tmpl = ::testing::TempDir() + "fake-cgroupfs-XXXXXX";
    top_ = mkdtemp(tmpl.data());
    fs_.root = top_ + "/cgroup";
    fs_.self_cgroup = top_ + "/self_cgroup";
    fs_.mkdir = [this](const std::string& path) { return MakeCgroup(path); };
    fs_.rmdir = [](const std::string& path) { return RemoveCgroup(path); };
    ::mkdir(fs_.root.c_str(), 0755);
    if (v2_) {
      Write(fs_.root + "/cgroup.controllers", "cpuset cpu io memory pids\n");
      Write(fs_.root + "/cgroup.subtree_control", "cpu memory pids\n");
    }
  }
  ~FakeCgroupFs() { fs::remove_all(top_); }

  // A cgroup at `relative` ("/a.slice/b.scope") with these processes; its parents too.
  std::string Cgroup(const std::string& relative, const std::string& procs = "") {
    std::string path = fs_.root;
    std::istringstream parts(relative);
    for (std::string part; std::getline(parts, part, '/');) {
      if (part.empty()) continue;
      path += "/" + part;
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0) continue;
      EXPECT_EQ(MakeCgroup(path), 0) << path;
      // A parent on the way down hands on pids, as systemd's slices do.
      if (parts.peek() != EOF) Write(path + "/cgroup.subtree_control", "memory pids\n");
    }
    Write(path + "/cgroup.procs", procs);
    return path;
  }
  void SetSelf(const std::string& relative) { Write(fs_.self_cgroup, "12:pids:/\n0::" + relative + "\n"); }
  const CgroupFs& fs() const { return fs_; }
  const std::string& root() const { return fs_.root; }

 private:
  int MakeCgroup(const std::string& path) {
    if (::mkdir(path.c_str(), 0755) != 0) return -1;
    Write(path + "/cgroup.procs", "");
    Write(path + "/pids.max", "");
    if (v2_) {
      Write(path + "/cgroup.controllers", Read(fs::path(path).parent_path().string() + "/cgroup.subtree_control"));
      Write(path + "/cgroup.subtree_control", "");
      Write(path + "/cgroup.kill", "");
    }
    return 0;
  }
  static int RemoveCgroup(const std::string& path) {
    std::istringstream procs(Read(path + "/cgroup.procs"));
    for (int pid; procs >> pid;) {
      // The fake cannot follow a process moved out by a write to another cgroup.procs: the
      // harness's own pid (the only one the code moves) never holds a dir.
      if (pid != getpid() && Alive(pid)) {
        errno = EBUSY;
        return -1;
      }
    }
    for (const char* file : {"cgroup.procs", "pids.max", "cgroup.controllers", "cgroup.subtree_control", "cgroup.kill"}) {
      ::unlink((path + "/" + file).c_str());
    }
    return ::rmdir(path.c_str());
  }

  bool v2_;
  std::string top_;
  CgroupFs fs_;
};

// `sh -c 'sleep 300; :' TOKEN` through the real launcher on a thread of its own; its pids
// (the shell and its sleep) once both run. Stopped at destruction.
class Sleeper {
 public:
  Sleeper() {
    std::random_device random;
    std::string token = "cgroup-test-" + std::to_string(random()) + std::to_string(random());
    thread_ = std::thread([this, token] {
      ProcessLauncher launcher;
      LaunchSpec spec;
      spec.argv = {"sh", "-c", "sleep 300; :", token};
      spec.timeout = std::chrono::seconds(60);
      spec.cancel = &stop_;
      (void)launcher.Launch(spec);
    });
    for (int i = 0; i < 500 && pids_.size() < 2; ++i) {
      std::vector<HostProcess> found = FindProcessesWithArg(token);
      if (found.size() == 1) {
        pids_ = {static_cast<int>(found[0].pid)};
        for (int child : ListDescendants(pids_[0]).value_or(std::vector<int>{})) pids_.push_back(child);
      }
      if (pids_.size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~Sleeper() {
    stop_ = true;
    thread_.join();
  }
  const std::vector<int>& pids() const { return pids_; }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<int> pids_;
};

// --- v2, against the fake tree -------------------------------------------------------------

// The harness alone in its cgroup: it moves into the leaf, enables pids for its cgroup's
// children, and each launch's cgroup is made beside the leaf, named for this harness.
TEST(LauncherPidsCgroupTest, V2MovesTheHarnessIntoALeafAndMakesTheLaunchCgroupBesideIt) {
  FakeCgroupFs fake(/*v2=*/true);
  std::string own = fake.Cgroup("/a.slice/b.scope", Self() + "\n");
  fake.SetSelf("/a.slice/b.scope");
  ASSERT_EQ(DetectCgroupLayout(fake.root()), CgroupLayout::kV2);
  std::string prefix = own + "/sandprobe-launch-" + Self() + "-" + std::to_string(SelfTicks()) + "-";
  StatusOr<std::string> recorded = LaunchCgroupPrefix(fake.fs());
  ASSERT_TRUE(recorded.ok()) << recorded.status().message();
  EXPECT_EQ(*recorded, prefix);

  PidsCgroup cgroup(fake.fs());
  Status made = cgroup.Make(7);
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_EQ(Read(own + "/sandprobe-harness/cgroup.procs"), Self());
  EXPECT_EQ(Read(own + "/cgroup.subtree_control"), "+pids");
  ASSERT_THAT(cgroup.procs_path(), StartsWith(prefix));
  ASSERT_THAT(cgroup.procs_path(), EndsWith("/cgroup.procs"));
  std::string dir = fs::path(cgroup.procs_path()).parent_path().string();
  EXPECT_EQ(Read(dir + "/pids.max"), "7");
  // A second launch: the setup is not repeated, the cgroup is another.
  PidsCgroup second(fake.fs());
  ASSERT_TRUE(second.Make(9).ok());
  EXPECT_NE(second.procs_path(), cgroup.procs_path());
  EXPECT_THAT(second.procs_path(), StartsWith(prefix));

  cgroup.Remove();
  EXPECT_FALSE(cgroup.made());
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(fs::exists(own + "/sandprobe-harness")) << "the harness is still in its leaf";
}

// Already in the leaf with pids enabled (a later launch, a later run): nothing moves, the
// launch cgroup goes beside the leaf, and the recorded prefix names the same parent.
TEST(LauncherPidsCgroupTest, V2HarnessAlreadyInItsLeafUsesTheParent) {
  FakeCgroupFs fake(true);
  std::string own = fake.Cgroup("/svc.service");
  Write(own + "/cgroup.subtree_control", "pids\n");
  fake.Cgroup("/svc.service/sandprobe-harness", Self() + "\n");
  fake.SetSelf("/svc.service/sandprobe-harness");
  EXPECT_THAT(*LaunchCgroupPrefix(fake.fs()), StartsWith(own + "/sandprobe-launch-" + Self() + "-"));
  PidsCgroup cgroup(fake.fs());
  ASSERT_TRUE(cgroup.Make(5).ok());
  EXPECT_THAT(cgroup.procs_path(), StartsWith(own + "/sandprobe-launch-" + Self() + "-"));
  EXPECT_EQ(Read(own + "/cgroup.subtree_control"), "pids\n") << "left as it was";
}

TEST(LauncherPidsCgroupTest, V2WithoutThePidsControllerDelegatedIsTheUnavailableNote) {
  FakeCgroupFs fake(true);
  Write(fake.root() + "/cgroup.subtree_control", "memory\n");
  std::string own = fake.Cgroup("/user.slice", Self() + "\n");
  fake.SetSelf("/user.slice");
  PidsCgroup cgroup(fake.fs());
  Status made = cgroup.Make(4);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.message(), "pids cgroup unavailable: the pids controller is not delegated to " + own +
                                " (cgroup.controllers: \"memory\")");
  EXPECT_FALSE(cgroup.made());
  EXPECT_FALSE(fs::exists(own + "/sandprobe-harness")) << "nothing made, nothing moved";
}

// Another process (not the harness's) shares the harness's cgroup: v2 refuses it pids for
// children, so the harness moves back, the leaf goes, and the note names the process.
TEST(LauncherPidsCgroupTest, V2WithAForeignProcessInTheHarnessCgroupMovesBackAndSaysSo) {
  FakeCgroupFs fake(true);
  std::string own = fake.Cgroup("/user.slice/session-1.scope", Self() + "\n1\n");
  fake.SetSelf("/user.slice/session-1.scope");
  PidsCgroup cgroup(fake.fs());
  Status made = cgroup.Make(4);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.message(), "pids cgroup unavailable: " + own +
                                " holds processes that are not the harness's (pids 1): cgroup v2 lets "
                                "no cgroup with processes of its own enable a controller for its children");
  EXPECT_FALSE(fs::exists(own + "/sandprobe-harness"));
  EXPECT_EQ(Read(own + "/cgroup.subtree_control"), "");
  EXPECT_THAT(Read(own + "/cgroup.procs"), StartsWith(Self())) << "moved back";
  // The answer is kept: the next launch does not move the harness again.
  PidsCgroup again(fake.fs());
  EXPECT_EQ(again.Make(4).message(), made.message());
}

TEST(LauncherPidsCgroupTest, V2RefusedSubtreeControlWriteIsTheUnavailableNote) {
  FakeCgroupFs fake(true);
  std::string own = fake.Cgroup("/ro.scope", Self() + "\n");
  fs::remove(own + "/cgroup.subtree_control");
  fs::create_directory(own + "/cgroup.subtree_control");  // open(O_WRONLY) fails: EISDIR
  fake.SetSelf("/ro.scope");
  PidsCgroup cgroup(fake.fs());
  Status made = cgroup.Make(4);
  EXPECT_EQ(made.message(), "pids cgroup unavailable: write +pids to " + own + "/cgroup.subtree_control: EISDIR");
  EXPECT_FALSE(fs::exists(own + "/sandprobe-harness"));
}

TEST(LauncherPidsCgroupTest, V2WithoutAUnifiedLineInProcSelfCgroupIsTheUnavailableNote) {
  FakeCgroupFs fake(true);
  Write(fake.fs().self_cgroup, "12:pids:/\n");
  PidsCgroup cgroup(fake.fs());
  EXPECT_EQ(cgroup.Make(4).message(),
            "pids cgroup unavailable: no \"0::/\" line in " + fake.fs().self_cgroup);
}

// cgroup.kill first (the kernel kills every member at once), then rmdir.
TEST(LauncherPidsCgroupTest, V2RemoveWritesCgroupKill) {
  FakeCgroupFs fake(true);
  std::string dir = fake.Cgroup("/x/sandprobe-launch-1-2-3");
  std::string kill_file = dir + "/cgroup.kill";
  // Keeps the dir (not a fake rmdir): see what was written.
  CgroupFs keep = fake.fs();
  keep.rmdir = [](const std::string&) { errno = EROFS; return -1; };
  EXPECT_EQ(RemoveCgroupDir(dir, keep), "rmdir(" + dir + "): EROFS");
  EXPECT_EQ(Read(kill_file), "1");
  EXPECT_EQ(RemoveCgroupDir(dir, fake.fs()), "");
  EXPECT_FALSE(fs::exists(dir));
}

// --- v1, against the fake tree and for real ------------------------------------------------

TEST(LauncherPidsCgroupTest, V1MakesTheLaunchCgroupInTheSharedPidsHierarchy) {
  FakeCgroupFs fake(/*v2=*/false);
  fake.Cgroup("/pids");
  ASSERT_EQ(DetectCgroupLayout(fake.root()), CgroupLayout::kV1);
  std::string prefix = fake.root() + "/pids/sandprobe/" + Self() + "-" + std::to_string(SelfTicks()) + "-";
  EXPECT_EQ(*LaunchCgroupPrefix(fake.fs()), prefix);
  PidsCgroup cgroup(fake.fs());
  ASSERT_TRUE(cgroup.Make(11).ok());
  ASSERT_THAT(cgroup.procs_path(), StartsWith(prefix));
  std::string dir = fs::path(cgroup.procs_path()).parent_path().string();
  EXPECT_EQ(Read(dir + "/pids.max"), "11");
  cgroup.Remove();
  EXPECT_FALSE(fs::exists(dir));
}

TEST(LauncherPidsCgroupTest, V1WithoutAPidsHierarchyIsTheUnavailableNote) {
  FakeCgroupFs fake(false);
  PidsCgroup cgroup(fake.fs());
  Status made = cgroup.Make(4);
  EXPECT_EQ(made.message(), "pids cgroup unavailable: mkdir(" + fake.root() + "/pids/sandprobe): ENOENT");
  EXPECT_FALSE(cgroup.made());
  EXPECT_EQ(cgroup.procs_path(), "");
}

// A plain directory (mkdir(2), no interface files): the launch's directory is made, but it has
// no pids.max (not a cgroup), so it is removed again.
TEST(LauncherPidsCgroupTest, DirectoryWithoutPidsMaxIsTheUnavailableNoteAndRemoved) {
  FakeCgroupFs fake(false);
  CgroupFs plain{.root = fake.root()};
  ASSERT_EQ(mkdir((fake.root() + "/pids").c_str(), 0755), 0);
  PidsCgroup cgroup(plain);
  Status made = cgroup.Make(4);
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made.message(), StartsWith("pids cgroup unavailable: write " + fake.root() + "/pids/sandprobe/" + Self() + "-"));
  EXPECT_THAT(made.message(), EndsWith("/pids.max: ENOENT"));
  EXPECT_FALSE(cgroup.made());
  EXPECT_EQ(rmdir((fake.root() + "/pids/sandprobe").c_str()), 0)
      << "root missing or not empty: " << strerrorname_np(errno);
}

// Needs a writable cgroup v1 pids hierarchy (root), as LauncherEnvelopeTest does.
TEST(LauncherPidsCgroupTest, RealV1CgroupHasItsLimitAndIsRemoved) {
  if (DetectCgroupLayout("/sys/fs/cgroup") != CgroupLayout::kV1) GTEST_SKIP() << "not a cgroup v1 host";
  PidsCgroup cgroup;
  Status made = cgroup.Make(7);
  if (!made.ok()) GTEST_SKIP() << made.message();
  ASSERT_THAT(cgroup.procs_path(), StartsWith(*LaunchCgroupPrefix()));
  ASSERT_THAT(cgroup.procs_path(), StartsWith("/sys/fs/cgroup/pids/sandprobe/"));
  std::string dir = fs::path(cgroup.procs_path()).parent_path().string();
  EXPECT_EQ(Read(dir + "/pids.max"), "7\n");
  cgroup.Remove();
  EXPECT_FALSE(cgroup.made());
  EXPECT_FALSE(fs::exists(dir));
}

// --- what a killed harness left (`sandprobe sweep`) ----------------------------------------

// Only the cgroups named for that harness (pid and start time) go, their processes killed.
TEST(LauncherPidsCgroupTest, LeftLaunchCgroupsOfOneHarnessAreEmptiedAndRemoved) {
  FakeCgroupFs fake(true);
  Sleeper sleeper;
  ASSERT_EQ(sleeper.pids().size(), 2u);
  std::string own = fake.Cgroup("/svc");
  std::string pids;
  for (int pid : sleeper.pids()) pids += std::to_string(pid) + "\n";
  std::string a = fake.Cgroup("/svc/sandprobe-launch-4242-77-1", pids);
  std::string b = fake.Cgroup("/svc/sandprobe-launch-4242-77-12");
  std::string other_start = fake.Cgroup("/svc/sandprobe-launch-4242-78-1");
  std::string other_pid = fake.Cgroup("/svc/sandprobe-launch-42420-77-1");
  std::string prefix = own + "/sandprobe-launch-4242-77-";

  LeftCgroups dry = RemoveLeftLaunchCgroups(prefix, 4242, 77, /*dry_run=*/true, fake.fs());
  EXPECT_EQ(dry.removed, (std::vector<std::string>{a, b}));
  EXPECT_TRUE(fs::exists(a));

  LeftCgroups left = RemoveLeftLaunchCgroups(prefix, 4242, 77, false, fake.fs());
  EXPECT_TRUE(left.errors.empty()) << left.errors[0];
  EXPECT_EQ(left.removed, (std::vector<std::string>{a, b}));
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(b));
  EXPECT_TRUE(fs::exists(other_start));
  EXPECT_TRUE(fs::exists(other_pid));
  for (int pid : sleeper.pids()) EXPECT_FALSE(Alive(pid)) << pid;
}

// The prefix comes from a file in /var/tmp: one outside the cgroupfs, or not named for that
// harness, is refused.
TEST(LauncherPidsCgroupTest, ALeftCgroupPrefixNotOfThatHarnessIsRefused) {
  FakeCgroupFs fake(true);
  std::string victim = fake.Cgroup("/svc/sandprobe-launch-4242-77-1");
  for (const std::string& prefix : {fake.root() + "/svc/sandprobe-launch-4242-76-",
                                    fake.root() + "/svc/sandprobe-launch-",
                                    fake.root() + "/svc/",
                                    fake.root() + "/svc/../svc/sandprobe-launch-4242-77-",
                                    std::string("/tmp/sandprobe-launch-4242-77-")}) {
    LeftCgroups left = RemoveLeftLaunchCgroups(prefix, 4242, 77, false, fake.fs());
    ASSERT_EQ(left.errors.size(), 1u) << prefix;
    EXPECT_THAT(left.errors[0], StartsWith("refused to sweep pids cgroups \"" + prefix + "*\""));
    EXPECT_TRUE(left.removed.empty());
  }
  EXPECT_TRUE(fs::exists(victim));
}

// The v1 path for real: a cgroup a dead harness left with a process tree inside.
TEST(LauncherPidsCgroupTest, RealV1LeftCgroupIsEmptiedAndRemoved) {
  const std::string parent = "/sys/fs/cgroup/pids/sandprobe";
  if (DetectCgroupLayout("/sys/fs/cgroup") != CgroupLayout::kV1 || ::access(parent.c_str(), W_OK) != 0) {
    GTEST_SKIP() << "no writable cgroup v1 pids hierarchy at " << parent;
  }
  const int dead_pid = 0x7ffffff0;  // above any pid_max: no harness of this name runs
  std::string dir = parent + "/" + std::to_string(dead_pid) + "-1-1";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0) << strerrorname_np(errno);
  Sleeper sleeper;
  ASSERT_EQ(sleeper.pids().size(), 2u);
  for (int pid : sleeper.pids()) Write(dir + "/cgroup.procs", std::to_string(pid));
  std::istringstream members(Read(dir + "/cgroup.procs"));
  std::vector<int> inside;
  for (int pid; members >> pid;) inside.push_back(pid);
  ASSERT_EQ(inside.size(), 2u);
  LeftCgroups left = RemoveLeftLaunchCgroups(parent + "/" + std::to_string(dead_pid) + "-1-", dead_pid, 1, false);
  EXPECT_TRUE(left.errors.empty()) << left.errors[0];
  EXPECT_EQ(left.removed, std::vector<std::string>{dir});
  EXPECT_FALSE(fs::exists(dir));
  for (int pid : sleeper.pids()) EXPECT_FALSE(Alive(pid)) << pid;
  if (fs::exists(dir)) rmdir(dir.c_str());
}

}  // namespace
}  // namespace sandprobe
