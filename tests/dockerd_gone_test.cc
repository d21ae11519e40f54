// dockerd killed during a run (issue 25: every check SKIP, exit 0). The daemon is a PRIVATE one
// this test starts and kills: its own bridge (created here, with an address of its own), data
// root, exec root, pidfile, socket and containerd namespace, no iptables, no ip_forward write,
// no host config file; the machine's dockerd is never touched. It gets the agent image by
// `docker save` from the machine's daemon and `docker load` into the private one. The run talks
// to it through DOCKER_HOST.
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "launch/proc_info.h"
#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using std::chrono::seconds;

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return in ? json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true) : json();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// A dockerd of this test's own. Start() brings it up; Kill() sends a signal to the pid in its
// pidfile. The destructor stops a live one (SIGTERM, after removing its containers); what a
// SIGKILLed one leaves is removed by hand, found by this daemon's own names only: the
// containerd shims of its containerd namespace with the container processes below them, the
// mounts under its directory, the cgroups under its own cgroup parent; then its bridge and
// directory go.
class PrivateDockerd {
 public:
  PrivateDockerd()
      : dir_(MakeTempDir("dockerd")),
        bridge_("spbr" + std::to_string(::getpid() % 1000000)),
        namespace_("sandprobe-test-" + std::to_string(::getpid())) {}
  ~PrivateDockerd() {
    if (started_ && Up()) {
      for (const std::string& id : Lines(Docker({"ps", "-aq"}).out)) (void)Docker({"rm", "-f", id});
      Kill(SIGTERM);
    } else {
      Kill(SIGKILL);
    }
    if (daemon_.joinable()) daemon_.join();
    KillShims();
    Unmount();
    RemoveCgroups();
    if (bridge_made_) RunCommand({"ip", "link", "del", bridge_});
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::string host() const { return "unix://" + dir_ + "/d.sock"; }
  std::string dir() const { return dir_; }

  // "" when the daemon answers, else why not.
  std::string Start() {
    if (!bridge_made_) {
      if (std::string why = MakeBridge(); !why.empty()) return why;
    }
    if (daemon_.joinable()) daemon_.join();  // the killed one's launch has returned
    std::ofstream(dir_ + "/daemon.json") << "{}";
    const std::string ns = namespace_;
    daemon_ = std::thread([this, ns] {
      RunCommand({"sh", "-c", "exec dockerd \"$@\" >>\"$0\" 2>&1", dir_ + "/dockerd.log",
                  "--config-file", dir_ + "/daemon.json", "--host", host(), "--data-root", dir_ + "/data",
                  "--exec-root", dir_ + "/exec", "--pidfile", dir_ + "/dockerd.pid", "--bridge", bridge_,
                  "--iptables=false", "--ip-masq=false", "--ip-forward=false", "--userland-proxy=false",
                  "--storage-driver", "vfs", "--containerd-namespace", ns, "--containerd-plugins-namespace",
                  ns + "-plugins", "--cgroup-parent", "/" + ns, "--log-level", "warn"});
    });
    started_ = true;
    if (!WaitFor([this] { return Up(); }, seconds(60))) return "dockerd did not answer: " + Log();
    return "";
  }

  bool Up() const { return Docker({"version", "--format", "{{.Server.Version}}"}).exit_code == 0; }

  void Kill(int signal_number) const {
    std::ifstream in(dir_ + "/dockerd.pid");
    int pid = 0;
    if (in >> pid && pid > 1) ::kill(pid, signal_number);
  }

  CliRun Docker(std::vector<std::string> args) const {
    args.insert(args.begin(), {"docker", "--host", host()});
    return RunCommand(args);
  }

  std::string Log() const {
    std::ifstream in(dir_ + "/dockerd.log");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.substr(text.size() > 2000 ? text.size() - 2000 : 0);
  }

 private:
  // A bridge of its own with an address no route of this machine uses (10.213.N.1/24).
  std::string MakeBridge() {
    for (int n = ::getpid() % 200 + 20, tries = 0; tries < 30; ++n, ++tries) {
      const std::string net = "10.213." + std::to_string(n) + ".";
      bool taken = false;  // a route other than the default one covers the address
      for (const std::string& route : Lines(RunCommand({"ip", "-o", "route", "show", "match", net + "1"}).out)) {
        taken = taken || !route.starts_with("default");
      }
      if (taken) continue;
      if (RunCommand({"ip", "link", "add", "name", bridge_, "type", "bridge"}).exit_code != 0) return "ip link add failed";
      bridge_made_ = true;
      if (RunCommand({"ip", "addr", "add", net + "1/24", "dev", bridge_}).exit_code != 0 ||
          RunCommand({"ip", "link", "set", bridge_, "up"}).exit_code != 0) {
        return "ip addr/link on " + bridge_ + " failed";
      }
      return "";
    }
    return "no free 10.213.N.0/24";
  }

  // The containerd shims of this daemon's namespace, and every process below them (a container's
  // pid 1 and what it started).
  void KillShims() const {
    for (int shim : Carriers(namespace_)) {  // cmdline is NUL-separated: the name alone
      if (std::optional<std::vector<int>> below = ListDescendants(shim)) {
        for (int pid : *below) ::kill(pid, SIGKILL);
      }
      ::kill(shim, SIGKILL);
    }
    WaitFor([this] { return Carriers(namespace_).empty(); }, seconds(10));
  }

  // Mounts under dir_ (the data root's private bind, network namespaces), deepest first.
  void Unmount() const {
    std::vector<std::string> mounts;
    std::ifstream in("/proc/self/mountinfo");
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string id, parent, device, root, point;
      fields >> id >> parent >> device >> root >> point;
      if (point.rfind(dir_ + "/", 0) == 0) mounts.push_back(point);
    }
    std::sort(mounts.rbegin(), mounts.rend());
    for (const std::string& point : mounts) ::umount2(point.c_str(), MNT_DETACH);
  }

  // The cgroups dockerd made under its own parent (--cgroup-parent /namespace_), in every
  // hierarchy (v1: one per controller; v2: the unified one), children first.
  void RemoveCgroups() const {
    std::vector<fs::path> roots = {fs::path("/sys/fs/cgroup") / namespace_};
    std::error_code ec;
    for (const auto& hierarchy : fs::directory_iterator("/sys/fs/cgroup", ec)) {
      roots.push_back(hierarchy.path() / namespace_);
    }
    for (const fs::path& root : roots) {
      if (!fs::is_directory(root, ec)) continue;
      std::vector<fs::path> dirs;
      for (const auto& entry : fs::recursive_directory_iterator(root, ec)) {
        if (entry.is_directory(ec)) dirs.push_back(entry.path());
      }
      std::sort(dirs.rbegin(), dirs.rend());
      for (const fs::path& dir : dirs) ::rmdir(dir.c_str());
      ::rmdir(root.c_str());
    }
  }

  const std::string dir_;
  const std::string bridge_;
  const std::string namespace_;
  bool bridge_made_ = false;
  bool started_ = false;
  std::thread daemon_;
};

// docker-hardened whose container waits 3 s before the probe (the persistence launches 8 s):
// long enough to kill the daemon while a launch is running. The shared launch and persistence's
// plant run side by side (one-shot profiles: run/scheduler.h overlap chains); the longer wait
// makes the shared launch the one that answers first.
std::string SlowDockerProfile(const std::string& dir) {
  json profile = ReadJson(SourcePath("sandboxes/docker-hardened.json"));
  profile["name"] = "docker-hardened-slow";
  profile["policy"] = SourcePath("policies/tier-low.json");
  json run = json::array();
  for (const json& item : profile["run"]) {
    if (item == "{probe}") {
      for (const char* wrap : {"sh", "-c", "case \"$*\" in *persist.*) sleep 8 ;; *) sleep 3 ;; esac; exec \"$0\" \"$@\""}) {
        run.push_back(wrap);
      }
    }
    run.push_back(item);
  }
  profile["run"] = run;
  const std::string path = dir + "/docker-hardened-slow.json";
  std::ofstream(path) << profile.dump(2);
  return path;
}

struct KilledRun {
  CliRun run;
  json report;
  std::size_t containers_seen = 0;
  std::size_t launches_done = 0;  // containers seen that had ended when the daemon was killed
};

// Runs the default and persistence suites (the shared launch beside persistence's plant, then
// its check) against the private daemon and SIGKILLs the daemon once `answered` launches' containers
// have come and gone while another launch's container is running.
KilledRun RunAndKillDaemon(PrivateDockerd& dockerd, std::size_t answered, const std::vector<std::string>& extra) {
  const std::string out = MakeTempDir("dockerd-gone");
  const std::string profile = SlowDockerProfile(out);
  std::vector<std::string> argv = {"env", "DOCKER_HOST=" + dockerd.host(), "SANDPROBE_RUN_ROOT=" + dockerd.dir(),
                                   SANDPROBE_CLI, "run", "--sandbox", profile, "--suite", "default,persistence",
                                   "--no-color", "--json", out + "/r.json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  KilledRun killed;
  std::thread runner([&] { killed.run = RunCommand(argv); });
  std::set<std::string> seen;
  const bool reached = WaitFor(
      [&] {
        std::size_t running = 0;
        for (const std::string& id : Lines(dockerd.Docker({"ps", "-q", "--no-trunc", "--filter", "label=sandprobe.run"}).out)) {
          seen.insert(id);
          ++running;
        }
        killed.launches_done = seen.size() - running;
        return running > 0 && killed.launches_done >= answered;
      },
      seconds(120));
  killed.containers_seen = seen.size();
  if (reached) dockerd.Kill(SIGKILL);
  runner.join();
  killed.report = ReadJson(out + "/r.json");
  return killed;
}

bool Prerequisites() {
  if (::geteuid() != 0) {
    ADD_FAILURE() << "starts a private dockerd: the test must run as root";
    return false;
  }
  if (!BackendAvailable("docker", kDockerUp)) return false;
  return BackendAvailable("dockerd", {"dockerd", "--version"}) && BackendAvailable("ip", {"ip", "-V"});
}

// Loads the machine's agent image into the private daemon.
std::string LoadAgentImage(const PrivateDockerd& dockerd) {
  const std::string tar = dockerd.dir() + "/agent.tar";
  CliRun saved = RunCommand({"docker", "save", "-o", tar, "sandprobe/agent:latest"});
  if (saved.exit_code != 0) return "docker save: " + saved.err;
  CliRun loaded = dockerd.Docker({"load", "-i", tar});
  return loaded.exit_code == 0 ? "" : "docker load: " + loaded.err;
}

// Killed while the first launch runs: the backend never answered, its preflight finds no daemon
// behind the socket the killed one left. Exit 3, every check error, the cause "daemon down".
TEST(DockerdGoneTest, DockerdKilledDuringTheFirstLaunchIsExit3DaemonDown) {
  if (!Prerequisites()) return;
  PrivateDockerd dockerd;
  ASSERT_EQ(dockerd.Start(), "");
  ASSERT_EQ(LoadAgentImage(dockerd), "");
  KilledRun killed = RunAndKillDaemon(dockerd, 0, {});
  ASSERT_GE(killed.containers_seen, 1u) << killed.run.out << killed.run.err;
  ASSERT_EQ(killed.launches_done, 0u) << killed.run.out << killed.run.err;
  EXPECT_EQ(killed.run.exit_code, 3) << killed.run.out << killed.run.err;
  ASSERT_TRUE(killed.report.is_object()) << killed.run.err;
  for (const json& check : killed.report["checks"]) {
    EXPECT_EQ(check["verdict"], "error") << check["id"] << ": " << check["observed"];
  }
  const std::string observed = CheckField(killed.report, "fs.read.denied:/etc/shadow", "observed");
  EXPECT_THAT(observed, HasSubstr("cause: daemon down: nothing listens on " + dockerd.dir() + "/d.sock"));
  EXPECT_THAT(killed.run.out, HasSubstr("exit 3: "));

  // What the run could not remove (its container: the daemon is gone) is left for a sweep.
  EXPECT_NE(killed.report.value("left_for_sweep", ""), "");
}

// Killed during the second launch, after the first one's probe answered through it: the backend
// went away, which --allow-missing-backend (for a backend that may be absent) does not excuse.
// What the first launch proved stays judged; every check left without evidence is an error.
TEST(DockerdGoneTest, ABackendThatWentAwayIsExit3EvenWhenMissingBackendsAreAllowed) {
  if (!Prerequisites()) return;
  PrivateDockerd dockerd;
  ASSERT_EQ(dockerd.Start(), "");
  ASSERT_EQ(LoadAgentImage(dockerd), "");
  // The private daemon stores images with the vfs driver: a container's / is a plain directory
  // of its data root, which fs.mounts.host-dirs rightly calls a host directory (a fail, exit 1,
  // which outranks 3). That finding is the test daemon's, not what this test is about.
  KilledRun killed = RunAndKillDaemon(dockerd, 1, {"--allow-missing-backend", "--skip", "fs.mounts.host-dirs"});
  ASSERT_EQ(killed.launches_done, 1u) << killed.run.out << killed.run.err;
  EXPECT_EQ(killed.run.exit_code, 3) << killed.run.out << killed.run.err;
  ASSERT_TRUE(killed.report.is_object()) << killed.run.err;
  EXPECT_EQ(killed.report["summary"]["skip"].get<int>(), 0) << killed.report["summary"];
  ExpectVerdict(killed.report, "fs.read.denied:/etc/shadow", "pass");  // from the first launch
  int went_away = 0;
  for (const json& check : killed.report["checks"]) {
    if (check["verdict"] != "error") continue;
    EXPECT_THAT(check["observed"].get<std::string>(), HasSubstr("the backend went away during the run")) << check["id"];
    ++went_away;
  }
  EXPECT_GT(went_away, 0);
}

}  // namespace
}  // namespace sandprobe::testing
