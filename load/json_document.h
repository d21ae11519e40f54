// JsonDocument: a parsed JSON file (comments allowed) that remembers where every key and value
// starts, so a loader can say `policy.json:12:5: /limits/pids: expected integer, got string`.
// The typed reader over it is ObjectReader (load/json_source.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/policy_ref.h"
#include "model/status.h"

namespace sandprobe {

using JsonPointer = nlohmann::json::json_pointer;

// Bigger inputs are refused before parsing: no profile, policy or suite comes close.
inline constexpr std::size_t kMaxJsonBytes = 1024 * 1024;
// Deeper nesting is refused (the root object is level 1); the position scan is recursive.
inline constexpr int kMaxJsonDepth = 64;

class JsonDocument {
 public:
  // Parses `text` (`//` and `/* */` comments allowed; duplicate keys are an error).
  // `file_name` is only used in messages.
  static StatusOr<JsonDocument> Parse(std::string text, std::string file_name);
  // Reads and parses `path`; messages name the file as given. Only a regular file is read: a
  // FIFO, device, directory or socket is refused ("x.json: is a FIFO, not a regular file"),
  // found by fstat on a descriptor opened without blocking, so a FIFO with no writer (or a
  // tty) cannot hang a loader and nothing is stat'ed apart from what is read.
  static StatusOr<JsonDocument> Load(const std::string& path);

  const nlohmann::json& root() const { return root_; }
  const std::string& file_name() const { return file_name_; }

  // "file:line:col" (1-based; col counts characters) of the value at `ptr`, or of its nearest
  // ancestor that exists (a missing field is reported at its enclosing object).
  std::string Where(const JsonPointer& ptr) const;
  // The line and column of that value, as numbers.
  SourcePosition PositionOf(const JsonPointer& ptr) const;
  // This file, `ptr` and the position of its value: where a promise made at `ptr` comes from.
  PolicyRef RefTo(const JsonPointer& ptr) const;
  // Same, for the key that names the member `object_ptr / key`.
  std::string WhereKey(const JsonPointer& object_ptr, const std::string& key) const;
  // Byte offset of the value at `ptr` (nearest existing ancestor); orders errors by position.
  std::size_t OffsetOf(const JsonPointer& ptr) const;

  // "file:l:c: /ptr: what" at the value (the root pointer is left out of the message).
  Status ErrorAt(const JsonPointer& ptr, std::string_view what) const;
  // "file:l:c: /ptr/key: what" at the key (used for unknown and misplaced keys).
  Status ErrorAtKey(const JsonPointer& object_ptr, const std::string& key,
                    std::string_view what) const;

 private:
  friend class PositionScanner;
  SourcePosition PositionAt(std::size_t offset) const;
  std::string LineCol(std::size_t offset) const;

  std::string text_;
  std::string file_name_;
  nlohmann::json root_;
  // Characters (UTF-8 lead bytes) before `offset`: a column is a difference of two. From a
  // checkpoint every kCharsPerCheckpoint bytes, so a position in a minified one-line file
  // (a generated policy with thousands of paths) costs no scan from the line's start.
  std::size_t CharsBefore(std::size_t offset) const;
  static constexpr std::size_t kCharsPerCheckpoint = 4096;

  std::vector<std::size_t> line_starts_;                        // offset of each line's start
  std::vector<std::size_t> chars_before_checkpoint_;            // at offsets 0, 4096, 8192, ...
  std::unordered_map<std::string, std::size_t> value_offsets_;  // pointer -> value start
  std::unordered_map<std::string, std::size_t> key_offsets_;    // pointer -> its key's quote
};

}  // namespace sandprobe
