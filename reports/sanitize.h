// Sanitizing untrusted text (probe output, paths, error messages) before it reaches a format
// that cannot carry arbitrary bytes.
//
// Probes run hostile or broken code; their stdout may hold invalid UTF-8, terminal escapes,
// NULs and megabytes of noise. JSON keeps the raw facts (nlohmann's replacing dump copes), but
// XML 1.0 cannot even escape most C0 controls (`&#27;` is itself invalid), and CI viewers choke
// on huge outputs. So every string going into JUnit passes through SanitizeForXml first.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sandprobe {

// Returns `raw` with every invalid UTF-8 sequence (bad lead byte, truncated or overlong
// sequence, encoded surrogate, > U+10FFFF) replaced by one U+FFFD.
std::string RepairUtf8(std::string_view raw);

// Removes ANSI/VT escape sequences: CSI (ESC [ ... final), OSC/DCS/SOS/PM/APC strings (ending at
// BEL or ESC \; an unterminated one loses only its introducer) and two-byte ESC sequences.
// Works on bytes; UTF-8 multi-byte sequences never contain ESC, so it is safe on UTF-8.
std::string StripAnsiEscapes(std::string_view text);

// RepairUtf8, StripAnsiEscapes, then drops every character XML 1.0 forbids (C0 controls other
// than \t \n \r, U+FFFE, U+FFFF), turns \r\n and lone \r into \n (as XML parsers would), then
// caps the result: when it is longer than `cap` bytes it is cut on a code point boundary and
// "\n[... N bytes truncated]" is appended, N counting the sanitized bytes dropped. The result
// never exceeds max(cap, kMaxTruncationMarker) bytes.
std::string SanitizeForXml(std::string_view raw, std::size_t cap);

// SanitizeForXml on one line: the line breaks and tabs it keeps become spaces. Untrusted text
// (an observation, a sandbox's name) for a terminal line or a table cell.
std::string SanitizeOneLine(std::string_view raw, std::size_t cap);

// What a report calls a run's profile, policy or suite: its name, else its file's stem (the
// profile given as a path), else `unnamed`.
std::string NameOrStem(const std::string& name, const std::string& path, const char* unnamed);

// Upper bound of the truncation marker's length (20 digits for N).
inline constexpr std::size_t kMaxTruncationMarker = 43;

}  // namespace sandprobe
