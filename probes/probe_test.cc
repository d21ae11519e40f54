// Tests for sandprobe-probe: the helpers directly, and the built static binary end to end (run
// with fork+exec, as a sandbox would run it), so a broken frame, fact or bound fails here.
#include <elf.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/families.h"
#include "contract/frame_writer.h"
#include "contract/mountinfo.h"
#include "contract/sha256.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kProbe[] = SANDPROBE_PROBE_BINARY;
constexpr char kNonce[] = "t3st-N0nce";
constexpr uid_t kNobody = 65534;

struct ProbeRun {
  int exit_code = -1;  // -1 when a signal ended it
  std::string out;
  std::string err;
};

struct RunOptions {
  std::vector<std::string> env;    // the child's whole environment
  bool as_nobody = false;          // drop to uid/gid 65534 first (when the test runs as root)
  int stall_before_read_ms = 0;    // leave stdout unread this long (fills the pipe)
};

RunOptions AsNobody() {
  RunOptions opts;
  opts.as_nobody = true;
  return opts;
}

void ReadInto(int fd, std::string& sink, bool& open) {
  char buf[65536];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0) {
    sink.append(buf, static_cast<std::size_t>(n));
  } else if (n == 0 || errno != EINTR) {
    open = false;
  }
}

// Runs the probe binary with `args`; captures stdout and stderr separately.
ProbeRun RunProbe(const std::vector<std::string>& args, const RunOptions& opts = {}) {
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) ADD_FAILURE() << "pipe: " << errno;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]), ::close(err_pipe[0]), ::close(out_pipe[1]), ::close(err_pipe[1]);
    if (opts.as_nobody && ::geteuid() == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) {
        ::_exit(99);
      }
    }
    std::vector<char*> argv = {const_cast<char*>(kProbe)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const std::string& e : opts.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    ::execve(kProbe, argv.data(), envp.data());
    ::_exit(98);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (opts.stall_before_read_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(opts.stall_before_read_ms));
  }
  ProbeRun run;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0},
                     {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    if (::poll(fds, 2, 10'000) <= 0) break;  // a hung probe fails the test, not the suite
    if (fds[0].revents != 0) ReadInto(out_pipe[0], run.out, out_open);
    if (fds[1].revents != 0) ReadInto(err_pipe[0], run.err, err_open);
  }
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Every stdout line must be a frame with our nonce; returns the parsed facts in order.
std::vector<json> Frames(const ProbeRun& run) {
  std::vector<json> facts;
  const std::string prefix = std::string("@@sandprobe ") + kNonce + " ";
  for (const std::string& line : Lines(run.out)) {
    EXPECT_EQ(line.rfind(prefix, 0), 0u) << "not a frame: " << line;
    if (line.rfind(prefix, 0) != 0) continue;
    facts.push_back(json::parse(line.substr(prefix.size())));
  }
  EXPECT_TRUE(run.out.empty() || run.out.back() == '\n') << "last frame cut off";
  return facts;
}

// The facts of one family between hello and done, after checking the stream's shape.
std::vector<json> Facts(const ProbeRun& run, const std::string& family) {
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::vector<json> frames = Frames(run);
  EXPECT_GE(frames.size(), 2u);
  if (frames.size() < 2) return {};
  EXPECT_EQ(frames.front().value("family", ""), "hello");
  EXPECT_EQ(frames.back(), json({{"done", true}}));
  std::vector<json> facts;
  for (const json& f : frames) {
    if (f.value("family", "") == family) facts.push_back(f);
  }
  return facts;
}

std::vector<std::string> Args(std::vector<std::string> rest) {
  rest.insert(rest.begin(), {"--nonce", kNonce});
  return rest;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "probe_test.XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());  // mode 0700
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, ec);
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

 private:
  std::string path_;
};

// --- helpers -------------------------------------------------------------------------------

TEST(Sha256Hex, MatchesKnownDigest) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(ErrnoName, NamesKnownValuesAndNumbersTheRest) {
  EXPECT_EQ(ErrnoName(EACCES), "EACCES");
  EXPECT_EQ(ErrnoName(ENOENT), "ENOENT");
  EXPECT_EQ(ErrnoName(EROFS), "EROFS");
  EXPECT_EQ(ErrnoName(EPERM), "EPERM");
  EXPECT_EQ(ErrnoName(99999), "E99999");
  // One name per aliased value, as the host side compares them.
  EXPECT_EQ(ErrnoName(EWOULDBLOCK), "EAGAIN");
  EXPECT_EQ(ErrnoName(ENOTSUP), "EOPNOTSUPP");
  EXPECT_EQ(ErrnoName(EDEADLOCK), "EDEADLK");
}

TEST(Frame, InvalidUtf8IsReplacedAndKeptAsHex) {
  json fact;
  SetBytesField(fact, "path", std::string("/tmp/\xff", 6));
  EXPECT_EQ(fact["path_hex"], "2f746d702fff");
  const std::string line = FormatFrame("n", fact);
  EXPECT_TRUE(IsValidUtf8(line));
  EXPECT_EQ(line.rfind("@@sandprobe n {", 0), 0u);
  EXPECT_EQ(line.back(), '\n');
  json plain;
  SetBytesField(plain, "path", "/etc/h\xc3\xa9");  // valid UTF-8: no hex twin
  EXPECT_FALSE(plain.contains("path_hex"));
}

TEST(DotDotAlias, ClimbsToRootFromScratchDepth) {
  EXPECT_EQ(DotDotAlias("/tmp", "/etc/shadow"), "/tmp/../etc/shadow");
  EXPECT_EQ(DotDotAlias("/a/b/", "/x"), "/a/b/../../x");
  EXPECT_EQ(DotDotAlias("/", "/etc/shadow"), "/etc/shadow");
}

// --- fs.read ---------------------------------------------------------------------------------

TEST(FsRead, HashesFileContent) {
  TempDir dir;
  const std::string file = dir.Write("f", "hello\n");
  const auto facts = Facts(RunProbe(Args({"fs.read", file})), "fs.read");
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]["path"], file);
  EXPECT_EQ(facts[0]["ok"], true);
  EXPECT_EQ(facts[0]["kind"], "file");
  EXPECT_EQ(facts[0]["bytes"], 6);
  EXPECT_EQ(facts[0]["truncated"], false);
  EXPECT_EQ(facts[0]["sha256"],
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(facts[0]["dev"], std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)));
  EXPECT_EQ(facts[0]["ino"], st.st_ino);
}

TEST(FsRead, ReadsAtMost4KiB) {
  TempDir dir;
  const std::string file = dir.Write("big", std::string(5000, 'a'));
  const auto facts = Facts(RunProbe(Args({"fs.read", file})), "fs.read");
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]["bytes"], 4096);
  EXPECT_EQ(facts[0]["truncated"], true);
  EXPECT_EQ(facts[0]["sha256"], Sha256Hex(std::string(4096, 'a')));
}

TEST(FsRead, ListsDirectorySortedWithoutDots) {
  TempDir dir;
  for (const char* name : {"b", "a", "c"}) dir.Write(name, "");
  const auto facts = Facts(RunProbe(Args({"fs.read", dir.path()})), "fs.read");
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]["kind"], "dir");
  EXPECT_EQ(facts[0]["entries"], 3);
  EXPECT_EQ(facts[0]["sha256"], Sha256Hex("a\nb\nc"));
}

TEST(FsRead, NamesEnoentAndEacces) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);  // uid 65534 may look inside
  const std::string secret = dir.Write("secret", "s");
  ASSERT_EQ(::chmod(secret.c_str(), 0), 0);  // but not read this, nor may a non-root owner
  const auto facts = Facts(
      RunProbe(Args({"fs.read", dir.path() + "/missing", secret}), AsNobody()),
      "fs.read");
  ASSERT_EQ(facts.size(), 2u);
  EXPECT_EQ(facts[0]["ok"], false);
  EXPECT_EQ(facts[0]["step"], "open");
  EXPECT_EQ(facts[0]["errno"], "ENOENT");
  EXPECT_EQ(facts[1]["ok"], false);
  EXPECT_EQ(facts[1]["step"], "open");
  EXPECT_EQ(facts[1]["errno"], "EACCES");
}

TEST(FsRead, FifoDoesNotHang) {
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto facts = Facts(RunProbe(Args({"--deadline-ms", "5000", "fs.read", fifo})), "fs.read");
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]["kind"], "other");
}

TEST(FsRead, NonUtf8PathGetsHexTwin) {
  TempDir dir;
  const std::string odd = dir.path() + "/\xff";
  const ProbeRun run = RunProbe(Args({"fs.read", odd}));
  EXPECT_TRUE(IsValidUtf8(run.out));
  const auto facts = Facts(run, "fs.read");
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]["path_hex"], HexEncode(odd));
}

// --- fs.write --------------------------------------------------------------------------------

TEST(FsWrite, CreatesAndRemovesNonceFile) {
  TempDir dir;
  const auto facts = Facts(RunProbe(Args({"fs.write", dir.path()})), "fs.write");
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]["ok"], true);
  EXPECT_EQ(facts[0]["created"], true);
  EXPECT_EQ(facts[0]["removed"], true);
  EXPECT_EQ(facts[0]["ro_mount"], false);
  // The second source: the holding mount in /proc/self/mountinfo.
  EXPECT_EQ(facts[0]["mountinfo_ro"], false);
  EXPECT_TRUE(facts[0]["mount_point"].is_string()) << facts[0].dump();
  EXPECT_TRUE(fs::is_empty(dir.path())) << "the probe left its nonce file behind";
}

TEST(FsWrite, ReportsEnoentAndEacces) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0555), 0);  // unwritable for uid 65534 and the owner
  const auto facts = Facts(
      RunProbe(Args({"fs.write", dir.path() + "/missing", dir.path()}), AsNobody()),
      "fs.write");
  ASSERT_EQ(facts.size(), 2u);
  EXPECT_EQ(facts[0]["ok"], false);
  EXPECT_EQ(facts[0]["step"], "open");
  EXPECT_EQ(facts[0]["created"], false);
  EXPECT_EQ(facts[0]["ro_mount"], nullptr);  // statvfs can't reach it either
  EXPECT_EQ(facts[1]["errno"], "EACCES");
  EXPECT_EQ(facts[1]["created"], false);
}

// --- fs.alias --------------------------------------------------------------------------------

TEST(FsAlias, ReadsThroughEveryVariant) {
  TempDir scratch, target_dir;
  const std::string target = target_dir.Write("t", "alias me");
  const auto facts = Facts(
      RunProbe(Args({"fs.alias", "--scratch", scratch.path(), target})), "fs.alias");
  ASSERT_EQ(facts.size(), 4u);
  std::map<std::string, json> by_variant;
  for (const json& f : facts) by_variant[f["variant"]] = f;
  // mount_root: the file is at its own name only, so no other mount holds it.
  json mount_root = by_variant["mount_root"];
  by_variant.erase("mount_root");
  EXPECT_EQ(mount_root["path"], target);
  EXPECT_TRUE(mount_root["hits"].is_array()) << mount_root.dump();
  EXPECT_GT(mount_root["tried"].get<int>(), 0) << mount_root.dump();
  EXPECT_EQ(by_variant["dotdot"]["via"], DotDotAlias(scratch.path(), target));
  EXPECT_EQ(by_variant["proc_root"]["via"], "/proc/self/root" + target);
  EXPECT_EQ(by_variant["symlink"]["via"],
            scratch.path() + "/.sandprobe-" + kNonce + "-link-0");
  for (const auto& [variant, f] : by_variant) {
    EXPECT_EQ(f["path"], target);
    EXPECT_EQ(f["ok"], true) << f.dump();
    EXPECT_EQ(f["sha256"], Sha256Hex("alias me")) << f.dump();
  }
  EXPECT_TRUE(fs::is_empty(scratch.path())) << "the probe left its symlink behind";
}

TEST(FsAlias, ReportsFailedSymlink) {
  TempDir dir;
  const auto facts = Facts(
      RunProbe(Args({"fs.alias", "--scratch", dir.path() + "/missing", "/etc/hostname"})),
      "fs.alias");
  ASSERT_EQ(facts.size(), 4u);
  EXPECT_EQ(facts[2]["variant"], "symlink");
  EXPECT_EQ(facts[2]["ok"], false);
  EXPECT_EQ(facts[2]["step"], "symlink");
  EXPECT_EQ(facts[2]["errno"], "ENOENT");
}

// /proc is a mount of its own: "/self/status" does not exist at the root, but under the /proc
// mount point it does. That is the door mount_root looks for (e.g. /host + /etc/shadow).
TEST(FsAlias, MountRootFindsThePathUnderAnotherMount) {
  TempDir scratch;
  const auto facts = Facts(
      RunProbe(Args({"fs.alias", "--scratch", scratch.path(), "/self/status"})), "fs.alias");
  ASSERT_EQ(facts.size(), 4u);
  const json& f = facts[3];
  EXPECT_EQ(f["variant"], "mount_root");
  EXPECT_EQ(f["ok"], true) << f.dump();
  bool via_proc = false;
  for (const json& hit : f["hits"]) via_proc = via_proc || hit["via"] == "/proc/self/status";
  EXPECT_TRUE(via_proc) << f.dump();
}

TEST(Mountinfo, ParsesFieldsEscapesAndOptionalTags) {
  bool truncated = true;
  auto mounts = ParseMountinfo(
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
      "42 27 254:0 /var/lib/my\\040dir /mnt/a\\040b ro,relatime shared:1 master:2 - ext4 /dev/vda rw\n"
      "garbage line\n"
      "43 27 0:25 / /tmp rw - tmpfs tmpfs rw,size=4k\n",
      &truncated);
  EXPECT_FALSE(truncated);
  ASSERT_EQ(mounts.size(), 3u);
  EXPECT_EQ(mounts[1].mount_id, 42);
  EXPECT_EQ(mounts[1].major, 254u);
  EXPECT_EQ(mounts[1].root, "/var/lib/my dir");
  EXPECT_EQ(mounts[1].mount_point, "/mnt/a b");
  EXPECT_EQ(mounts[1].fstype, "ext4");
  EXPECT_EQ(mounts[1].source, "/dev/vda");
  EXPECT_TRUE(HasMountOption(mounts[1].mount_options, "ro"));
  EXPECT_FALSE(HasMountOption(mounts[2].super_options, "ro"));
  EXPECT_FALSE(HasMountOption("rootcontext=x", "ro"));
  EXPECT_EQ(MountHolding(mounts, "/tmp/x")->mount_point, "/tmp");
  EXPECT_EQ(MountHolding(mounts, "/tmpx")->mount_point, "/");
  EXPECT_EQ(MountHolding(mounts, "/mnt/a b")->mount_id, 42);
}

TEST(FsMounts, ReportsEveryMountAndASummary) {
  const auto facts = Facts(RunProbe(Args({"fs.mounts"})), "fs.mounts");
  ASSERT_GE(facts.size(), 2u);
  const json& summary = facts.back();
  EXPECT_EQ(summary["variant"], "summary");
  EXPECT_EQ(summary["ok"], true);
  EXPECT_EQ(summary["mounts"], facts.size() - 1);
  bool root = false;
  for (std::size_t i = 0; i + 1 < facts.size(); ++i) {
    root = root || facts[i]["path"] == "/";
    EXPECT_EQ(facts[i]["variant"], "id:" + std::to_string(facts[i]["mount_id"].get<int>()));
    EXPECT_TRUE(facts[i]["dev"].is_string());
  }
  EXPECT_TRUE(root);
}

// --- env.secret ------------------------------------------------------------------------------

TEST(EnvSecret, FindsSecretByHashInOwnAndOtherEnvirons) {
  const std::string value = "tok-" + std::to_string(::getpid()) + "-value";
  const std::string var = "SANDPROBE_TEST_SECRET=" + value;
  // Another process holding the secret, as the harness's launcher would.
  const pid_t holder = ::fork();
  if (holder == 0) {
    char* argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("30"), nullptr};
    char* envp[] = {const_cast<char*>(var.c_str()), nullptr};
    ::execve(argv[0], argv, envp);
    ::_exit(98);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let it exec
  RunOptions with_secret;
  with_secret.env = {var};
  const ProbeRun run = RunProbe(Args({"env.secret", "SANDPROBE_TEST_"}), with_secret);
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);

  EXPECT_EQ(run.out.find(value), std::string::npos) << "the value itself was reported";
  const auto facts = Facts(run, "env.secret");
  ASSERT_GE(facts.size(), 3u);
  const std::string holder_source = "/proc/" + std::to_string(holder) + "/environ";
  bool in_environ = false, in_holder = false;
  for (const json& f : facts) {
    if (f.contains("summary")) continue;
    EXPECT_EQ(f["name"], "SANDPROBE_TEST_SECRET");
    EXPECT_EQ(f["sha256"], Sha256Hex(value));
    in_environ |= f["source"] == "environ";
    in_holder |= f["source"] == holder_source;
  }
  EXPECT_TRUE(in_environ);
  EXPECT_TRUE(in_holder) << run.out;
  const json& summary = facts.back();
  EXPECT_EQ(summary["summary"], true);
  EXPECT_GE(summary["matches"], 2);
  EXPECT_GE(summary["environs_readable"], 1);
  EXPECT_GE(summary["processes_scanned"], summary["environs_readable"]);
}

// --- protocol --------------------------------------------------------------------------------

// persist.plant then persist.check: files found (kept with --keep, removed without), the same
// directory under two names marked, and the background process found and ended by the check.
TEST(Persist, PlantThenCheckFindsTokenAndBackgroundProcess) {
  TempDir a, b;
  const std::string token = "PersistTok" + std::to_string(::getpid());
  const fs::path alias = fs::path(b.path()) / "alias";
  fs::create_directory_symlink(a.path(), alias);
  auto planted = Facts(RunProbe(Args({"persist.plant", "--token", token, "--background-seconds",
                                      "30", a.path(), alias.string(), b.path() + "/missing"})),
                       "persist.plant");
  ASSERT_EQ(planted.size(), 4u);
  EXPECT_EQ(planted[0]["ok"], true);
  EXPECT_EQ(planted[1]["same_as"], a.path());
  EXPECT_EQ(planted[2]["ok"], false);
  EXPECT_EQ(planted[2]["errno"], "ENOENT");
  EXPECT_EQ(planted[3]["path"], "background-process");
  ASSERT_EQ(planted[3]["ok"], true);
  const int pid = planted[3]["pid"].get<int>();
  EXPECT_EQ(::kill(pid, 0), 0) << "the background process should outlive the plant";

  auto kept = Facts(RunProbe(Args({"persist.check", "--token", token, "--keep", a.path()})),
                    "persist.check");
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0]["present"], true);
  EXPECT_FALSE(kept[0].contains("removed"));
  EXPECT_EQ(kept[1]["present"], true);
  EXPECT_EQ(::kill(pid, 0), 0) << "--keep must not end the process";

  auto checked = Facts(RunProbe(Args({"persist.check", "--token", token, a.path(), b.path()})),
                       "persist.check");
  ASSERT_EQ(checked.size(), 3u);
  EXPECT_EQ(checked[0]["present"], true);
  EXPECT_EQ(checked[0]["removed"], true);
  EXPECT_EQ(checked[1]["present"], false);
  EXPECT_EQ(checked[2]["present"], true);
  EXPECT_EQ(checked[2]["pids"], json::array({pid}));
  // Killed by the check; it is our grandchild's orphan, reparented away, so poll for its end.
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  EXPECT_TRUE(line.empty() || line.find(") Z ") != std::string::npos) << line;
  EXPECT_TRUE(fs::is_empty(a.path()));
}

TEST(Persist, RejectsBadArguments) {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"persist.plant", "--token", "bad token", "/tmp"},
        {"persist.plant", "--token", "T", "relative"},
        {"persist.plant", "--keep", "--token", "T", "/tmp"},
        {"persist.check", "--token", "T", "--background-seconds", "3", "/tmp"}}) {
    EXPECT_EQ(RunProbe(Args(bad)).exit_code, 2) << bad[0] << " " << bad[1] << " " << bad[2];
  }
}

TEST(Protocol, HelloFirstDoneLastEveryLineFramed) {
  const ProbeRun run = RunProbe(Args({"fs.read", "/"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto frames = Frames(run);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0]["family"], "hello");
  EXPECT_TRUE(frames[0]["pid"].is_number());
  EXPECT_EQ(frames[0]["uid"], ::getuid());
  EXPECT_EQ(frames[0]["euid"], ::geteuid());
  EXPECT_EQ(frames[0]["gid"], ::getgid());
  EXPECT_TRUE(frames[0]["cwd"].is_string());
  EXPECT_EQ(frames[1]["family"], "fs.read");
  EXPECT_EQ(frames[2], json({{"done", true}}));
}

TEST(Protocol, NextRunsSeveralFamiliesInOrder) {
  TempDir dir;
  const ProbeRun run = RunProbe(Args({"fs.read", "/", "--next", "fs.write", dir.path(),
                                      "--next", "env.secret", "SANDPROBE_NONE_"}));
  std::vector<std::string> families;
  for (const json& f : Frames(run)) families.push_back(f.value("family", "done"));
  EXPECT_THAT(families, testing::ElementsAre("hello", "fs.read", "fs.write", "env.secret",
                                             "done"));
}

TEST(Protocol, BadUsageExits2WithoutFrames) {
  const std::vector<std::vector<std::string>> bad = {
      {"fs.read", "/"},                                // no nonce
      {"--nonce", "has space", "fs.read", "/"},        // unusable nonce
      {"--nonce", "n", "no.such.family", "/"},         // unknown family
      {"--nonce", "n", "fs.read"},                     // no paths
      {"--nonce", "n", "fs.read", "/", "--next"},      // dangling --next
      {"--nonce", "n", "fs.alias", "/etc/shadow"},     // no --scratch
      {"--nonce", "n", "--deadline-ms", "0", "fs.read", "/"},
      {"--nonce", "n", "fs.read", "/", "--next", "bogus"},  // error after a valid family
  };
  for (const auto& args : bad) {
    const ProbeRun run = RunProbe(args);
    EXPECT_EQ(run.exit_code, 2) << testing::PrintToString(args);
    EXPECT_EQ(run.out, "") << testing::PrintToString(args);
    EXPECT_NE(run.err, "") << testing::PrintToString(args);
  }
}

TEST(Protocol, TooManyPathsIsBadUsage) {
  std::vector<std::string> args = Args({"fs.read"});
  for (std::size_t i = 0; i <= kMaxPathsPerFamily; ++i) args.push_back("/");
  EXPECT_EQ(RunProbe(args).exit_code, 2);
}

TEST(Protocol, DeadlineExits124WithoutDone) {
  // 4000 facts (~150 KiB) overflow the unread pipe, so the probe blocks in write(2) until its
  // 300 ms deadline fires; it must stop there with whole frames and no done frame.
  std::vector<std::string> args = Args({"--deadline-ms", "300", "fs.read"});
  for (int i = 0; i < 4000; ++i) args.push_back("/dev/null");
  RunOptions stall;
  stall.stall_before_read_ms = 1500;
  const ProbeRun run = RunProbe(args, stall);
  EXPECT_EQ(run.exit_code, 124) << run.err;
  const auto frames = Frames(run);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.front()["family"], "hello");
  EXPECT_LT(frames.size(), 4001u);
  EXPECT_FALSE(frames.back().contains("done"));
}

// --- priv.syscalls: real arguments ----------------------------------------------------------

// The first line of a small file, or "" when it cannot be read.
std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Whether this test process runs without a seccomp filter (the kernel answers every call).
bool Unfiltered() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Seccomp:", 0) == 0) return line.find('0') != std::string::npos;
  }
  return false;
}

// Each real attempt ends exactly one way, named; the real calls run as nobody, whom the kernel
// itself refuses a mount namespace, and the TIOCSTI into the probe's own controlling pty works
// exactly when the kernel allows unprivileged TIOCSTI: that proves the pty became the child's
// controlling terminal (TIOCSTI into any other terminal needs CAP_SYS_ADMIN: EPERM).
TEST(PrivSyscalls, RealArgumentAttemptsEachEndOneWay) {
  const auto facts = Facts(RunProbe(Args({"priv.syscalls", "clone", "ioctl", "socket(AF_NETLINK)",
                                          "socket(AF_BLUETOOTH)"}),
                                    AsNobody()),
                           "priv.syscalls");
  std::map<std::string, json> by_row;
  for (const json& f : facts) {
    if (f.contains("path")) by_row[f["path"]] = f;
  }
  ASSERT_EQ(by_row.size(), 4u);
  std::map<std::string, json> attempt;
  for (const auto& [row, fact] : by_row) {
    ASSERT_TRUE(fact["real"].is_array()) << fact.dump();
    EXPECT_FALSE(fact["real"].empty()) << row;
    for (const json& a : fact["real"]) {
      int ends = 0;
      for (const char* key : {"returned", "errno", "signal", "not_tried", "timed_out"}) ends += a.contains(key);
      EXPECT_EQ(ends, 1) << a.dump();
      attempt[a.value("call", "")] = a;
    }
  }
  EXPECT_EQ(attempt["clone(CLONE_NEWNS)"].value("errno", ""), "EPERM") << attempt["clone(CLONE_NEWNS)"].dump();
  if (!Unfiltered()) GTEST_SKIP() << "this test runs under a seccomp filter: the kernel's own answers are not checked";
  EXPECT_EQ(by_row["clone"].value("errno", ""), "EINVAL") << by_row["clone"].dump();
  EXPECT_EQ(by_row["socket(AF_BLUETOOTH)"].value("errno", ""), "EINVAL") << by_row["socket(AF_BLUETOOTH)"].dump();
  if (::access("/dev/ptmx", F_OK) != 0) GTEST_SKIP() << "no /dev/ptmx: the pty attempts were not made";
  const json& linux = attempt["ioctl(own pty, TIOCLINUX, TIOCL_GETFGCONSOLE)"];
  EXPECT_EQ(linux.value("errno", ""), "ENOTTY") << linux.dump();
  const json& sti = attempt["ioctl(own pty, TIOCSTI, '\\n') as its controlling terminal"];
  ASSERT_TRUE(sti.is_object() && linux.is_object()) << "attempts missing";
  const std::string legacy = FirstLine("/proc/sys/dev/tty/legacy_tiocsti");
  if (legacy == "1") {
    EXPECT_TRUE(sti.value("returned", false)) << sti.dump();
  }
  if (legacy == "0") {
    EXPECT_EQ(sti.value("errno", ""), "EIO") << sti.dump();
  }
}

TEST(Binary, IsStaticWithoutInterpreter) {
  std::ifstream elf(kProbe, std::ios::binary);
  ASSERT_TRUE(elf) << kProbe;
  Elf64_Ehdr header{};
  elf.read(reinterpret_cast<char*>(&header), sizeof header);
  ASSERT_EQ(std::string(reinterpret_cast<char*>(header.e_ident), 4), "\x7f" "ELF");
  ASSERT_EQ(header.e_ident[EI_CLASS], ELFCLASS64);
  ASSERT_GT(header.e_phnum, 0);
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph{};
    elf.seekg(static_cast<std::streamoff>(header.e_phoff + i * header.e_phentsize));
    elf.read(reinterpret_cast<char*>(&ph), sizeof ph);
    ASSERT_TRUE(elf);
    EXPECT_NE(ph.p_type, static_cast<Elf64_Word>(PT_INTERP)) << "dynamic loader requested";
  }
}

}  // namespace
}  // namespace sandprobe
