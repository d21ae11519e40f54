// ObjectReader: a strict reader over one JSON object of a JsonDocument (load/json_document.h).
// It reads typed fields, rejects keys it was not told about, and keeps only the first error, so
// the loaders in profile.cc / policy.cc / suite.cc are a list of field reads and a few
// cross-field rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/json_document.h"
#include "model/status.h"

namespace sandprobe {

// Whether a field must be present.
enum class Presence { kOptional, kRequired };

// The values a non-integer number may take: [min, max], or (min, max] with `min_exclusive`.
struct NumberRange {
  double min;
  double max;
  bool min_exclusive = false;
};

// Reads the members of the object at `ptr`. The constructor checks that the value is an object
// and that every key is in `known_keys` (listed in the error, in the given order). Every read
// after the first error returns nullopt, so callers read on and return status() at the end.
// Every string it reads (String, Enum, Name, StringList, Argv, ArgvList, StringMap keys and
// values) is refused if it holds a NUL ("\u0000"): paths, argv elements and names end at the
// first NUL once they reach the kernel, so the run would use a different string than the one
// validated.
class ObjectReader {
 public:
  ObjectReader(const JsonDocument& doc, JsonPointer ptr, std::vector<std::string> known_keys);

  const JsonDocument& doc() const { return doc_; }
  const JsonPointer& pointer() const { return ptr_; }
  JsonPointer PointerTo(const std::string& key) const { return ptr_ / key; }
  bool ok() const { return status_.ok(); }
  Status status() const { return status_; }
  // Present (and no error so far). Keys outside `known_keys` are a programming error.
  bool Has(const std::string& key) const;

  std::optional<std::string> String(const std::string& key, Presence presence);
  // A string that must equal one of `allowed`; the error lists them.
  std::optional<std::string> Enum(const std::string& key, Presence presence,
                                  const std::vector<std::string_view>& allowed);
  // A name of a profile, policy or suite: [a-z0-9][a-z0-9._-]* (safe in file names and ids).
  std::optional<std::string> Name(const std::string& key, Presence presence);
  std::optional<bool> Bool(const std::string& key, Presence presence);
  std::optional<std::int64_t> Int(const std::string& key, Presence presence, std::int64_t min,
                                  std::int64_t max);
  // A number (integer or not) in `range`; NaN and infinities never are.
  std::optional<double> Number(const std::string& key, Presence presence, NumberRange range);
  std::optional<std::vector<std::string>> StringList(const std::string& key, Presence presence);
  // A non-empty array of strings whose first element (the program) is non-empty.
  std::optional<std::vector<std::string>> Argv(const std::string& key, Presence presence);
  std::optional<std::vector<std::vector<std::string>>> ArgvList(const std::string& key,
                                                                 Presence presence);
  // An object whose values are all strings.
  std::optional<std::map<std::string, std::string>> StringMap(const std::string& key,
                                                              Presence presence);

  // The string `value` (at `ptr`) for a caller that walks values itself (an array of mixed
  // items): the same type and NUL checks as String().
  std::optional<std::string> StringAt(const JsonPointer& ptr, const nlohmann::json& value);

  // Records an error found by the caller's own rules (kept only if it is the first).
  void FailAt(const JsonPointer& ptr, std::string_view what);
  void FailAtKey(const JsonPointer& object_ptr, const std::string& key, std::string_view what);
  void Fail(Status status);

 private:
  // The member, or nullptr when absent (an error if required) or after an error.
  const nlohmann::json* Member(const std::string& key, Presence presence);
  bool ExpectType(const JsonPointer& ptr, const nlohmann::json& value,
                  nlohmann::json::value_t type, std::string_view type_name);
  std::optional<std::vector<std::string>> ArgvAt(const JsonPointer& ptr,
                                                 const nlohmann::json& value);

  const JsonDocument& doc_;
  JsonPointer ptr_;
  std::vector<std::string> known_keys_;
  JsonPointer bad_key_ptr_;  // the unknown key being reported, to keep the earliest one
  Status status_ = Status::Ok();
};

// The error for a string (or key) with a NUL in it.
inline constexpr std::string_view kNulInString =
    "contains a NUL character (\\u0000): it would cut the string short at run time";

// "integer", "number", "string", "boolean", "null", "array", "object".
std::string_view JsonTypeName(const nlohmann::json& value);
// `"a", "b", "c"` for error messages.
std::string QuotedList(const std::vector<std::string>& items);

}  // namespace sandprobe
