// ToBatchResult: what Evaluate may believe about one probe launch, from the launcher's record.
//
// The host side's own facts decide completeness: the frames (a done frame, no protocol error),
// the sandbox's exit status (0, no signal; a final exit status line, frames.h, stands for it
// when the process exited 0: a VM monitor's own 0 says nothing), the harness's timeout. A launch that started is
// always judged (its facts and the host witnesses can prove a leak); only a pass needs it to be
// complete (see Evaluate).
#pragma once

#include <string>

#include "runner/evaluate.h"
#include "runner/launch_record.h"

namespace sandprobe {

// `nonce` is the one the harness generated for the launch (BatchResult::nonce).
BatchResult ToBatchResult(const LaunchRecord& record, const std::string& nonce);

}  // namespace sandprobe
