// FrameWriter: the probe's only channel to the host, one framed JSON line per fact.
//
// Each frame is `@@sandprobe <NONCE> <json>\n`, written with a single write(2) on fd 1 and no
// stdio buffering in between, so a probe killed mid-run (deadline, OOM, the sandbox's own
// timeout) has streamed whole lines for everything it reached. The nonce is the runner's, so
// text another program in the sandbox prints cannot pass for a fact.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace sandprobe {

class FrameWriter {
 public:
  explicit FrameWriter(std::string nonce, int fd = 1) : nonce_(std::move(nonce)), fd_(fd) {}

  // Writes one frame. Invalid UTF-8 in strings is replaced (U+FFFD) so the line is always
  // valid JSON; callers that need the exact bytes add a "_hex" twin with SetBytesField().
  // A failed write (stdout closed) is reported on stderr; the probe carries on.
  void Emit(const nlohmann::json& fact) const;

  const std::string& nonce() const { return nonce_; }

 private:
  std::string nonce_;
  int fd_;
};

// The full line Emit writes, for tests and for FrameWriter itself.
std::string FormatFrame(std::string_view nonce, const nlohmann::json& fact);

bool IsValidUtf8(std::string_view bytes);
std::string HexEncode(std::string_view bytes);

// fact[key] = value; when value is not valid UTF-8 also fact[key + "_hex"] = its hex, because
// the replaced text alone would not identify the path (two paths could collapse into one).
void SetBytesField(nlohmann::json& fact, const std::string& key, std::string_view value);

}  // namespace sandprobe
