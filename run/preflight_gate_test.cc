#include "run/preflight_gate.h"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

// A preflight that counts its runs and answers `answer`.
struct CountingPreflight {
  Status answer = Status::Ok();
  std::atomic<int> runs{0};
  std::function<Status()> Fn() {
    return [this] {
      ++runs;
      return answer;
    };
  }
};

std::optional<BackendUnavailable> Unavailable(const std::string& why, bool went_away = false) {
  return BackendUnavailable{why, went_away};
}

TEST(PreflightGateTest, BeforeRunsOnceAheadOfTheFirstLaunchAndBlocksOnFailure) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("backend docker unavailable; install: x");
  PreflightGate gate(PreflightWhen::kBefore, preflight.Fn());
  EXPECT_EQ(gate.BeforeLaunch(), Unavailable("backend docker unavailable; install: x"));
  EXPECT_EQ(gate.BeforeLaunch(), Unavailable("backend docker unavailable; install: x"));
  EXPECT_EQ(preflight.runs, 1);
  EXPECT_EQ(gate.Summary(), "backend docker unavailable; install: x");
}

TEST(PreflightGateTest, BeforeThatPassesLetsLaunchesAndIncompleteOnesThrough) {
  CountingPreflight preflight;
  PreflightGate gate(PreflightWhen::kBefore, preflight.Fn());
  EXPECT_EQ(gate.BeforeLaunch(), std::nullopt);
  // A launch that broke on a present backend is the sandbox's failure, not a missing backend.
  EXPECT_EQ(gate.AfterIncompleteLaunch(), std::nullopt);
  EXPECT_EQ(preflight.runs, 1);
  EXPECT_EQ(gate.Summary(), "ok");
}

TEST(PreflightGateTest, BeforeWithNoLaunchSaysSo) {
  CountingPreflight preflight;
  PreflightGate gate(PreflightWhen::kBefore, preflight.Fn());
  EXPECT_EQ(gate.Summary(), "not run: no probe launch");
  EXPECT_EQ(preflight.runs, 0);
}

TEST(PreflightGateTest, OnFailureNeverRunsWhileLaunchesComplete) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("would fail");
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  EXPECT_EQ(gate.BeforeLaunch(), std::nullopt);
  EXPECT_EQ(gate.BeforeLaunch(), std::nullopt);
  EXPECT_EQ(preflight.runs, 0);
  EXPECT_EQ(gate.Summary(),
            "not run: every probe launch completed (profile preflight: on_failure)");
}

TEST(PreflightGateTest, OnFailureExplainsAnIncompleteLaunchAndBlocksTheRest) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("backend bwrap unavailable; install: apt-get install bubblewrap");
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  EXPECT_EQ(gate.BeforeLaunch(), std::nullopt);
  EXPECT_EQ(gate.AfterIncompleteLaunch(),
            Unavailable("backend bwrap unavailable; install: apt-get install bubblewrap"));
  EXPECT_EQ(gate.BeforeLaunch(), Unavailable("backend bwrap unavailable; install: apt-get install bubblewrap"));
  EXPECT_EQ(gate.AfterIncompleteLaunch(),
            Unavailable("backend bwrap unavailable; install: apt-get install bubblewrap"));
  EXPECT_EQ(preflight.runs, 1);
}

TEST(PreflightGateTest, OnFailureWithAPresentBackendLeavesTheLaunchItsOwnFailure) {
  CountingPreflight preflight;
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  EXPECT_EQ(gate.AfterIncompleteLaunch(), std::nullopt);
  EXPECT_EQ(gate.AfterIncompleteLaunch(), std::nullopt);
  EXPECT_EQ(preflight.runs, 1);
  EXPECT_EQ(gate.Summary(), "ok");
}

// A backend a probe spoke through that then fails its preflight went away mid-run: said so,
// and marked so the run never turns it into skips.
TEST(PreflightGateTest, ABackendThatAnsweredAndThenFailsWentAway) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("backend docker unavailable: no daemon");
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  EXPECT_EQ(gate.BeforeLaunch(), std::nullopt);
  gate.BackendAnswered();
  const std::string why =
      "the backend went away during the run (a probe had answered through it): backend docker unavailable: no daemon";
  EXPECT_EQ(gate.AfterIncompleteLaunch(), Unavailable(why, true));
  EXPECT_EQ(gate.BeforeLaunch(), Unavailable(why, true));
  EXPECT_EQ(gate.Summary(), why);
}

TEST(PreflightGateTest, ABackendThatNeverAnsweredIsMissingNotGone) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("no daemon");
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  EXPECT_EQ(gate.AfterIncompleteLaunch(), Unavailable("no daemon", false));
  gate.BackendAnswered();  // too late: the failure was found first
  EXPECT_EQ(gate.BeforeLaunch(), Unavailable("no daemon", false));
}

TEST(PreflightGateTest, ConcurrentFailuresRunThePreflightOnce) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("gone");
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  std::vector<std::thread> threads;
  std::atomic<int> told{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (gate.AfterIncompleteLaunch() == Unavailable("gone")) ++told;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(told, 8);
  EXPECT_EQ(preflight.runs, 1);
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

class DockerSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sp-sock-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);  // searchable by the unprivileged child below
    socket_ = dir_ + "/docker.sock";
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_.c_str());
    ASSERT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(fd_, 4), 0);
    ::chmod(socket_.c_str(), 0660);  // as dockerd leaves it: root and the docker group
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
    std::filesystem::remove_all(dir_);
  }
  std::string dir_, socket_;
  int fd_ = -1;
};

TEST_F(DockerSocketTest, NoSocketThereOrAFileIsNoSocket) {
  EXPECT_EQ(ProbeDockerSocketAccess("unix://" + dir_ + "/missing.sock"), DockerSocketAccess::kNoSocket);
  EXPECT_EQ(ProbeDockerSocketAccess("unix://" + dir_), DockerSocketAccess::kNoSocket);
}

// A daemon killed with SIGKILL leaves its socket file: connect says nobody listens.
TEST_F(DockerSocketTest, ASocketNobodyListensOnIsADeadDaemon) {
  ::close(fd_);
  fd_ = -1;
  EXPECT_EQ(ProbeDockerSocketAccess("unix://" + socket_), DockerSocketAccess::kNotListening);
}

TEST_F(DockerSocketTest, TheOwnerMayAndAnotherUserMayNot) {
  ASSERT_EQ(::chown(socket_.c_str(), ::geteuid(), ::getegid()), 0);
  EXPECT_EQ(ProbeDockerSocketAccess("unix://" + socket_), DockerSocketAccess::kAllowed);
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to ask as another user";
  // A child that is nobody (in no group of the socket's) asks for itself.
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    gid_t none[] = {65534};
    if (::setgroups(1, none) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(100);
    ::_exit(static_cast<int>(ProbeDockerSocketAccess("unix://" + socket_)));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), static_cast<int>(DockerSocketAccess::kDenied));
}

}  // namespace
}  // namespace sandprobe
