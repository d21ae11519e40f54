// PolicyRef: where a check's promise comes from, as data.
//
// Most checks come from one value of the policy file (`/filesystem/unreadable/2` at line 7,
// column 44); a few from elsewhere, said in words ("the profile's canaries_in"). Families
// build it (Policy::Ref), reports render it (Text) and SARIF locates it (file, position)
// without taking a string apart again.
#pragma once

#include <optional>
#include <string>

namespace sandprobe {

// A position in a source file: 1-based line, and column in Unicode code points. 0:0 unknown.
struct SourcePosition {
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
  bool operator==(const SourcePosition&) const = default;
};

struct PolicyRef {
  std::string file;         // the data file as loaded ("policies/tier-low.json"); "" in words
  std::string pointer;      // JSON pointer of the promising value ("/limits/pids")
  SourcePosition position;  // of that value, when the file was read with positions
  // What makes the promise when no file value does ("the profile's canaries_in"), or a note
  // on the value ("not listed (ephemeral)").
  std::string words;

  static PolicyRef InWords(std::string words) { return PolicyRef{.words = std::move(words)}; }
  bool empty() const { return file.empty() && words.empty(); }
  // "policies/tier-low.json:7:44 /filesystem/unreadable/2", "policies/p.json /limits/pids"
  // without a position, "p.json:3:5 /persistence: not listed (ephemeral)" with a note, or the
  // words alone.
  std::string Text() const;
  // "policies/tier-low.json:7:44" (the file alone without a position); "" in words.
  std::string Where() const;
  bool operator==(const PolicyRef&) const = default;
};

// Text() read back (a report written earlier): nullopt for words or "". A file name holding
// " /" cannot be told apart from a pointer and is not supported.
std::optional<PolicyRef> ParsePolicyRef(const std::string& text);

}  // namespace sandprobe
