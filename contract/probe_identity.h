// ProbeIdentity: which probe the harness injected, as the build that made it knows it, and the
// check that the probe which answered is that one.
//
// The hello fact (docs/probe-protocol.md, "The hello fact") names the probe's runtime, its
// build id (stamped in when it was built) and its families. A program that answers in the
// probe's place (a --probe-dir that holds something else, an image's own file at the probe
// path when a profile never mounts {probe_dir}) either writes no hello or a hello of another
// build: its facts are not the probe's, so the run must not judge them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "contract/frame_reader.h"

namespace sandprobe {

struct ProbeIdentity {
  std::string runtime;                // "native", "js", ... (contract/probe_runtime.h)
  std::string build_id;               // what its hello must say
  std::vector<std::string> families;  // what its hello must list (any order)
};

// The identity a hello fact states (runtime, build_id, families: all present, strings), or
// nullopt: for a probe the build does not know (a profile's probe file), the first launch's
// hello is what the later ones must repeat.
std::optional<ProbeIdentity> HelloIdentity(const nlohmann::json& hello);

// Why `frames` were not written by the probe `expected` describes, naming the key that
// differs ("hello build_id \"x\", the injected probe's is \"y\""), or nullopt when they were.
// A launch with no fact at all says nothing either way (nullopt): it is incomplete already.
std::optional<std::string> HelloMismatch(const ProbeFrames& frames, const ProbeIdentity& expected);

}  // namespace sandprobe
