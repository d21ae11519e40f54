#include "load/data_lint.h"

#include <algorithm>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "load/data_dir.h"

namespace sandprobe {
namespace {

using nlohmann::json;

bool HasType(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "null") return value.is_null();
  return false;
}

bool Fits(const json& schema, const json& value) {
  return !schema.contains("type") || HasType(value, schema["type"].get<std::string>());
}

std::string Quoted(const json& value) { return value.dump(); }

class Linter {
 public:
  explicit Linter(const JsonDocument& doc) : doc_(doc) {}

  void Check(const json& schema, const json& value, const JsonPointer& ptr) {
    for (const char* alternatives : {"oneOf", "anyOf"}) {
      if (!schema.contains(alternatives)) continue;
      for (const json& alternative : schema[alternatives]) {
        if (Fits(alternative, value)) return Check(alternative, value, ptr);
      }
      std::vector<std::string> types;
      for (const json& alternative : schema[alternatives]) types.push_back(alternative.value("type", "?"));
      return At(ptr, fmt::format("expected {}, got {}", fmt::join(types, " or "), JsonTypeName(value)));
    }
    if (!Fits(schema, value)) {
      return At(ptr, fmt::format("expected {}, got {}", schema["type"].get<std::string>(), JsonTypeName(value)));
    }
    if (schema.contains("enum")) return CheckEnum(schema["enum"], value, ptr);
    if (value.is_object()) return CheckObject(schema, value, ptr);
    if (value.is_array()) return CheckArray(schema, value, ptr);
    if (value.is_string()) return CheckString(schema, value.get<std::string>(), ptr);
    if (value.is_number()) return CheckNumber(schema, value.get<double>(), ptr);
  }

  std::vector<std::pair<std::size_t, std::string>> errors;

 private:
  void At(const JsonPointer& ptr, const std::string& what) {
    errors.push_back({doc_.OffsetOf(ptr), doc_.ErrorAt(ptr, what).message()});
  }

  void CheckEnum(const json& allowed, const json& value, const JsonPointer& ptr) {
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
    std::vector<std::string> names;
    for (const json& a : allowed) names.push_back(a.is_string() ? a.get<std::string>() : a.dump());
    std::string near = value.is_string() ? NearestName(value.get<std::string>(), names) : "";
    At(ptr, fmt::format("{} is not one of {}{}", Quoted(value), fmt::join(names, ", "),
                        near.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", near)));
  }

  void CheckObject(const json& schema, const json& value, const JsonPointer& ptr) {
    const json properties = schema.value("properties", json::object());
    std::vector<std::string> known;
    for (const auto& [key, sub] : properties.items()) known.push_back(key);
    for (const json& key : schema.value("required", json::array())) {
      if (!value.contains(key.get<std::string>())) At(ptr, fmt::format("missing required key \"{}\"", key.get<std::string>()));
    }
    for (const auto& [key, member] : value.items()) {
      if (properties.contains(key)) {
        Check(properties[key], member, ptr / key);
      } else if (schema.contains("additionalProperties") && schema["additionalProperties"].is_object()) {
        Check(schema["additionalProperties"], member, ptr / key);
      } else if (schema.value("additionalProperties", true) == false) {
        std::string near = NearestName(key, known);
        std::string what = near.empty() ? fmt::format("unknown key (known: {})", fmt::join(known, ", "))
                                        : fmt::format("unknown key (did you mean \"{}\"?)", near);
        errors.push_back({doc_.OffsetOf(ptr / key), doc_.ErrorAtKey(ptr, key, what).message()});
      }
    }
  }

  void CheckArray(const json& schema, const json& value, const JsonPointer& ptr) {
    if (schema.contains("minItems") && value.size() < schema["minItems"].get<std::size_t>()) {
      At(ptr, fmt::format("must hold at least {} item(s)", schema["minItems"].get<std::size_t>()));
    }
    if (!schema.contains("items")) return;
    for (std::size_t i = 0; i < value.size(); ++i) Check(schema["items"], value[i], ptr / i);
  }

  void CheckString(const json& schema, const std::string& text, const JsonPointer& ptr) {
    if (schema.contains("minLength") && text.size() < schema["minLength"].get<std::size_t>()) {
      return At(ptr, "must not be empty");
    }
    if (schema.contains("pattern") &&
        !std::regex_search(text, std::regex(schema["pattern"].get<std::string>()))) {
      At(ptr, fmt::format("{} does not match {}", Quoted(text), schema["pattern"].get<std::string>()));
    }
  }

  void CheckNumber(const json& schema, double number, const JsonPointer& ptr) {
    if (schema.contains("minimum") && number < schema["minimum"].get<double>()) {
      At(ptr, fmt::format("must be at least {}", schema["minimum"].dump()));
    } else if (schema.contains("exclusiveMinimum") && number <= schema["exclusiveMinimum"].get<double>()) {
      At(ptr, fmt::format("must be more than {}", schema["exclusiveMinimum"].dump()));
    } else if (schema.contains("maximum") && number > schema["maximum"].get<double>()) {
      At(ptr, fmt::format("must be at most {}", schema["maximum"].dump()));
    }
  }

  const JsonDocument& doc_;
};

}  // namespace

std::vector<std::string> LintDocument(const JsonDocument& doc, const json& schema) {
  Linter linter(doc);
  linter.Check(schema, doc.root(), JsonPointer());
  std::stable_sort(linter.errors.begin(), linter.errors.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& [offset, message] : linter.errors) out.push_back(std::move(message));
  return out;
}

std::vector<std::string> LintDataFile(const std::string& path, const std::string& data_dir) {
  StatusOr<JsonDocument> doc = JsonDocument::Load(path);
  if (!doc.ok() || !doc->root().is_object()) return {};
  const json& root = doc->root();
  const char* kind = root.contains("lifecycle") ? "profile" : root.contains("families") ? "suite" : "policy";
  std::ifstream in(data_dir + "/docs/" + kind + ".schema.json");
  json schema = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return {};
  return LintDocument(*doc, schema);
}

std::vector<std::string> MoreErrors(const std::string& first_error, const std::string& path,
                                    const std::string& data_dir) {
  // "file:line:col: " of a message, or "" when it has none.
  auto location = [](const std::string& message) {
    static const std::regex kLocation(R"(^(.*?:[0-9]+:[0-9]+): )");
    std::smatch m;
    return std::regex_search(message, m, kLocation) ? m[1].str() : std::string();
  };
  std::string first = location(first_error);
  std::vector<std::string> more;
  for (std::string& error : LintDataFile(path, data_dir)) {
    bool adds = location(error) != first || error.find("did you mean") != std::string::npos;
    if (first.empty() || adds) more.push_back(std::move(error));
  }
  return more;
}

}  // namespace sandprobe
