// Frames: turns what a probe printed into facts, and refuses to let garbage look like success.
//
// A probe prints one frame per fact, `@@sandprobe <NONCE> <json object>\n`, and ends with the
// frame `{"done":true}`. Its stdout is written inside an untrusted sandbox, so anything may be
// there: other programs' output, a forged "PASS", frames with a guessed nonce, a frame cut off
// by a kill or the output cap, invalid UTF-8, megabytes without a newline. ParseFrames never
// throws and never turns such input into a fact; every departure from the protocol becomes a
// protocol error naming its 1-based line, and FramesComplete() is then false, so the caller
// treats the launch as inconclusive rather than trusting a partial or forged stream.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/protocol.h"

namespace sandprobe {

// What the frame parser made of a probe's stdout (ParseFrames, below).
struct ProbeFrames {
  std::vector<nlohmann::json> facts;         // every valid fact frame, in order (not `done`)
  bool done = false;                         // exactly one well-formed {"done":true} was last
  std::vector<std::string> protocol_errors;  // "line 3: frame JSON: unexpected end of input"
  int noise_lines = 0;                       // lines that were not frames (kept as evidence)
  // The probe's exit status as the sandbox reported it on a final `@@sandprobe-exit N` line
  // (see kExitLinePrefix): for sandboxes whose own process status says nothing about the
  // probe, such as a VM monitor that exits 0 on a guest panic as on a clean poweroff.
  std::optional<int> exit_status;
};

// kFramePrefix (contract/protocol.h) makes a line a frame candidate; it must start at
// column 0.
// A line `@@sandprobe-exit N` (N in 0..255), the last line of the stream, reports the probe's
// exit status from inside the sandbox: a VM's init writes it after the probe ended, because the
// VM monitor's own exit status says nothing about the guest. It carries no nonce (the sandbox's
// init, not the probe, writes it) and must be the very last line, so a probe that prints one
// early is followed by the real one and makes a protocol error rather than a status. It does
// not replace the done frame; ToBatchResult takes it as the launch's status (batch_result.h).
// Its prefix is kExitLinePrefix (contract/protocol.h).
// A frame line longer than this (without its line ending) is an error and is not parsed:
// a probe's own frames are small, and the cap bounds the JSON parser's work per line.
inline constexpr std::size_t kMaxFrameLineBytes = 64 * 1024;
// Facts kept per launch; beyond it one protocol error is recorded and no more are collected.
inline constexpr std::size_t kMaxFacts = 100'000;
// Deeper JSON nesting is an error: later consumers (dump, compare) recurse over facts.
inline constexpr int kMaxFrameJsonDepth = 64;
// Protocol errors listed one by one; the rest are summarised in one final entry, so a stream
// of a million bad lines cannot grow the report without bound.
inline constexpr std::size_t kMaxListedProtocolErrors = 1000;

// Parses a probe's captured stdout. `nonce` is the one the harness generated for this launch
// (an empty `nonce` makes every frame foreign). `stream_truncated`: the launcher dropped
// bytes beyond its output cap, which is itself a protocol error.
ProbeFrames ParseFrames(std::string_view stdout_bytes, std::string_view nonce,
                        bool stream_truncated);

// A fact's identity within one launch: its family, path, variant, summary flag, and the
// per-item fields of families that report lists (env.secret: source + name; priv.fds: fd).
// Two facts with one identity repeat or contradict each other, and judges look facts up by
// identity (FactIndex), so ParseFrames makes a repeated identity a protocol error: "first fact
// wins" would let a later fact that shows a leak vanish silently. Progress facts ("kind":
// "progress", the steps a resource probe streams before it may be killed) are a stream and
// have no identity (nullopt).
std::optional<std::string> FactIdentity(const nlohmann::json& fact);
// The identity of a keyed fact (no summary flag, no per-item fields), as judges look it up.
std::string KeyedFactIdentity(std::string_view family, std::string_view path,
                              std::string_view variant);

// True when the launch's frames can be trusted to be complete: done && no protocol errors.
bool FramesComplete(const ProbeFrames& frames);

// One line for messages: "no done frame; 2 protocol errors: line 3: frame JSON: ...; ...".
// Empty when FramesComplete(frames). Lists at most a few errors, then "and N more".
std::string DescribeFrameProblems(const ProbeFrames& frames);

}  // namespace sandprobe
