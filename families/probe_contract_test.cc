// The probe boundary's contract, checked across the real boundary: every family that a shipped
// suite expands to, against every shipped policy, is one the built probe knows
// (`sandprobe-probe --families`) or a script probe implements; and the microVM guest's init writes the exit line with the
// prefix the runner reads (contract/protocol.h).
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "contract/protocol.h"
#include "launch/launcher.h"
#include "families/plan.h"
#include "load/policy.h"
#include "load/suite.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Shipped(const char* folder) {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(fs::path(SANDPROBE_SOURCE_DIR) / folder)) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::set<std::string> ProbeFamilies() {
  ProcessLauncher launcher;
  StatusOr<LaunchResult> r = launcher.Launch({.argv = {SANDPROBE_PROBE_BINARY, "--families"}});
  EXPECT_TRUE(r.ok()) << r.status().message();
  std::set<std::string> names;
  if (!r.ok()) return names;
  EXPECT_EQ(r->exit_code, 0) << r->err;
  std::istringstream lines(r->out);
  for (std::string line; std::getline(lines, line);) names.insert(line);
  // And what the script probes implement (their build-time lists): lang.escape is theirs alone.
  std::istringstream files(SANDPROBE_SCRIPT_PROBE_FAMILIES);
  for (std::string file; std::getline(files, file, ':');) {
    std::ifstream in(file);
    EXPECT_TRUE(in.good()) << file;
    for (std::string line; std::getline(in, line);) if (!line.empty()) names.insert(line);
  }
  return names;
}

// What the run's witnesses would offer the planner (addresses, tokens), so every family expands.
PlanContext ContextWithWitnessValues() {
  PlanContext context{"/var/tmp/sandprobe-x/canary.txt", "/workspace"};
  context.values = {{"priv.canary_sha256", std::string(64, 'a')},
                    {"persist.token", "persist0123456789abcdef"},
                    {"net.runtime_sockets_on_host", "/run/docker.sock"}};
  for (const char* endpoint : {"loopback-tcp", "bridge-tcp", "loopback-udp", "bridge-udp",
                               "loopback-dns", "bridge-dns"}) {
    context.values[std::string("net.") + endpoint] = "127.0.0.1:53";
  }
  return context;
}

TEST(ProbeContractTest, EveryFamilyTheShippedSuitesExpandToIsOneTheProbeKnows) {
  const std::set<std::string> probe = ProbeFamilies();
  ASSERT_FALSE(probe.empty());
  std::set<std::string> expanded;
  for (const std::string& suite_path : Shipped("suites")) {
    StatusOr<Suite> suite = LoadSuite(suite_path, KnownFamilies());
    ASSERT_TRUE(suite.ok()) << suite.status().message();
    for (const std::string& policy_path : Shipped("policies")) {
      StatusOr<Policy> policy = LoadPolicy(policy_path);
      ASSERT_TRUE(policy.ok()) << policy.status().message();
      StatusOr<Plan> plan = ExpandChecks(*policy, *suite, ContextWithWitnessValues());
      if (!plan.ok()) continue;  // a suite with no check for this policy (exit 2 in a run)
      for (const LaunchBatch& batch : plan->batches) {
        for (const ProbeInvocation& invocation : batch.invocations) {
          expanded.insert(invocation.family);
          EXPECT_TRUE(probe.count(invocation.family))
              << suite_path << " x " << policy_path << " expands to " << invocation.family
              << ", which the probe does not know";
        }
      }
    }
  }
  // Every suite family group reached the probe at least once (the test is not vacuous).
  for (const char* family : {"fs.read", "env.secret", "net.tcp", "priv.caps", "res.pids", "persist.plant"}) {
    EXPECT_TRUE(expanded.count(family)) << family;
  }
}

TEST(ProbeContractTest, TheMicrovmGuestWritesTheExitLineTheRunnerReads) {
  std::ifstream in(fs::path(SANDPROBE_SOURCE_DIR) / "scripts/microvm/init");
  std::string init((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(init.find("echo \"" + std::string(kExitLinePrefix)), std::string::npos)
      << "scripts/microvm/init must print `" << kExitLinePrefix << "N`";
}

}  // namespace
}  // namespace sandprobe
