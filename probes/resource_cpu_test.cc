// res.cpu's window: the early stop (--stop-above-mc) ends it only when the CPU time already
// exceeds the bound, and the result says whether it did. No timing assertions: the bounds are
// chosen so that the outcome does not depend on how busy the machine is (1 millicore is passed
// by any thread that runs at all; 64 cores by no single thread).
#include <cstdio>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "contract/frame_writer.h"
#include "probes/resource_families.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// The result frame RunResCpu writes for `args`.
json RunCpu(const FamilyArgs& args) {
  EXPECT_EQ(CheckResCpuArgs(args), "");
  std::FILE* tmp = std::tmpfile();
  const std::string nonce = "n0";
  FrameWriter out(nonce, fileno(tmp));
  RunResCpu({out, nonce}, args);
  std::rewind(tmp);
  json last;
  char line[1 << 16];
  while (std::fgets(line, sizeof line, tmp)) {
    const char* brace = std::strchr(line, '{');
    if (brace) last = json::parse(brace);
  }
  std::fclose(tmp);
  return last;
}

TEST(ResCpuWindow, StopsEarlyOnceTheCpuTimeExceedsTheBound) {
  json r = RunCpu({"--threads", "1", "--window-ms", "10000", "--stop-above-mc", "1",
                   "--edge-ms", "1", "--min-window-ms", "100"});
  EXPECT_EQ(r["family"], "res.cpu");
  EXPECT_EQ(r["stopped_early"], true) << r.dump();
}

TEST(ResCpuWindow, NeverStopsEarlyBelowTheBound) {
  json r = RunCpu({"--threads", "1", "--window-ms", "300", "--stop-above-mc", "64000",
                   "--edge-ms", "1000", "--min-window-ms", "100"});
  EXPECT_EQ(r["stopped_early"], false) << r.dump();
  EXPECT_EQ(r["threads_started"], 1);
}

TEST(ResCpuWindow, WithoutAStopRuleTheResultSaysNothingOfIt) {
  json r = RunCpu({"--threads", "1", "--window-ms", "100"});
  EXPECT_FALSE(r.contains("stopped_early")) << r.dump();
}

TEST(ResCpuWindow, RefusesABoundAboveTheThreadCap) {
  EXPECT_NE(CheckResCpuArgs({"--stop-above-mc", "64001"}), "");
  EXPECT_NE(CheckResCpuArgs({"--edge-ms", "0"}), "");
}

}  // namespace
}  // namespace sandprobe
