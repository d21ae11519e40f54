#include <signal.h>

#include <gtest/gtest.h>

#include "contract/errno_name.h"
#include "contract/probe_runtime.h"
#include "contract/signal_name.h"

namespace sandprobe {
namespace {

TEST(SignalName, IsTheSymbolicNameWithSig) {
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(SIGSYS), "SIGSYS");
  EXPECT_EQ(SignalName(SIGSEGV), "SIGSEGV");
}

TEST(SignalName, ANamelessSignalKeepsItsNumber) {
  EXPECT_EQ(SignalName(SIGRTMIN + 3), "SIG" + std::to_string(SIGRTMIN + 3));
}

TEST(ErrnoName, IsGlibcsNameOrTheNumber) {
  EXPECT_EQ(ErrnoName(EACCES), "EACCES");
  EXPECT_EQ(ErrnoName(EWOULDBLOCK), "EAGAIN");
  EXPECT_EQ(ErrnoName(4095), "E4095");
}

TEST(ProbeRuntime, EveryRuntimeHasOneRowAndANameThatParsesBack) {
  for (ProbeRuntime runtime : {ProbeRuntime::kNative, ProbeRuntime::kWasi, ProbeRuntime::kJs, ProbeRuntime::kPython}) {
    EXPECT_EQ(ProbeRuntimeInfo(runtime).runtime, runtime);
    EXPECT_EQ(ParseProbeRuntime(ProbeRuntimeName(runtime)), runtime);
  }
  EXPECT_EQ(ProbeRuntimes().size(), 4u);
  EXPECT_EQ(ProbeFileName(ProbeRuntime::kNative), "sandprobe-probe");
  EXPECT_EQ(ProbeFileName(ProbeRuntime::kJs), "sandprobe-probe.js");
  EXPECT_EQ(ParseProbeRuntime("Native"), std::nullopt);
}

}  // namespace
}  // namespace sandprobe
