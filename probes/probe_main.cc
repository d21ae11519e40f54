// sandprobe-probe: the static binary the runner starts inside a sandbox.
//
//   sandprobe-probe --nonce NONCE [--deadline-ms MS] [--control PATH] FAMILY ARGS... [--next FAMILY ARGS...]...
//   sandprobe-probe --families
//
// Writes a hello fact, one fact per thing tried, and a final {"done":true} frame on stdout
// (see contract/frame_writer.h); errors go to stderr. Every argument is checked before the first frame, so a
// usage error (exit 2) never produces facts. The deadline (default 30 s) ends the run with exit
// 124 and no done frame, which the host reads as "incomplete", never as a pass.
#include <unistd.h>
#if !defined(__wasi__)
#include <signal.h>
#include <sys/time.h>
#endif

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "contract/exit_code.h"
#include "contract/frame_writer.h"
#include "contract/launch_control.h"
#include "contract/path_content.h"
#include "contract/probe_runtime.h"
// generated: SANDPROBE_NATIVE_PROBE_BUILD_ID (cmake/ProbeBuildId.cmake), or for the wasm32-wasi
// build SANDPROBE_WASI_PROBE_BUILD_ID (probes/wasi/CMakeLists.txt)
#include "probe_build_id.h"
#include "probes/families.h"
#include "probes/resource_families.h"  // MonotonicMs

namespace sandprobe {
namespace {

constexpr long kDefaultDeadlineMs = 30'000;
constexpr long kMaxDeadlineMs = 24L * 3600 * 1000;
constexpr std::size_t kMaxNonceLength = 128;

struct Step {
  const ProbeFamilyRow* family;
  FamilyArgs args;
};

struct Invocation {
  std::string nonce;
  long deadline_ms = kDefaultDeadlineMs;
  std::string control_path;  // --control: the launch's fresh control (contract/launch_control.h)
  std::vector<Step> steps;
};

const ProbeFamilyRow* FindFamily(const std::string& name) {
  for (const ProbeFamilyRow& row : ProbeFamilyTable()) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

// The nonce goes into frame prefixes and scratch file names: keep it to [A-Za-z0-9_-].
bool IsUsableNonce(const std::string& nonce) {
  if (nonce.empty() || nonce.size() > kMaxNonceLength) return false;
  for (char c : nonce) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Returns "" and fills `inv`, or the usage error to print.
std::string ParseInvocation(int argc, char** argv, Invocation& inv) {
  int i = 1;
  bool have_nonce = false;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--nonce" || arg == "--deadline-ms" || arg == kControlArg) {
      if (i + 1 >= argc) return arg + ": missing value";
      const std::string value = argv[++i];
      if (arg == kControlArg) {
        if (value.empty()) return "--control: empty path";
        inv.control_path = value;
      } else if (arg == "--nonce") {
        if (!IsUsableNonce(value)) return "--nonce: must be 1-128 characters of [A-Za-z0-9_-]";
        inv.nonce = value;
        have_nonce = true;
      } else {
        char* end = nullptr;
        errno = 0;
        inv.deadline_ms = std::strtol(value.c_str(), &end, 10);
        if (errno != 0 || end == value.c_str() || *end != '\0' || inv.deadline_ms <= 0 ||
            inv.deadline_ms > kMaxDeadlineMs) {
          return "--deadline-ms: not a positive number of milliseconds (at most 24 h): " + value;
        }
      }
    } else {
      break;
    }
  }
  if (!have_nonce) return "--nonce is required";
  if (i >= argc) return "no family given";
  while (i < argc) {
    const std::string name = argv[i++];
    const ProbeFamilyRow* row = FindFamily(name);
    if (row == nullptr) return "unknown family: " + name;
    Step step{row, {}};
    while (i < argc && std::string(argv[i]) != "--next") step.args.emplace_back(argv[i++]);
    std::string error = row->check(step.args);
    if (!error.empty()) return error;
    inv.steps.push_back(std::move(step));
    if (i < argc) {  // at "--next"
      if (++i >= argc) return "--next: no family follows";
    }
  }
  return "";
}

void PrintUsage(const std::string& error) {
  std::fprintf(stderr,
               "sandprobe-probe: %s\n"
               "usage: sandprobe-probe --nonce NONCE [--deadline-ms MS] [--control PATH] FAMILY ARGS... "
               "[--next FAMILY ARGS...]...\nfamilies:\n",
               error.c_str());
  for (const ProbeFamilyRow& row : ProbeFamilyTable()) {
    std::fprintf(stderr, "  %s %s\n", row.name, row.usage);
  }
}

#if defined(__wasi__)
// WASI has no signals or interval timers: arming the deadline notes when it falls, and the
// probe checks its monotonic clock against it (StopIfPastDeadline, families.h) in every loop
// that can run long and between steps. The runner may end a guest stuck in one host call
// (wasi_node_runner.mjs --deadline-ms); the launch timeout is the last resort.
constexpr ProbeRuntime kThisRuntime = ProbeRuntime::kWasi;
constexpr const char* kThisBuildId = SANDPROBE_WASI_PROBE_BUILD_ID;
long g_deadline_at_ms = LONG_MAX;  // MonotonicMs() at which the run ends
int g_deadline_holds = 0;
bool g_deadline_pending = false;  // passed during a hold: stop when the last hold ends

bool ArmDeadline(long deadline_ms) {
  g_deadline_at_ms = MonotonicMs() + deadline_ms;
  return true;
}

[[noreturn]] void StopAtDeadline() {
  std::fputs("sandprobe-probe: deadline reached, stopping\n", stderr);
  std::fflush(stderr);
  std::fflush(stdout);  // frames already written stay whole (FrameWriter writes each at once)
  ::_exit(kExitProbeDeadline);
}
#else
constexpr ProbeRuntime kThisRuntime = ProbeRuntime::kNative;
constexpr const char* kThisBuildId = SANDPROBE_NATIVE_PROBE_BUILD_ID;

extern "C" void OnDeadline(int) {
  static const char kMsg[] = "sandprobe-probe: deadline reached, stopping\n";
  ssize_t ignored = ::write(2, kMsg, sizeof kMsg - 1);
  (void)ignored;
  ::_exit(kExitProbeDeadline);
}

// setitimer rather than alarm(): alarm() counts whole seconds and the runner speaks in ms.
bool ArmDeadline(long deadline_ms) {
  struct sigaction sa {};
  sa.sa_handler = OnDeadline;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGALRM, &sa, nullptr) != 0) return false;
  struct itimerval timer {};
  timer.it_value.tv_sec = deadline_ms / 1000;
  timer.it_value.tv_usec = (deadline_ms % 1000) * 1000;
  return ::setitimer(ITIMER_REAL, &timer, nullptr) == 0;
}
#endif

// What this probe is (docs/probe-protocol.md, "The hello fact"): the harness compares the
// build id and the families with the build it injected, and refuses a probe of another build.
std::string RuntimeVersion() {
#if defined(__clang__)
  const std::string compiler = "clang " __clang_version__;
#else
  const std::string compiler = "gcc " __VERSION__;
#endif
#if defined(__wasi__)
  return "wasm32-wasi (wasi-libc, snapshot preview1), " + compiler;
#else
  return "glibc " + std::to_string(__GLIBC__) + "." + std::to_string(__GLIBC_MINOR__) + ", " + compiler;
#endif
}

// The answer to the launch's fresh control: SHA-256(nonce || the file's content), or why the
// file could not be read.
void AnswerControl(const Invocation& inv, nlohmann::json& hello) {
  if (inv.control_path.empty()) return;
  const PathContent c = ReadPathContent(inv.control_path);
  if (c.ok && c.kind != PathContent::Kind::kDir) {
    hello[std::string(kControlAnswerKey)] = ControlAnswer(inv.nonce, c.hashed);
  } else if (c.ok) {
    hello[std::string(kControlStepKey)] = "open";
    hello[std::string(kControlErrnoKey)] = "EISDIR";  // not the planted file: nothing to answer with
  } else {
    hello[std::string(kControlStepKey)] = c.step;
    hello[std::string(kControlErrnoKey)] = ErrnoName(c.error);
  }
}

nlohmann::json HelloFact(const Invocation& inv) {
  nlohmann::json families = nlohmann::json::array();
  for (const ProbeFamilyRow& row : ProbeFamilyTable()) families.push_back(row.name);
  nlohmann::json hello = {{"family", "hello"},
#if defined(__wasi__)  // no processes, no users
                          {"pid", nullptr},
                          {"uid", nullptr},
                          {"euid", nullptr},
                          {"gid", nullptr},
#else
                          {"pid", ::getpid()},
                          {"uid", ::getuid()},
                          {"euid", ::geteuid()},
                          {"gid", ::getgid()},
#endif
                          {"runtime", ProbeRuntimeName(kThisRuntime)},
                          {"runtime_version", RuntimeVersion()},
                          {"build_id", kThisBuildId},
                          {"families", std::move(families)}};
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) != nullptr) {
    SetBytesField(hello, "cwd", cwd);
  } else {
    hello["cwd"] = nullptr;  // e.g. a cwd outside the sandbox's root: a fact worth having
    hello["cwd_errno"] = ErrnoName(errno);
  }
  AnswerControl(inv, hello);
  return hello;
}

int Main(int argc, char** argv) {
  // `--families`: the family names this probe knows, one per line (the contract test compares
  // them with what the runner's suites expand to); no nonce, no frames.
  if (argc == 2 && std::string(argv[1]) == "--families") {
    for (const ProbeFamilyRow& row : ProbeFamilyTable()) std::printf("%s\n", row.name);
    return kExitPass;
  }
  Invocation inv;
  const std::string error = ParseInvocation(argc, argv, inv);
  if (!error.empty()) {
    PrintUsage(error);
    return kExitUsage;
  }
  if (!ArmDeadline(inv.deadline_ms)) {
    std::fprintf(stderr, "sandprobe-probe: setitimer(%ld ms): %s\n", inv.deadline_ms,
                 ErrnoName(errno).c_str());
    return 1;
  }
  const FrameWriter out(inv.nonce);
  const ProbeContext ctx{out, inv.nonce};
  out.Emit(HelloFact(inv));
  for (const Step& step : inv.steps) {
    StopIfPastDeadline();
    step.family->run(ctx, step.args);
  }
  StopIfPastDeadline();  // a run that ended past its deadline has no done frame, as natively
  out.Emit({{"done", true}});
  return 0;
}

}  // namespace

#if defined(__wasi__)
void StopIfPastDeadline() {
  if (MonotonicMs() < g_deadline_at_ms) return;
  if (g_deadline_holds > 0) {
    g_deadline_pending = true;
    return;
  }
  StopAtDeadline();
}

void EnterDeadlineHold() { ++g_deadline_holds; }

void LeaveDeadlineHold() {
  if (--g_deadline_holds == 0 && (g_deadline_pending || MonotonicMs() >= g_deadline_at_ms)) StopAtDeadline();
}
#endif

}  // namespace sandprobe

int main(int argc, char** argv) { return sandprobe::Main(argc, argv); }
