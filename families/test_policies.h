// Small Policy/Suite builders for unit tests of the planner and evaluate.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "families/batch_result.h"
#include "families/evaluate.h"
#include "load/policy.h"
#include "load/suite.h"

namespace sandprobe::testing {

inline std::vector<PolicyPath> Paths(std::initializer_list<const char*> paths,
                                     const std::string& list) {
  std::vector<PolicyPath> out;
  int i = 0;
  for (const char* p : paths) {
    out.push_back(PolicyPath{p, {.file = "p.json", .pointer = "/filesystem/" + list + "/" + std::to_string(i++), .position = {1, 1}}});
  }
  return out;
}

// tier-low's filesystem section.
inline Policy TierLowPolicy() {
  Policy policy;
  policy.name = "tier-low";
  policy.source_path = "p.json";
  policy.filesystem.readable = Paths({"{workspace}", "/tmp"}, "readable");
  policy.filesystem.unreadable = Paths({"/etc/shadow", "{host_canary}"}, "unreadable");
  policy.filesystem.writable = Paths({"{workspace}", "/tmp"}, "writable");
  policy.filesystem.unwritable = Paths({"/etc"}, "unwritable");
  return policy;
}

inline Suite SuiteOf(std::initializer_list<const char*> families) {
  Suite suite;
  suite.name = "t";
  suite.source_path = "s.json";
  int i = 0;
  for (const char* f : families) {
    SuiteEntry entry;
    entry.family = f;
    entry.pointer = "/families/" + std::to_string(i++);
    suite.entries.push_back(entry);
  }
  return suite;
}

// The first check of `plan` judged on a clean launch L1 whose probe reported `result` for
// `family`, with the harness's own host readings of L1 when given.
inline Verdict JudgeOneResult(const Plan& plan, const std::string& family, nlohmann::json result,
                              const nlohmann::json& host_readings = nullptr) {
  result["family"] = family;
  result["kind"] = "result";
  BatchResult ran;
  ran.state = BatchResult::State::kRan;
  ran.launch_id = "L1";
  ran.complete = true;
  ran.frames.done = true;
  ran.frames.facts = {{{"family", "hello"}, {"pid", 1}}, result};
  ran.end.exit_code = 0;
  WitnessFacts witnesses;
  if (!host_readings.is_null()) witnesses.observed["host_readings"] = {{"L1", host_readings}};
  return Evaluate(plan, {ran}, witnesses).at(0);
}

}  // namespace sandprobe::testing
