// What every egress-lab integration test asserts of a run's report (tests/lab_*_test.cc).
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace sandprobe::testing {

// The strings of a JSON list (other items as their JSON text); empty for a non-list.
std::set<std::string> JsonStrings(const nlohmann::json& list);

// Nothing left the lab: the lab's links are its loopback and the sandbox's veth end, the
// sandbox's its loopback and the other end, every receipt (sinks and resolver) came from the
// sandbox's address, and no host canary heard the run.
void ExpectNothingLeftTheLab(const nlohmann::json& report);

// The policy's allowed lab name passed, and its observation is the lab's receipt of this run's
// request (HTTP Host pkg.lab.test, the probe's /sandprobe/ path), not the probe's word.
void ExpectAllowedNameReached(const nlohmann::json& report);

// A sandbox with no filter of its own: every control name (at least 5) and every net.bypass
// spelling (12) fails too-permissive, each on a lab receipt (a sink's record of the request or
// the resolver's of the query). Returns how many checks that is, for the caller's count of fails.
int ExpectEveryControlAndBypassThrough(const nlohmann::json& report);

}  // namespace sandprobe::testing
