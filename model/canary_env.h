// The name prefix of the canary secrets a run puts in the sandbox's environment: planted by the
// host (witnesses.cc), looked for by the env.secret family (family_env.cc). The probe is handed
// the prefix as an argument, so it stays a host-side name.
#pragma once

#include <string_view>

namespace sandprobe {

// Environment variables whose names start with this are canary secrets; the probe reports the
// sha256 of the value of any it can see, never the value.
inline constexpr std::string_view kCanaryEnvPrefix = "SANDPROBE_CANARY_";

}  // namespace sandprobe
