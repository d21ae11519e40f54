// Every shipped policy, profile and suite is valid against docs/{policy,profile,suite}.schema.json
// (python3 jsonschema, as for the report schema), and the schemas reject what the loaders reject
// in the common cases (so editors flag them).
#include <algorithm>

#include <gtest/gtest.h>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

// Strips // and /* */ comments outside strings (sandprobe's data files have them), then
// validates each FILE against SCHEMA; prints "FILE: path: message" per invalid file.
constexpr const char* kValidate = R"PY(
import glob, json, sys, jsonschema
def strip(text):
    out, i, n, in_string = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == '\\':
                out.append(text[i + 1]); i += 2; continue
            in_string = c != '"'; i += 1; continue
        if c == '"':
            in_string = True; out.append(c); i += 1; continue
        if text.startswith('//', i):
            j = text.find('\n', i); i = n if j < 0 else j; continue
        if text.startswith('/*', i):
            j = text.find('*/', i + 2); i = n if j < 0 else j + 2; continue
        out.append(c); i += 1
    return ''.join(out)
validator = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
for path in sys.argv[2:]:
    doc = json.loads(strip(open(path).read())) if path.endswith('.json') else json.loads(path)
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        print(f'{path[:60]}: {list(error.absolute_path)}: {error.message}')
)PY";

CliRun Validate(const std::string& kind, const std::vector<std::string>& docs) {
  std::vector<std::string> argv = {"python3", "-c", kValidate, SourcePath("docs/" + kind + ".schema.json")};
  argv.insert(argv.end(), docs.begin(), docs.end());
  return RunCommand(argv);
}

std::vector<std::string> ShippedFiles(const std::string& dir) {
  std::vector<std::string> files;
  CliRun ls = RunCommand({"find", SourcePath(dir), "-maxdepth", "1", "-name", "*.json"});
  for (std::size_t at = 0; at < ls.out.size();) {
    std::size_t end = ls.out.find('\n', at);
    files.push_back(ls.out.substr(at, end - at));
    at = end == std::string::npos ? ls.out.size() : end + 1;
  }
  return files;
}

TEST(DataSchemaValidationTest, EveryShippedFileIsValidAgainstItsSchema) {
  for (auto [kind, dir] : {std::pair{"policy", "policies"}, std::pair{"profile", "sandboxes"},
                           std::pair{"suite", "suites"}}) {
    std::vector<std::string> files = ShippedFiles(dir);
    ASSERT_GE(files.size(), 5u) << dir;
    CliRun run = Validate(kind, files);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, "") << kind;
  }
}

TEST(DataSchemaValidationTest, TheSchemasRejectWhatTheLoadersReject) {
  CliRun run = Validate("policy", {
      R"({"name": "p", "description": "d", "filesystem": {"readabel": []}})",
      R"({"name": "p", "description": "d", "limits": {"pids": "fifty"}})",
      R"({"name": "p", "description": "d", "filesystem": {"readable": ["etc"]}})",
      R"({"name": "Bad Name", "description": "d"})",
      R"({"name": "p", "description": "d"})"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("readabel"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("['limits', 'pids']"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("['filesystem', 'readable', 0]"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("['name']"), std::string::npos) << run.out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 4) << "the last one is valid\n" << run.out;
  // network.allow and network.proxy: the forms the loader reads pass, the common mistakes do not.
  CliRun network = Validate("policy", {
      R"({"name": "p", "description": "d", "network": {"allow": ["https://pypi.org"]}})",
      R"({"name": "p", "description": "d", "network": {"allow": ["pypi.org."]}})",
      R"({"name": "p", "description": "d", "network": {"allow": ["*"]}})",
      R"({"name": "p", "description": "d", "network": {"allow": ["[2001:db8::1]443"]}})",
      R"({"name": "p", "description": "d", "network": {"proxy": "socks5://127.0.0.1:1080"}})",
      R"({"name": "p", "description": "d", "network": {"dns": "filtered", "proxy": "env", "allow": [
          "loopback-tcp", "pypi.org:443", "*.lab.test", "192.0.2.7", "[2001:db8::7]:443",
          "198.51.100.0/24:22", "2001:db8::/32"]}})",
      R"({"name": "p", "description": "d", "network": {"proxy": "http://[::1]:3128/"}})"});
  EXPECT_EQ(network.exit_code, 0) << network.err;
  EXPECT_EQ(std::count(network.out.begin(), network.out.end(), '\n'), 5) << "the last two are valid\n" << network.out;
  EXPECT_NE(network.out.find("['network', 'proxy']"), std::string::npos) << network.out;
  CliRun profile = Validate("profile", {
      R"({"name": "x", "description": "d", "backend": "host", "lifecycle": "session",
          "injection": "host-path", "probe_path": "/p", "run": ["x"]})"});
  EXPECT_EQ(profile.exit_code, 0) << profile.err;
  EXPECT_FALSE(profile.out.empty()) << "a session profile with run and no start/exec/stop";
  CliRun suite = Validate("suite", {R"({"name": "s", "description": "d", "families": []})"});
  EXPECT_NE(suite.out.find("['families']"), std::string::npos) << suite.out;
}

}  // namespace
}  // namespace sandprobe::testing
