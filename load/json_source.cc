#include "load/json_source.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sandprobe {

using json = nlohmann::json;

std::string_view JsonTypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::binary: return "binary";
    case json::value_t::discarded: return "discarded";
  }
  return "unknown";
}

std::string QuotedList(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += '"' + item + '"';
  }
  return out;
}

ObjectReader::ObjectReader(const JsonDocument& doc, JsonPointer ptr,
                           std::vector<std::string> known_keys)
    : doc_(doc), ptr_(std::move(ptr)), known_keys_(std::move(known_keys)) {
  const json& value = doc_.root().at(ptr_);
  if (!ExpectType(ptr_, value, json::value_t::object, "object")) return;
  for (const auto& [key, member] : value.items()) {
    if (std::find(known_keys_.begin(), known_keys_.end(), key) != known_keys_.end()) continue;
    // Report the unknown key that comes first in the file, not first in sorted order.
    if (ok() || doc_.OffsetOf(ptr_ / key) < doc_.OffsetOf(bad_key_ptr_)) {
      bad_key_ptr_ = ptr_ / key;
      status_ = doc_.ErrorAtKey(ptr_, key,
                                fmt::format("unknown key (known: {})",
                                            fmt::join(known_keys_, ", ")));
    }
  }
}

bool ObjectReader::Has(const std::string& key) const {
  assert(std::find(known_keys_.begin(), known_keys_.end(), key) != known_keys_.end());
  return ok() && doc_.root().at(ptr_).contains(key);
}

void ObjectReader::Fail(Status status) {
  if (ok()) status_ = std::move(status);
}
void ObjectReader::FailAt(const JsonPointer& ptr, std::string_view what) {
  Fail(doc_.ErrorAt(ptr, what));
}
void ObjectReader::FailAtKey(const JsonPointer& object_ptr, const std::string& key,
                             std::string_view what) {
  Fail(doc_.ErrorAtKey(object_ptr, key, what));
}

const json* ObjectReader::Member(const std::string& key, Presence presence) {
  if (!ok()) return nullptr;
  if (Has(key)) return &doc_.root().at(ptr_).at(key);
  switch (presence) {
    case Presence::kOptional: break;
    case Presence::kRequired: FailAt(ptr_ / key, "missing required field"); break;
  }
  return nullptr;
}

bool ObjectReader::ExpectType(const JsonPointer& ptr, const json& value, json::value_t type,
                              std::string_view type_name) {
  bool matches = value.type() == type ||
                 (type == json::value_t::number_integer && value.is_number_unsigned());
  if (!matches) FailAt(ptr, fmt::format("expected {}, got {}", type_name, JsonTypeName(value)));
  return ok();
}

std::optional<std::string> ObjectReader::StringAt(const JsonPointer& ptr, const json& value) {
  if (!ExpectType(ptr, value, json::value_t::string, "string")) return std::nullopt;
  std::string s = value.get<std::string>();
  if (s.find('\0') != std::string::npos) {
    FailAt(ptr, kNulInString);
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> ObjectReader::String(const std::string& key, Presence presence) {
  const json* v = Member(key, presence);
  if (!v) return std::nullopt;
  return StringAt(ptr_ / key, *v);
}

std::optional<std::string> ObjectReader::Enum(const std::string& key, Presence presence,
                                              const std::vector<std::string_view>& allowed) {
  std::optional<std::string> v = String(key, presence);
  if (!v || std::find(allowed.begin(), allowed.end(), *v) != allowed.end()) return v;
  FailAt(ptr_ / key, fmt::format("expected one of {}, got \"{}\"",
                                 QuotedList({allowed.begin(), allowed.end()}), *v));
  return std::nullopt;
}

std::optional<std::string> ObjectReader::Name(const std::string& key, Presence presence) {
  std::optional<std::string> v = String(key, presence);
  if (!v) return v;
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool valid = !v->empty() && lower_or_digit(v->front()) &&
               std::all_of(v->begin(), v->end(), [&](char c) {
                 return lower_or_digit(c) || c == '.' || c == '_' || c == '-';
               });
  if (valid) return v;
  FailAt(ptr_ / key, "must match [a-z0-9][a-z0-9._-]*");
  return std::nullopt;
}

std::optional<bool> ObjectReader::Bool(const std::string& key, Presence presence) {
  const json* v = Member(key, presence);
  if (!v || !ExpectType(ptr_ / key, *v, json::value_t::boolean, "boolean")) return std::nullopt;
  return v->get<bool>();
}

std::optional<std::int64_t> ObjectReader::Int(const std::string& key, Presence presence,
                                              std::int64_t min, std::int64_t max) {
  const json* v = Member(key, presence);
  if (!v || !ExpectType(ptr_ / key, *v, json::value_t::number_integer, "integer")) {
    return std::nullopt;
  }
  std::string range = max == INT64_MAX ? fmt::format("at least {}", min)
                                       : fmt::format("between {} and {}", min, max);
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    FailAt(ptr_ / key, fmt::format("must be {}, got {}", range, v->dump()));
    return std::nullopt;
  }
  std::int64_t n = v->get<std::int64_t>();
  if (n < min || n > max) {
    FailAt(ptr_ / key, fmt::format("must be {}, got {}", range, n));
    return std::nullopt;
  }
  return n;
}

std::optional<double> ObjectReader::Number(const std::string& key, Presence presence,
                                           NumberRange range) {
  const json* v = Member(key, presence);
  if (!v) return std::nullopt;
  if (!v->is_number()) {
    FailAt(ptr_ / key, fmt::format("expected number, got {}", JsonTypeName(*v)));
    return std::nullopt;
  }
  double n = v->get<double>();
  bool above_min = range.min_exclusive ? n > range.min : n >= range.min;
  if (!std::isfinite(n) || !above_min || !(n <= range.max)) {
    std::string bounds = range.min_exclusive
                             ? fmt::format("greater than {} and at most {}", range.min, range.max)
                             : fmt::format("between {} and {}", range.min, range.max);
    FailAt(ptr_ / key, fmt::format("must be {}, got {}", bounds, v->dump()));
    return std::nullopt;
  }
  return n;
}

std::optional<std::vector<std::string>> ObjectReader::StringList(const std::string& key,
                                                                 Presence presence) {
  const json* v = Member(key, presence);
  if (!v || !ExpectType(ptr_ / key, *v, json::value_t::array, "array of strings")) {
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    std::optional<std::string> item = StringAt(ptr_ / key / i, (*v)[i]);
    if (!item) return std::nullopt;
    out.push_back(std::move(*item));
  }
  return out;
}

std::optional<std::vector<std::string>> ObjectReader::ArgvAt(const JsonPointer& ptr,
                                                             const json& value) {
  if (!ExpectType(ptr, value, json::value_t::array, "argv (array of strings)")) {
    return std::nullopt;
  }
  if (value.empty()) {
    FailAt(ptr, "argv must not be empty");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    std::optional<std::string> item = StringAt(ptr / i, value[i]);
    if (!item) return std::nullopt;
    out.push_back(std::move(*item));
  }
  if (out[0].empty()) {
    FailAt(ptr / 0, "program name must not be empty");
    return std::nullopt;
  }
  return out;
}

std::optional<std::vector<std::string>> ObjectReader::Argv(const std::string& key,
                                                           Presence presence) {
  const json* v = Member(key, presence);
  if (!v) return std::nullopt;
  return ArgvAt(ptr_ / key, *v);
}

std::optional<std::vector<std::vector<std::string>>> ObjectReader::ArgvList(
    const std::string& key, Presence presence) {
  const json* v = Member(key, presence);
  if (!v || !ExpectType(ptr_ / key, *v, json::value_t::array, "array of argvs")) {
    return std::nullopt;
  }
  std::vector<std::vector<std::string>> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    std::optional<std::vector<std::string>> argv = ArgvAt(ptr_ / key / i, (*v)[i]);
    if (!argv) return std::nullopt;
    out.push_back(std::move(*argv));
  }
  return out;
}

std::optional<std::map<std::string, std::string>> ObjectReader::StringMap(
    const std::string& key, Presence presence) {
  const json* v = Member(key, presence);
  if (!v || !ExpectType(ptr_ / key, *v, json::value_t::object, "object of strings")) {
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : v->items()) {
    if (name.find('\0') != std::string::npos) {
      FailAtKey(ptr_ / key, name, fmt::format("key {}", kNulInString));
      return std::nullopt;
    }
    std::optional<std::string> item = StringAt(ptr_ / key / name, value);
    if (!item) return std::nullopt;
    out[name] = std::move(*item);
  }
  return out;
}

}  // namespace sandprobe
