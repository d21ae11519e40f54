// The least any harness that is a process of its own must do, as a measuring stick for
// bench/e2e.py --suites: start, run a run's launches one after another (each argv as recorded,
// its output read to the end through a pipe), and write a file the size of the run's report
// (atomically, as sandprobe writes its reports). No profile, no witnesses, no plan, no judging.
//
// A run's wall over this is what the harness adds beyond what no separate-process harness can
// avoid; the launch floor alone leaves out this process's own start and spawns.
//
// Deliberately not the project's launcher (launch/): that is the thing measured. Linked
// statically, so its start is the cheapest a process start gets here.
//
// Usage: bare_harness ARGV_FILE REPORT_BYTES OUT
//   ARGV_FILE: for each launch, its argc then its arguments, every item ending in a NUL byte.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern char** environ;

namespace {

std::vector<std::vector<std::string>> ReadLaunches(const char* path) {
  std::ifstream in(path, std::ios::binary);
  const std::string all{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> items;
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = all.find('\0', at);
    if (end == std::string::npos) break;
    items.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  std::vector<std::vector<std::string>> launches;
  for (std::size_t i = 0; i < items.size();) {
    const std::size_t argc = std::stoul(items[i++]);
    if (argc == 0 || i + argc > items.size()) {
      std::fprintf(stderr, "bare_harness: %s: a launch of %zu arguments runs past the end\n", path, argc);
      std::exit(2);
    }
    launches.emplace_back(items.begin() + static_cast<long>(i), items.begin() + static_cast<long>(i + argc));
    i += argc;
  }
  return launches;
}

// Runs argv with stdin closed and stdout and stderr on one pipe, read to its end; the exit
// status is not judged (the floor does not judge either).
bool RunOne(const std::vector<std::string>& args) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int failed = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (failed == 0) {
    char buffer[65536];
    while (::read(out[0], buffer, sizeof buffer) > 0) {
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  ::close(out[0]);
  return failed == 0;
}

bool WriteReport(const std::string& path, std::size_t bytes) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string body(bytes, ' ');
  const bool written = ::write(fd, body.data(), body.size()) == static_cast<ssize_t>(body.size());
  return ::close(fd) == 0 && written && ::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: bare_harness ARGV_FILE REPORT_BYTES OUT\n");
    return 2;
  }
  for (const std::vector<std::string>& launch : ReadLaunches(argv[1])) {
    if (!RunOne(launch)) {
      std::fprintf(stderr, "bare_harness: cannot start %s\n", launch[0].c_str());
      return 1;
    }
  }
  if (!WriteReport(argv[3], std::stoul(argv[2]))) {
    std::perror("bare_harness: write the report");
    return 1;
  }
  return 0;
}
