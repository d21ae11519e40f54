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

TEST(PreflightGateTest, BeforeRunsOnceAheadOfTheFirstLaunchAndBlocksOnFailure) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("backend docker unavailable; install: x");
  PreflightGate gate(PreflightWhen::kBefore, preflight.Fn());
  EXPECT_EQ(gate.BeforeLaunch(), "backend docker unavailable; install: x");
  EXPECT_EQ(gate.BeforeLaunch(), "backend docker unavailable; install: x");
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
            "backend bwrap unavailable; install: apt-get install bubblewrap");
  EXPECT_EQ(gate.BeforeLaunch(), "backend bwrap unavailable; install: apt-get install bubblewrap");
  EXPECT_EQ(gate.AfterIncompleteLaunch(),
            "backend bwrap unavailable; install: apt-get install bubblewrap");
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

TEST(PreflightGateTest, ConcurrentFailuresRunThePreflightOnce) {
  CountingPreflight preflight;
  preflight.answer = Status::Error("gone");
  PreflightGate gate(PreflightWhen::kOnFailure, preflight.Fn());
  std::vector<std::thread> threads;
  std::atomic<int> told{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (gate.AfterIncompleteLaunch() == std::optional<std::string>("gone")) ++told;
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

TEST(PreflightHintTest, ADeniedDockerSocketAsksForTheGroupNotAnInstall) {
  const std::string hint = PreflightHint("/usr/bin/docker", DockerSocketAccess::kDenied,
                                         "apt-get install docker.io");
  EXPECT_NE(hint.find("add the user to the docker group"), std::string::npos) << hint;
  EXPECT_EQ(hint.find("apt-get"), std::string::npos) << hint;
}

TEST(PreflightHintTest, OtherwiseTheProfilesInstallHint) {
  EXPECT_EQ(PreflightHint("docker", DockerSocketAccess::kNoSocket, "apt-get install docker.io"),
            "; install: apt-get install docker.io");
  EXPECT_EQ(PreflightHint("docker", DockerSocketAccess::kAllowed, "x"), "; install: x");
  // A socket denied says nothing about another backend's command.
  EXPECT_EQ(PreflightHint("bwrap", DockerSocketAccess::kDenied, "apt-get install bubblewrap"),
            "; install: apt-get install bubblewrap");
  EXPECT_EQ(PreflightHint("bwrap", DockerSocketAccess::kNoSocket, ""), "");
}

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
