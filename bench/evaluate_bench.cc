// Evaluate and the report writers at 10,000 checks: one launch checking 10,000 denied paths
// (the batching promise of the planner), with a fact per path.
#include <benchmark/benchmark.h>

#include "reports/json_report.h"
#include "reports/junit_report.h"
#include "families/evaluate.h"
#include "load/json_source.h"
#include "families/plan.h"
#include "load/policy.h"

namespace sandprobe {
namespace {

constexpr int kPaths = 10'000;

struct Fixture {
  Plan plan;
  std::vector<BatchResult> results;
  WitnessFacts witnesses{"/c", std::string(64, 'c'), std::string(64, 'e')};

  Fixture() {
    Policy policy;
    policy.name = "bench";
    policy.filesystem.readable.push_back({"/tmp", "/filesystem/readable/0", "b.json:1:1"});
    for (int i = 0; i < kPaths; ++i) {
      policy.filesystem.unreadable.push_back(
          {"/denied/" + std::to_string(i), "/filesystem/unreadable/" + std::to_string(i), "b.json:1:1"});
    }
    Suite suite;
    suite.entries.push_back({"fs.read", {}, "/families/0"});
    plan = *ExpandChecks(policy, suite, {"/c", "/workspace"});
    BatchResult result;
    result.state = BatchResult::State::kRan;
    result.complete = true;
    result.launch_id = "L1";
    result.frames.done = true;
    result.frames.facts.push_back({{"family", "fs.read"}, {"path", "/tmp"}, {"ok", true}, {"kind", "dir"}, {"entries", 1}});
    for (int i = 0; i < kPaths; ++i) {
      result.frames.facts.push_back({{"family", "fs.read"}, {"path", "/denied/" + std::to_string(i)},
                                     {"ok", false}, {"step", "open"}, {"errno", "ENOENT"}});
    }
    results.push_back(std::move(result));
  }
};

const Fixture& SharedFixture() {
  static const Fixture fixture;
  return fixture;
}

void BM_Evaluate10kChecks(benchmark::State& state) {
  const Fixture& f = SharedFixture();
  for (auto _ : state) benchmark::DoNotOptimize(Evaluate(f.plan, f.results, f.witnesses));
  state.SetItemsProcessed(state.iterations() * f.plan.checks.size());
}
BENCHMARK(BM_Evaluate10kChecks)->Unit(benchmark::kMillisecond);

RunReport Report() {
  const Fixture& f = SharedFixture();
  RunReport report;
  report.profile_name = "bench";
  report.verdicts = Evaluate(f.plan, f.results, f.witnesses);
  return report;
}

void BM_JsonReport10kChecks(benchmark::State& state) {
  RunReport report = Report();
  for (auto _ : state) benchmark::DoNotOptimize(RenderJsonReport(report));
}
BENCHMARK(BM_JsonReport10kChecks)->Unit(benchmark::kMillisecond);

void BM_JunitReport10kChecks(benchmark::State& state) {
  std::vector<RunReport> reports = {Report()};
  for (auto _ : state) benchmark::DoNotOptimize(RenderJunit(reports));
}
BENCHMARK(BM_JunitReport10kChecks)->Unit(benchmark::kMillisecond);

// Loading a generated policy of 10,000 denied paths, minified to one line: the loader must stay
// linear (it once compared every pair of paths, and counted each column from the line start).
void BM_LoadMinifiedPolicy10kPaths(benchmark::State& state) {
  nlohmann::json unreadable = nlohmann::json::array();
  for (int i = 0; i < kPaths; ++i) unreadable.push_back("/denied/" + std::to_string(i));
  std::string text = nlohmann::json{{"name", "bench"},
                                    {"description", "10,000 denied paths"},
                                    {"filesystem", {{"readable", {"/tmp"}}, {"unreadable", unreadable}}}}
                         .dump();
  for (auto _ : state) {
    StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "bench.json");
    StatusOr<Policy> policy = ParsePolicy(*doc);
    if (!policy.ok()) state.SkipWithError(policy.status().message().c_str());
    benchmark::DoNotOptimize(policy);
  }
}
BENCHMARK(BM_LoadMinifiedPolicy10kPaths)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sandprobe
