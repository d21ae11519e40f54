#include "contract/probe_identity.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace sandprobe {
namespace {

// The value of `key` for a message: the JSON text, cut short ("absent" when missing).
std::string Shown(const nlohmann::json& hello, const char* key) {
  auto it = hello.find(key);
  if (it == hello.end()) return "absent";
  std::string text = it->dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

}  // namespace

std::optional<ProbeIdentity> HelloIdentity(const nlohmann::json& hello) {
  auto text = [&hello](const char* key) -> std::optional<std::string> {
    auto it = hello.find(key);
    if (it == hello.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) return std::nullopt;
    return it->get<std::string>();
  };
  if (text("family") != "hello") return std::nullopt;
  std::optional<std::string> runtime = text("runtime"), build_id = text("build_id");
  auto families = hello.find("families");
  if (!runtime || !build_id || families == hello.end() || !families->is_array()) return std::nullopt;
  ProbeIdentity identity{*runtime, *build_id, {}};
  for (const nlohmann::json& name : *families) {
    if (!name.is_string()) return std::nullopt;
    identity.families.push_back(name.get<std::string>());
  }
  return identity;
}

std::optional<std::string> HelloMismatch(const ProbeFrames& frames, const ProbeIdentity& expected) {
  if (frames.facts.empty()) return std::nullopt;
  const nlohmann::json& hello = frames.facts.front();
  if (hello.value("family", "") != "hello") {
    return fmt::format("the first fact is {}, not the hello every probe writes first", Shown(hello, "family"));
  }
  auto is = [&hello](const char* key, const std::string& want) {
    auto it = hello.find(key);
    return it != hello.end() && it->is_string() && it->get<std::string>() == want;
  };
  if (!is("runtime", expected.runtime)) {
    return fmt::format("hello runtime {}, the injected probe's is \"{}\"", Shown(hello, "runtime"), expected.runtime);
  }
  if (!is("build_id", expected.build_id)) {
    return fmt::format("hello build_id {}, the injected probe's is \"{}\"", Shown(hello, "build_id"),
                       expected.build_id);
  }
  std::set<std::string> said;
  auto families = hello.find("families");
  bool listed = families != hello.end() && families->is_array();
  for (const nlohmann::json& name : listed ? *families : nlohmann::json::array()) {
    if (!name.is_string()) listed = false;
    else said.insert(name.get<std::string>());
  }
  const std::set<std::string> want(expected.families.begin(), expected.families.end());
  if (!listed || said != want) {
    return fmt::format("hello families {}, the injected probe's build lists {} families",
                       Shown(hello, "families"), want.size());
  }
  return std::nullopt;
}

}  // namespace sandprobe
