// A Launcher for unit tests: records every launch and answers from a queue of canned results
// (default: exit 0, no output). Nothing is started.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "launch/launcher.h"

namespace sandprobe::testing {

class FakeLauncher final : public Launcher {
 public:
  StatusOr<LaunchResult> Launch(const LaunchSpec& spec) override {
    specs.push_back(spec);
    if (replies.empty()) {
      LaunchResult ok;
      ok.exit_code = 0;
      return ok;
    }
    StatusOr<LaunchResult> reply = replies.front();
    replies.pop_front();
    return reply;
  }
  std::vector<std::vector<std::string>> Argvs() const {
    std::vector<std::vector<std::string>> out;
    for (const LaunchSpec& s : specs) out.push_back(s.argv);
    return out;
  }
  std::vector<LaunchSpec> specs;
  std::deque<StatusOr<LaunchResult>> replies;
};

inline LaunchResult Exit(int code, std::string out = "", std::string err = "") {
  LaunchResult r;
  r.exit_code = code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}

}  // namespace sandprobe::testing
