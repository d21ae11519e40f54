// Test support for the run's unit tests (run_test.cc, sandbox_matrix_run_test.cc): a launcher
// that answers by argv[0] with a fake clock and plays a leaky probe (it reads the host's real
// files, so only the harness's own hash can call a read a leak), and a witness that records
// every launch it saw end. Nothing is started.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "contract/launch_control.h"
#include "contract/sha256.h"
#include "launch/launcher.h"
#include "witnesses/witness.h"

namespace sandprobe {

// Answers launches by their argv[0]; each takes `takes` of fake time, cut at its timeout.
class ScriptedLauncher final : public Launcher {
 public:
  struct Step {
    int exit_code = 0;
    std::chrono::milliseconds takes{0};
    std::string out;
  };
  explicit ScriptedLauncher(std::chrono::steady_clock::time_point& now) : now_(now) {}

  StatusOr<LaunchResult> Launch(const LaunchSpec& spec) override {
    // Launches may come from several threads (a one-shot instance's cleanup runs beside the
    // next launch): one at a time here, so the fake clock and the list stay whole.
    std::lock_guard lock(mutex_);
    launches.push_back({spec.argv, spec.timeout, now_});
    Step step = steps.count(spec.argv[0]) ? steps[spec.argv[0]] : Step{};
    LaunchResult result;
    result.timeout = spec.timeout;
    if (step.takes > spec.timeout) {
      now_ += spec.timeout;
      result.timed_out = true;
      result.signal = 9;
      return result;
    }
    now_ += step.takes;
    result.exit_code = step.exit_code;
    result.out = step.out;
    if (spec.argv[0] == "fake-exec") result.out = ProbeOutput(spec.argv);
    if (spec.argv[0] == "fake-exec" && interrupt_during_probe) interrupt_during_probe->store(true);
    return result;
  }

  // A leaky sandbox: every fs.read path is read from the host for real (the canary included),
  // so only the harness's own hash can call it a leak. `print_done` false: the probe dies
  // before its done frame.
  std::string ProbeOutput(const std::vector<std::string>& argv) const {
    std::string nonce, control, out;
    for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--nonce") nonce = argv[i + 1];
      if (argv[i] == "--control") control = argv[i + 1];
    }
    if (!hello.is_null()) {
      nlohmann::json said = hello;
      // The live probe reads its control file (the host's watch sees the open) and answers;
      // a replay answers with what an earlier launch's file said.
      if (!control.empty() && answer_control) {
        std::ifstream in(control);
        std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        said["control_sha256"] = ControlAnswer(nonce, replay_control ? "an earlier launch's control" : content);
      }
      out += fmt::format("@@sandprobe {} {}\n", nonce, said.dump());
    }
    bool in_fs_read = false;
    for (const std::string& arg : argv) {
      if (arg == "fs.read" || arg == "--next") {
        in_fs_read = arg == "fs.read";
        continue;
      }
      if (!in_fs_read || arg.empty() || arg[0] != '/') continue;
      if (only_paths_containing && arg.find(*only_paths_containing) == std::string::npos) continue;
      nlohmann::json fact = {{"family", "fs.read"}, {"path", arg}, {"ok", true}};
      if (std::filesystem::is_directory(arg)) {
        fact.update({{"kind", "dir"}, {"entries", 0}, {"sha256", Sha256Hex("")}});
      } else {
        std::ifstream in(arg);
        std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        fact.update({{"kind", "file"}, {"bytes", content.size()}, {"sha256", Sha256Hex(content)}});
      }
      out += fmt::format("@@sandprobe {} {}\n", nonce, fact.dump());
    }
    if (print_done) out += fmt::format("@@sandprobe {} {{\"done\":true}}\n", nonce);
    return out + exit_line;
  }

  struct Seen {
    std::vector<std::string> argv;
    std::chrono::milliseconds timeout;
    std::chrono::steady_clock::time_point at;
  };
  std::vector<Seen> launches;
  std::map<std::string, Step> steps;
  std::atomic<bool>* interrupt_during_probe = nullptr;
  bool print_done = true;
  bool answer_control = true;   // the hello answers --control
  bool replay_control = false;  // ... with an answer of another launch
  std::string exit_line;  // appended after the frames (a VM init's "@@sandprobe-exit N")
  std::optional<std::string> only_paths_containing;  // answer for these paths only
  // The probe's first frame: the hello of the build the run injects (RunTest::builds_).
  nlohmann::json hello = {{"family", "hello"}, {"runtime", "native"}, {"build_id", "native-test"},
                          {"families", {"fs.read", "env.secret"}}, {"pid", 2}};

  bool Launched(const std::string& program) const {
    for (const Seen& s : launches) {
      if (s.argv[0] == program) return true;
    }
    return false;
  }

 private:
  std::chrono::steady_clock::time_point& now_;
  std::mutex mutex_;
};

// Sees every launch end and says so when collected.
class FakeWitness final : public RunWitness {
 public:
  std::string name() const override { return "fake"; }
  void AfterLaunch(const std::string& launch_id) override { seen_.push_back(launch_id); }
  nlohmann::json Collect() override { return {{"after_launch", seen_}}; }

 private:
  std::vector<std::string> seen_;
};

}  // namespace sandprobe
