// docs/{policy,profile,suite}.schema.json name exactly the keys the loaders know: for every
// object the schema describes, a document with an unknown key there makes the loader list its
// known keys ("unknown key (known: ...)"), and that list must equal the schema's properties.
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "families/plan.h"
#include "load/policy.h"
#include "load/profile.h"
#include "load/suite.h"

namespace sandprobe {
namespace {

using nlohmann::json;

const std::string kSourceDir = SANDPROBE_SOURCE_DIR;

json ReadSchema(const std::string& kind) {
  std::ifstream in(kSourceDir + "/docs/" + kind + ".schema.json");
  return json::parse(in);
}

// An object the schema describes: where it sits in a document and the keys it allows.
struct SchemaObject {
  std::string pointer;  // "/limits/tolerance"
  bool array_item = false;  // the object is an item of the array at `pointer`
  std::set<std::string> keys;
};

void Collect(const json& node, const std::string& pointer, bool array_item,
             std::vector<SchemaObject>& out) {
  if (!node.is_object()) return;
  if (node.contains("properties")) {
    SchemaObject object{pointer, array_item, {}};
    for (const auto& [key, sub] : node["properties"].items()) {
      object.keys.insert(key);
      Collect(sub, pointer + "/" + key, false, out);
    }
    out.push_back(object);
  }
  if (node.contains("items")) Collect(node["items"], pointer, true, out);
  for (const char* alternatives : {"oneOf", "anyOf"}) {
    if (!node.contains(alternatives)) continue;
    for (const json& alternative : node[alternatives]) Collect(alternative, pointer, array_item, out);
  }
}

// The keys of the loader's "unknown key (known: a, b, c)" error.
std::set<std::string> KnownKeysFromError(const std::string& message) {
  std::set<std::string> keys;
  std::size_t start = message.find("(known: ");
  if (start == std::string::npos) return keys;
  std::string list = message.substr(start + 8, message.find(')', start) - start - 8);
  for (std::size_t at = 0; at <= list.size();) {
    std::size_t comma = list.find(", ", at);
    std::string key = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (!key.empty() && key.front() == '"') key = key.substr(1, key.size() - 2);
    keys.insert(key);
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  return keys;
}

using Loader = Status (*)(const JsonDocument&);

Status PolicyLoader(const JsonDocument& doc) { return ParsePolicy(doc).status(); }
Status ProfileLoader(const JsonDocument& doc) { return ParseProfile(doc).status(); }
Status SuiteLoader(const JsonDocument& doc) { return ParseSuite(doc, KnownFamilies()).status(); }

json Shipped(const std::string& relative) {
  StatusOr<JsonDocument> doc = JsonDocument::Load(kSourceDir + "/" + relative);
  EXPECT_TRUE(doc.ok()) << doc.status().message();
  return doc.ok() ? doc->root() : json::object();
}

void ExpectSchemaKeysMatchLoader(const std::string& kind, const json& valid, Loader load) {
  {
    StatusOr<JsonDocument> doc = JsonDocument::Parse(valid.dump(), kind + ".json");
    ASSERT_TRUE(doc.ok());
    ASSERT_TRUE(load(*doc).ok()) << "the base document must load: " << load(*doc).message();
  }
  std::vector<SchemaObject> objects;
  Collect(ReadSchema(kind), "", false, objects);
  ASSERT_GE(objects.size(), 2u) << kind;
  for (const SchemaObject& object : objects) {
    json bad = valid;
    json probe = {{"zz_unknown", 1}};
    if (object.pointer.empty()) bad["zz_unknown"] = 1;
    else bad[json::json_pointer(object.pointer)] = object.array_item ? json::array({probe}) : probe;
    StatusOr<JsonDocument> doc = JsonDocument::Parse(bad.dump(), kind + ".json");
    ASSERT_TRUE(doc.ok());
    Status s = load(*doc);
    ASSERT_FALSE(s.ok()) << kind << " " << object.pointer << ": an unknown key loaded";
    EXPECT_NE(s.message().find("zz_unknown: unknown key"), std::string::npos)
        << kind << " " << object.pointer << ": " << s.message();
    EXPECT_EQ(KnownKeysFromError(s.message()), object.keys)
        << kind << " " << object.pointer << ": the schema and the loader disagree: " << s.message();
  }
}

TEST(DataSchemaTest, PolicySchemaKeysAreTheLoadersKeys) {
  ExpectSchemaKeysMatchLoader("policy", {{"name", "p"}, {"description", "d"}}, PolicyLoader);
}

TEST(DataSchemaTest, ProfileSchemaKeysAreTheLoadersKeys) {
  ExpectSchemaKeysMatchLoader("profile", Shipped("sandboxes/host.json"), ProfileLoader);
}

TEST(DataSchemaTest, SuiteSchemaKeysAreTheLoadersKeys) {
  ExpectSchemaKeysMatchLoader("suite", Shipped("suites/default.json"), SuiteLoader);
}

TEST(DataSchemaTest, KnownKeysParseFromTheLoadersMessage) {
  EXPECT_EQ(KnownKeysFromError("x.json:1:2: /a: unknown key (known: \"b\", \"c\")"),
            (std::set<std::string>{"b", "c"}));
}

}  // namespace
}  // namespace sandprobe
