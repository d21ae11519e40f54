#include "launch/proc_info.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

// A comm with spaces and parentheses must not shift the fields after it.
TEST(ProcInfo, ParsesStatFieldsAfterAnAwkwardComm) {
  std::string text =
      "4242 (we (i) rd) S 17 4242 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
  std::optional<ProcStat> stat = ParseProcStat(text);
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->pid, 4242);
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 17);
  EXPECT_EQ(stat->pgid, 4242);
  EXPECT_EQ(stat->sid, 4240);
  EXPECT_EQ(stat->start_ticks, 987654u);
  EXPECT_FALSE(stat->dead());
}

TEST(ProcInfo, TruncatedStatIsRejected) {
  EXPECT_FALSE(ParseProcStat("12 (x) S 1 12 12 0"));
  EXPECT_FALSE(ParseProcStat("garbage"));
}

TEST(ProcInfo, ReadsItself) {
  std::optional<ProcStat> self = ReadProcStat(getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->pid, getpid());
  EXPECT_EQ(self->ppid, getppid());
  EXPECT_EQ(self->pgid, getpgid(0));
  EXPECT_EQ(self->sid, getsid(0));
  EXPECT_GT(self->start_ticks, 0u);
  std::string cmdline = ReadProcFile(getpid(), "cmdline");
  EXPECT_NE(CmdlineForDisplay(cmdline, 4096).find("launch_test"), std::string::npos);
  std::vector<int> pids = ListPids();
  EXPECT_NE(std::find(pids.begin(), pids.end(), getpid()), pids.end());
}

TEST(ProcInfo, CmdlineForDisplayJoinsAndCaps) {
  using namespace std::string_literals;
  EXPECT_EQ(CmdlineForDisplay("sh\0-c\0sleep 1\0"s, 100), "sh -c sleep 1");
  EXPECT_EQ(CmdlineForDisplay("abcdef\0"s, 3), "abc...");
  EXPECT_EQ(CmdlineForDisplay(""s, 3), "");
}

TEST(ProcInfo, GoneProcessReadsAsNothing) {
  EXPECT_FALSE(ReadProcStat(0x3fffffff));
  EXPECT_EQ(ReadProcFile(0x3fffffff, "cmdline"), "");
}

TEST(ProcInfo, OwnChildrenListsAForkedChild) {
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  std::vector<int> children = ListOwnChildrenOrAllPids();
  EXPECT_NE(std::find(children.begin(), children.end(), child), children.end());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

// This process -> child -> grandchild, both sleeping: the walk finds the grandchild through
// the child's children file, and nothing outside this process's tree.
TEST(ProcInfo, DescendantsIncludeAGrandchild) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::pause();
      ::_exit(0);
    }
    if (::write(fds[1], &grandchild, sizeof grandchild) != sizeof grandchild) ::_exit(1);
    ::waitpid(grandchild, nullptr, 0);  // the child reaps it: the test only ends the child
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t grandchild = 0;
  bool got_grandchild = ::read(fds[0], &grandchild, sizeof grandchild) == sizeof grandchild;
  ::close(fds[0]);
  std::optional<std::vector<int>> below_child = ListDescendants(child);
  std::optional<std::vector<int>> below_self = ListDescendants(::getpid());
  std::vector<int> own = ListOwnDescendantsOrAllPids();
  // Ended before the checks, so a failed one leaves nothing running.
  if (got_grandchild) ::kill(grandchild, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(got_grandchild);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (!below_child) GTEST_SKIP() << "no /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN)";
  EXPECT_EQ(*below_child, std::vector<int>{grandchild});
  ASSERT_TRUE(below_self);
  for (const std::vector<int>* list : {&*below_self, &own}) {
    EXPECT_NE(std::find(list->begin(), list->end(), child), list->end());
    EXPECT_NE(std::find(list->begin(), list->end(), grandchild), list->end());
    EXPECT_EQ(std::find(list->begin(), list->end(), ::getpid()), list->end());
    EXPECT_EQ(std::find(list->begin(), list->end(), ::getppid()), list->end()) << "not a full scan";
  }
}

TEST(ProcInfo, GoneProcessHasNoDescendants) {
  EXPECT_EQ(ListDescendants(0x3fffffff), std::vector<int>{});
}

TEST(ProcInfo, FindsAProcessByAWholeArgvElement) {
  const std::string token = "proc-info-token-" + std::to_string(::getpid());
  pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);  // so the test ends the shell and its sleep together
    // `; :` keeps the shell (and its argv with the token) alive instead of exec'ing sleep.
    ::execlp("sh", "sh", "-c", "sleep 30; :", token.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::vector<HostProcess> found;
  for (int i = 0; i < 100 && found.empty(); ++i) {
    found = FindProcessesWithArg(token);
    if (found.empty()) ::usleep(20000);
  }
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].pid, child);
  EXPECT_EQ(found[0].argv, "sh -c sleep 30; : " + token);
  EXPECT_TRUE(found[0].host_pid_namespace);
  EXPECT_TRUE(FindProcessesWithArg(token.substr(1)).empty()) << "a part of an element is no match";
  ::kill(-child, SIGKILL);
  // The whole group: when an earlier test made this process a child subreaper, the sleep comes
  // back to it once the shell is dead, and would stay a zombie.
  while (::waitpid(-child, nullptr, 0) > 0 || errno == EINTR) {
  }
}

}  // namespace
}  // namespace sandprobe
