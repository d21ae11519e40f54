// ToBatchResult: what Evaluate may believe about one probe launch, from the launcher's record.
//
// The host side's own facts decide completeness: the frames (a done frame, no protocol error),
// the sandbox's exit status (0, no signal; a final exit status line, contract/frame_reader.h, stands for it
// when the process exited 0: a VM monitor's own 0 says nothing; a profile with
// `"probe_exit": "exit_line"` makes that line mandatory), the harness's timeout. A launch that started is
// always judged (its facts and the host witnesses can prove a leak); only a pass needs it to be
// complete (see Evaluate).
#pragma once

#include <string>

#include "families/evaluate.h"
#include "model/launch_record.h"
#include "load/profile.h"

namespace sandprobe {

// `nonce` is the one the harness generated for the launch (BatchResult::nonce). `probe_exit`
// is the profile's (Profile::probe_exit): with kExitLine, a launch whose stream does not end
// with one valid exit status line is incomplete, whatever the process's exit status.
BatchResult ToBatchResult(const LaunchRecord& record, const std::string& nonce,
                          ProbeExit probe_exit = ProbeExit::kProcess);

}  // namespace sandprobe
