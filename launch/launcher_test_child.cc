// launcher_test_child: the process launcher_test starts, one behaviour per mode (argv[1]).
// Plain POSIX, no test framework: it must behave like an arbitrary untrusted command.
#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

void SleepForever() {
  for (;;) pause();
}

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Prints the open fd numbers, without the one used to read /proc/self/fd itself.
int ListFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return 2;
  std::vector<int> fds;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    int fd = atoi(e->d_name);
    if (fd != dirfd(dir)) fds.push_back(fd);
  }
  closedir(dir);
  std::sort(fds.begin(), fds.end());
  for (size_t i = 0; i < fds.size(); ++i) printf(i ? " %d" : "%d", fds[i]);
  return 0;
}

void WritePidFile(const char* pidfile, pid_t pid) {
  std::string tmp = std::string(pidfile) + ".tmp";
  std::ofstream(tmp) << pid << "\n";
  rename(tmp.c_str(), pidfile);  // the test never sees a half-written file
}

// The grandchild ignores SIGTERM (set before fork, so there is no window) and keeps stdout.
int SpawnGrandchild(const char* pidfile, bool parent_exits) {
  signal(SIGTERM, SIG_IGN);
  pid_t pid = fork();
  if (pid < 0) return 2;
  if (pid == 0) SleepForever();
  signal(SIGTERM, SIG_DFL);
  WritePidFile(pidfile, pid);
  if (parent_exits) return 0;
  SleepForever();
  return 0;
}

// A daemon: after `delay_ms`, double fork + setsid, so the grandchild leaves both the process
// group and the session and is orphaned at once; it ignores SIGTERM and sleeps. Its pid goes
// to `pidfile` before its parent exits. Then this process exits or stays (sleeps).
int Daemonize(const char* pidfile, bool stay, int delay_ms) {
  if (delay_ms > 0) usleep(static_cast<useconds_t>(delay_ms) * 1000);
  pid_t middle = fork();
  if (middle < 0) return 2;
  if (middle == 0) {
    if (setsid() < 0) _exit(2);
    signal(SIGTERM, SIG_IGN);
    pid_t daemon = fork();
    if (daemon < 0) _exit(2);
    if (daemon == 0) SleepForever();
    WritePidFile(pidfile, daemon);
    _exit(0);
  }
  int status = 0;
  waitpid(middle, &status, 0);
  if (stay) SleepForever();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

// Some stderr first (more than a pipe buffer), then the stdout flood, then a stderr line:
// a reader that drains one stream at a time deadlocks on this.
int Flood(size_t bytes) {
  std::string err_chunk(100000, 'e');
  if (!WriteAll(2, err_chunk.data(), err_chunk.size())) return 3;
  std::string chunk(65536, 'x');
  while (bytes > 0) {
    size_t n = std::min(bytes, chunk.size());
    if (!WriteAll(1, chunk.data(), n)) return 3;
    bytes -= n;
  }
  return WriteAll(2, "done\n", 5) ? 0 : 3;
}

int Cat() {
  char buf[65536];
  for (;;) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n == 0) return 0;
    if (n < 0 || !WriteAll(1, buf, static_cast<size_t>(n))) return 3;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  const char* arg = argc > 2 ? argv[2] : nullptr;
  if (mode == "fds") return ListFds();
  if (mode == "exit" && arg) return atoi(arg);
  if (mode == "raise" && arg) {
    struct rlimit no_core {};
    setrlimit(RLIMIT_CORE, &no_core);  // no core files from the crash tests
    int sig = atoi(arg);
    signal(sig, SIG_DFL);
    raise(sig);
    return 4;
  }
  if (mode == "sleep") SleepForever();
  if (mode == "leave-group-sleep") {  // joins its parent's group: killpg(own pid) finds nothing
    if (setpgid(0, getpgid(getppid())) != 0) return 2;
    SleepForever();
  }
  if (mode == "ignore-term-sleep") {
    signal(SIGTERM, SIG_IGN);
    SleepForever();
  }
  if (mode == "spawn-grandchild" && arg) {
    bool parent_exits = argc > 3 && std::string(argv[3]) == "exit";
    return SpawnGrandchild(arg, parent_exits);
  }
  if (mode == "daemonize" && arg) {
    bool stay = argc > 3 && std::string(argv[3]) == "stay";
    return Daemonize(arg, stay, argc > 4 ? atoi(argv[4]) : 0);
  }
  if (mode == "pidfile" && arg) {  // its own pid, then sleeps
    WritePidFile(arg, getpid());
    SleepForever();
  }
  if (mode == "pdeathsig") {
    int sig = -1;
    if (prctl(PR_GET_PDEATHSIG, &sig) != 0) return 2;
    printf("%d", sig);
    return 0;
  }
  if (mode == "flood" && arg) return Flood(strtoull(arg, nullptr, 10));
  if (mode == "env" && arg) {
    const char* value = getenv(arg);
    if (!value) return 1;
    printf("%s", value);
    return 0;
  }
  if (mode == "cat") return Cat();
  if (mode == "pgid") {
    printf("%d %d", static_cast<int>(getpid()), static_cast<int>(getpgid(0)));
    return 0;
  }
  fprintf(stderr,
          "usage: launcher_test_child fds | exit N | raise SIGNUM | sleep | leave-group-sleep |\n"
          "  ignore-term-sleep |\n"
          "  spawn-grandchild PIDFILE [exit|sleep] | daemonize PIDFILE [exit|stay] [DELAY_MS] |\n"
          "  pidfile PATH | pdeathsig | flood NBYTES | env NAME | cat | pgid\n");
  return 64;
}
