#include "contract/frame_reader.h"

#include <fmt/format.h>
#include <utf8cpp/utf8.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>


namespace sandprobe {
namespace {

// Why a line is not a fact, or nullopt when it is fine. (The reader sits below model/, so it
// speaks in plain strings rather than Status.)
using Problem = std::optional<std::string>;

// Anything starting with kFrameMarker (contract/protocol.h) is meant to look like a frame, so
// if it is not a well-formed one it is an error rather than noise: a probe never prints it any
// other way.
// Longest piece of parser text quoted in an error; nlohmann echoes the bytes it read.
constexpr std::size_t kMaxQuotedBytes = 160;
constexpr std::size_t kErrorsInDescription = 3;

// Error text is built partly from the probe's bytes (nlohmann's "last read: '...'"); reduce
// it to printable ASCII so no escape sequence or invalid UTF-8 reaches a terminal or report.
std::string PrintableAscii(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxQuotedBytes)) {
    out += (c >= 0x20 && c <= 0x7e) ? c : '?';
  }
  if (text.size() > kMaxQuotedBytes) out += "...";
  return out;
}

// "[json.exception.parse_error.101] parse error at line 1, column 14: syntax error ..." ->
// "syntax error ... (payload byte 14)": the payload is one line, so line/column say nothing.
std::string JsonProblem(const nlohmann::json::exception& e, std::optional<std::size_t> byte) {
  std::string_view what = e.what();
  if (auto end = what.find("] "); what.starts_with("[json.exception.") && end != what.npos) {
    what.remove_prefix(end + 2);
  }
  if (auto colon = what.find(": "); what.starts_with("parse error at ") && colon != what.npos) {
    what.remove_prefix(colon + 2);
  }
  std::string problem = PrintableAscii(what);
  if (byte) problem += fmt::format(" (payload byte {})", *byte);
  return problem;
}

// nlohmann stops at a NUL byte as if the input ended (`{"family":"x"}\0junk` parses), and
// quotes invalid UTF-8 raw in its messages, so both are refused before it sees the payload.
Problem CheckPayloadBytes(std::string_view payload) {
  if (auto nul = payload.find('\0'); nul != payload.npos) {
    return Problem(fmt::format("frame has a NUL byte at payload byte {}", nul + 1));
  }
  auto invalid = utf8::find_invalid(payload.begin(), payload.end());
  if (invalid != payload.end()) {
    return Problem(
        fmt::format("frame is not valid UTF-8 at payload byte {}", invalid - payload.begin() + 1));
  }
  return std::nullopt;
}

// A frame payload: strict JSON (no comments), an object, bounded nesting.
Problem ParsePayload(std::string_view payload, nlohmann::json& value) {
  if (Problem bytes = CheckPayloadBytes(payload)) return bytes;
  int depth = 0;  // containers open at once; the callback's `d` counts those around the event
  auto track_depth = [&depth](int d, nlohmann::json::parse_event_t event, nlohmann::json&) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start || event == Event::array_start) depth = std::max(depth, d + 1);
    return true;
  };
  try {
    value = nlohmann::json::parse(payload, track_depth, /*allow_exceptions=*/true,
                                  /*ignore_comments=*/false);
  } catch (const nlohmann::json::parse_error& e) {
    return Problem("frame JSON: " + JsonProblem(e, e.byte));
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range: number overflow
    return Problem("frame JSON: " + JsonProblem(e, std::nullopt));
  }
  if (depth > kMaxFrameJsonDepth) {
    return Problem(fmt::format("frame JSON nests deeper than {} levels", kMaxFrameJsonDepth));
  }
  if (!value.is_object()) {
    return Problem(
        fmt::format("frame payload is a JSON {}, not an object", value.type_name()));
  }
  return std::nullopt;
}

bool IsDoneFrame(const nlohmann::json& object) {
  return object.size() == 1 && object.begin().key() == "done" && object.begin()->is_boolean() &&
         object.begin()->get<bool>();
}

// Walks the lines of one stream, keeping what it has seen so far.
class FrameParser {
 public:
  FrameParser(std::string_view nonce, bool stream_truncated) : nonce_(nonce) {
    if (stream_truncated) AddError("output truncated at the cap");
  }

  // `line` has its line ending removed; `has_newline` is false only for an unterminated tail.
  void Line(std::string_view line, int number, bool has_newline) {
    line_ = number;
    if (exit_line_ > 0) {
      AddError(fmt::format("line {}: a line after the exit status line (line {})", number, exit_line_));
      result_.exit_status.reset();  // the status is only believed from the last line
      exit_line_ = -1;              // reported once
    }
    if (line.starts_with(kExitLinePrefix)) {
      if (Problem problem = ExitLine(line, has_newline, number)) {
        AddError(fmt::format("line {}: {}", number, *problem));
      }
      return;
    }
    if (!line.starts_with(kFrameMarker)) {
      ++result_.noise_lines;
      return;
    }
    if (done_frames_ > 0) frame_after_done_ = true;
    if (Problem problem = Frame(line, has_newline)) {
      AddError(fmt::format("line {}: {}", number, *problem));
    }
  }

  ProbeFrames Finish() && {
    if (unlisted_errors_ > 0) {
      result_.protocol_errors.push_back(
          fmt::format("{} more protocol errors not listed", unlisted_errors_));
    }
    result_.done = done_frames_ == 1 && !frame_after_done_;
    return std::move(result_);
  }

 private:
  // Checks one frame candidate and records it; an error means it is not a fact.
  Problem Frame(std::string_view line, bool has_newline) {
    if (!has_newline) return Problem("truncated frame (no newline)");
    if (line.size() > kMaxFrameLineBytes) {
      return Problem(fmt::format("frame line is {} bytes, over the {}-byte limit",
                                       line.size(), kMaxFrameLineBytes));
    }
    if (!line.starts_with(kFramePrefix)) {
      return Problem("malformed frame: no space after @@sandprobe");
    }
    std::string_view rest = line.substr(kFramePrefix.size());
    std::size_t space = rest.find(' ');
    if (space == rest.npos) return Problem("malformed frame: no payload after the nonce");
    // Exact match: "abc" must not accept "abcd", and an empty nonce accepts nothing.
    if (nonce_.empty() || rest.substr(0, space) != nonce_) {
      return Problem("frame with a foreign nonce");
    }
    nlohmann::json payload;
    if (Problem problem = ParsePayload(rest.substr(space + 1), payload)) return problem;
    // The done frame is the payload with a "done" key and no "family": a fact may have a key
    // named done (a family that reports whether something finished) and is still a fact.
    if (payload.contains("done") && !payload.contains("family")) return Done(payload);
    return Fact(std::move(payload));
  }

  // `@@sandprobe-exit N`: a decimal 0..255, once, terminated; whether it is last is checked
  // when another line follows (Line).
  Problem ExitLine(std::string_view line, bool has_newline, int number) {
    if (!has_newline) return Problem("truncated exit status line (no newline)");
    if (exit_line_ != 0) return Problem("a second exit status line");
    exit_line_ = number;
    std::string_view digits = line.substr(kExitLinePrefix.size());
    int value = 0;
    bool valid = !digits.empty() && digits.size() <= 3;
    for (char c : digits) {
      valid = valid && c >= '0' && c <= '9';
      if (valid) value = value * 10 + (c - '0');
    }
    if (!valid || value > 255) {
      return Problem(fmt::format("malformed exit status line: \"{}\" is not 0..255",
                                       PrintableAscii(digits)));
    }
    result_.exit_status = value;
    return std::nullopt;
  }

  Problem Done(const nlohmann::json& payload) {
    if (!IsDoneFrame(payload)) {
      return Problem(R"(malformed done frame: must be exactly {"done":true})");
    }
    if (++done_frames_ > 1) return Problem("second done frame");
    return std::nullopt;
  }

  Problem Fact(nlohmann::json fact) {
    if (done_frames_ > 0) return Problem("frame after done");
    auto family = fact.find("family");
    if (family == fact.end() || !family->is_string() ||
        family->get_ref<const std::string&>().empty()) {
      return Problem(R"(fact without a non-empty string "family")");
    }
    if (result_.facts.size() >= kMaxFacts) {
      if (fact_limit_reported_) return std::nullopt;
      fact_limit_reported_ = true;
      return Problem(fmt::format("more than {} facts; later facts dropped", kMaxFacts));
    }
    // A repeated identity is kept as a fact too (judges that scan every fact, such as the
    // canary hash, must see what it says), but the error makes the launch incomplete.
    Problem repeated;
    if (std::optional<std::string> identity = FactIdentity(fact)) {
      auto [first, fresh] = identities_.emplace(std::move(*identity), line_);
      if (!fresh) {
        repeated = Problem(fmt::format(
            "a second fact for {} (first on line {}): a fact is stated once", Describe(fact),
            first->second));
      }
    }
    result_.facts.push_back(std::move(fact));
    return repeated;
  }

  // "fs.read /etc/shadow" for messages; the probe's bytes reduced to printable ASCII.
  static std::string Describe(const nlohmann::json& fact) {
    std::string text = fact.value("family", "");
    for (const char* key : {"path", "variant", "source"}) {
      auto it = fact.find(key);
      if (it != fact.end() && it->is_string()) text += " " + it->get<std::string>();
    }
    return PrintableAscii(text);
  }

  void AddError(std::string message) {
    if (result_.protocol_errors.size() < kMaxListedProtocolErrors) {
      result_.protocol_errors.push_back(std::move(message));
    } else {
      ++unlisted_errors_;
    }
  }

  std::string_view nonce_;
  ProbeFrames result_;
  int done_frames_ = 0;
  bool frame_after_done_ = false;  // any frame candidate, valid or not, after the first done
  bool fact_limit_reported_ = false;
  std::size_t unlisted_errors_ = 0;
  int line_ = 0;  // the 1-based number of the line being parsed
  int exit_line_ = 0;  // line of the exit status line; -1 once a line after it was reported
  std::unordered_map<std::string, int> identities_;  // FactIdentity -> its first line
};

std::string StringOrEmpty(const nlohmann::json& fact, const char* key) {
  auto it = fact.find(key);
  return it != fact.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

ProbeFrames ParseFrames(std::string_view stdout_bytes, std::string_view nonce,
                        bool stream_truncated) {
  FrameParser parser(nonce, stream_truncated);
  int number = 0;
  while (!stdout_bytes.empty()) {
    ++number;
    std::size_t newline = stdout_bytes.find('\n');
    if (newline == stdout_bytes.npos) {
      parser.Line(stdout_bytes, number, /*has_newline=*/false);
      break;
    }
    std::string_view line = stdout_bytes.substr(0, newline);
    if (line.ends_with('\r')) line.remove_suffix(1);  // CRLF from a tty or a Windows tool
    parser.Line(line, number, /*has_newline=*/true);
    stdout_bytes.remove_prefix(newline + 1);
  }
  return std::move(parser).Finish();
}

std::string KeyedFactIdentity(std::string_view family, std::string_view path,
                              std::string_view variant) {
  std::string key;
  key.reserve(family.size() + path.size() + variant.size() + 8);
  for (std::string_view part : {family, path, variant}) {
    key.append(part);
    key.push_back('\0');
  }
  return key;
}

namespace {

// The families whose items share (path, variant) and are told apart by fields of their own;
// every other family's identity is (family, path, variant, summary) alone, so a key such as
// fs.mounts' "source" (the mounter's word) never makes two facts distinct by accident.
struct ItemKeyRow {
  std::string_view family;
  const char* string_keys[2];  // non-empty strings (null: unused)
  const char* integer_key;                         // an integer, or null
};
constexpr ItemKeyRow kItemKeys[] = {
    {"env.secret", {"source", "name"}, nullptr},    // one variable in one environ
    {"priv.runtime_sockets", {"source", nullptr}, nullptr},  // one path from list and mountinfo
    {"priv.fds", {nullptr, nullptr}, "fd"},         // one descriptor
};

}  // namespace

std::optional<std::string> FactIdentity(const nlohmann::json& fact) {
  if (StringOrEmpty(fact, "kind") == "progress") return std::nullopt;
  const std::string family = StringOrEmpty(fact, "family");
  std::string key = KeyedFactIdentity(family, StringOrEmpty(fact, "path"), StringOrEmpty(fact, "variant"));
  // Only the fields that tell items of one list apart; a keyed fact has none of them, so a
  // lookup by KeyedFactIdentity finds exactly the fact a judge means.
  auto summary = fact.find("summary");
  if (summary != fact.end() && summary->is_boolean() && summary->get<bool>()) key += "summary\0";
  for (const ItemKeyRow& row : kItemKeys) {
    if (row.family != family) continue;
    for (const char* item : row.string_keys) {
      if (item == nullptr) continue;
      if (std::string value = StringOrEmpty(fact, item); !value.empty()) {
        key += fmt::format("{}={}", item, value);
        key.push_back('\0');
      }
    }
    if (row.integer_key == nullptr) continue;
    auto number = fact.find(row.integer_key);
    if (number != fact.end() && number->is_number_integer()) {
      key += fmt::format("{}={}", row.integer_key, number->get<long long>());
    }
  }
  return key;
}

bool FramesComplete(const ProbeFrames& frames) {
  return frames.done && frames.protocol_errors.empty();
}

std::string DescribeFrameProblems(const ProbeFrames& frames) {
  if (FramesComplete(frames)) return "";
  std::string out;
  if (!frames.done) out = "no done frame";
  const auto& errors = frames.protocol_errors;
  if (errors.empty()) return out;
  if (!out.empty()) out += "; ";
  out += fmt::format("{} protocol error{}: ", errors.size(), errors.size() == 1 ? "" : "s");
  std::size_t listed = std::min(errors.size(), kErrorsInDescription);
  for (std::size_t i = 0; i < listed; ++i) {
    if (i > 0) out += "; ";
    out += errors[i];
  }
  if (errors.size() > listed) out += fmt::format("; and {} more", errors.size() - listed);
  return out;
}

}  // namespace sandprobe
