// The Debian package as a user gets it: cpack builds the .deb from this build tree, `dpkg -x`
// unpacks it into a scratch root (never the real /usr), and the unpacked /usr/bin/sandprobe
// must find its data and probe relative to itself: `list` names every built-in, a host run
// judges (exit 1, the baseline fails) and writes its report from the installed profile, and
// the binary names no path of this checkout. Its own binary, build/tests/install_test: one
// CTest entry, one cpack run for every case.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Profile keys whose strings are prose or resolved against the profile's own file.
bool IsProseKey(const std::string& key) {
  return key == "name" || key == "description" || key == "install_hint" || key == "policy";
}

// Strings of a profile that name a file of the checkout by a relative path ("scripts/...",
// "./x", "../x"): they resolve against the working directory, which an installed tool does not
// choose. Absolute paths and placeholders ({probe_dir}, {guest}) are fine.
void CheckoutRelativeStrings(const nlohmann::json& node, const std::string& key,
                             std::vector<std::string>& found) {
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) {
      if (!IsProseKey(k)) CheckoutRelativeStrings(v, k, found);
    }
  } else if (node.is_array()) {
    for (const auto& v : node) CheckoutRelativeStrings(v, key, found);
  } else if (node.is_string()) {
    const std::string s = node.get<std::string>();
    const bool relative = s.starts_with("./") || s.starts_with("../") ||
                          (!s.empty() && s[0] != '/' && s[0] != '{' && s[0] != '-' &&
                           s.find('/') != std::string::npos && s.find(':') == std::string::npos &&
                           fs::exists(SourcePath(s.substr(0, s.find('/')))));
    if (relative) found.push_back(key + ": " + s);
  }
}

class InstallTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!BackendAvailable("dpkg", {"dpkg-deb", "--version"}) ||
        !BackendAvailable("cpack", {SANDPROBE_CPACK, "--version"})) {
      return;
    }
    std::string tmpl = (fs::temp_directory_path() / "sp-install-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    scratch_ = tmpl;
    CliRun pack = RunCommand({SANDPROBE_CPACK, "-G", "DEB", "--config",
                              std::string(SANDPROBE_BINARY_DIR) + "/CPackConfig.cmake", "-B",
                              scratch_ + "/pkg"});
    ASSERT_EQ(pack.exit_code, 0) << pack.out << pack.err;
    for (const auto& entry : fs::directory_iterator(scratch_ + "/pkg")) {
      if (entry.path().extension() == ".deb") deb_ = entry.path().string();
    }
    ASSERT_FALSE(deb_.empty()) << "cpack wrote no .deb: " << pack.out;
    CliRun unpack = RunCommand({"dpkg", "-x", deb_, scratch_ + "/root"});
    ASSERT_EQ(unpack.exit_code, 0) << unpack.err;
    root_ = scratch_ + "/root";
  }
  static void TearDownTestSuite() {
    if (!scratch_.empty()) fs::remove_all(scratch_);
  }
  void SetUp() override {
    if (root_.empty()) GTEST_SKIP() << "no package (see the suite's first failure)";
  }
  static std::string Installed() { return root_ + "/usr/bin/sandprobe"; }

  static inline std::string scratch_, deb_, root_;
};

TEST_F(InstallTest, ThePackageHoldsBinaryProbeDataSchemasAndManPage) {
  for (const char* path : {"usr/bin/sandprobe", "usr/lib/sandprobe/sandprobe-probe",
                           "usr/lib/sandprobe-js/sandprobe-probe.js",
                           "usr/share/sandprobe/suites/default.json",
                           "usr/share/sandprobe/policies/tier-low.json",
                           "usr/share/sandprobe/sandboxes/bwrap-strict.json",
                           "usr/share/sandprobe/sandboxes/srt/settings.json",
                           "usr/share/sandprobe/docs/report.schema.json",
                           "usr/share/sandprobe/docs/profile.schema.json",
                           "usr/share/sandprobe/scripts/microvm/launch",
                           "usr/share/sandprobe/docker/build-images.sh",
                           "usr/share/sandprobe/docker/agent.Dockerfile",
                           "usr/share/sandprobe/docker/probe.Dockerfile",
                           "usr/share/doc/sandprobe/README.Debian",
                           "usr/share/doc/sandprobe/examples/ci/github-actions.yml",
                           "usr/share/man/man1/sandprobe.1.gz",
                           "usr/share/bash-completion/completions/sandprobe"}) {
    EXPECT_TRUE(fs::is_regular_file(fs::path(root_) / path)) << path << " not in " << deb_;
  }
  // A man page per subcommand, as the installed binary lists them.
  CliRun commands = RunCommand({Installed(), "help", "--commands"});
  ASSERT_EQ(commands.exit_code, 0) << commands.err;
  std::istringstream lines(commands.out);
  int pages = 0;
  for (std::string line; std::getline(lines, line);) {
    const std::string page = "usr/share/man/man1/sandprobe-" + line.substr(0, line.find('\t')) + ".1.gz";
    EXPECT_TRUE(fs::is_regular_file(fs::path(root_) / page)) << page << " not in " << deb_;
    ++pages;
  }
  EXPECT_GE(pages, 10);
  // The probe directory is bound into sandboxes: the probe and nothing else.
  for (const char* dir : {"/usr/lib/sandprobe", "/usr/lib/sandprobe-js", "/usr/lib/sandprobe-python"}) {
    int entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(root_ + dir)) ++entries;
    EXPECT_EQ(entries, 1) << dir;
  }
  CliRun fields = RunCommand({"dpkg-deb", "--field", deb_, "Package", "Depends", "Recommends"});
  EXPECT_NE(fields.out.find("Package: sandprobe"), std::string::npos) << fields.out;
  EXPECT_NE(fields.out.find("libc6"), std::string::npos) << "no shlibs Depends: " << fields.out;
  // Either docker satisfies the package: Debian's or Docker's own, never one forced over the other.
  EXPECT_NE(fields.out.find("docker.io | docker-ce"), std::string::npos) << fields.out;
  for (const char* recommended : {"bubblewrap", "busybox-static"}) {
    EXPECT_NE(fields.out.find(recommended), std::string::npos) << recommended << ": " << fields.out;
  }
  // The image build runs from the package: executable, and it names no checkout path.
  const fs::path images = fs::path(root_) / "usr/share/sandprobe/docker/build-images.sh";
  EXPECT_NE(fs::status(images).permissions() & fs::perms::owner_exec, fs::perms::none);
}

// Every hint the package prints names something the package or Debian has: no profile's
// install_hint sends an installed user to scripts/setup.sh alone (it is not in the package).
TEST_F(InstallTest, NoInstallHintNamesOnlyACheckoutScript) {
  for (const auto& entry : fs::directory_iterator(fs::path(root_) / "usr/share/sandprobe/sandboxes")) {
    if (entry.path().extension() != ".json") continue;
    const nlohmann::json profile = nlohmann::json::parse(ReadAll(entry.path()), nullptr,
                                                         /*allow_exceptions=*/false,
                                                         /*ignore_comments=*/true);
    ASSERT_TRUE(profile.is_object()) << entry.path();
    const std::string hint = profile.value("install_hint", "");
    if (hint.find("scripts/setup.sh") == std::string::npos) continue;
    const bool docker = profile.value("backend", "") == "docker";
    const bool agent = hint.find("npm registry") != std::string::npos;
    // Docker profiles name the packaged image build; the agent sandboxes come from the npm
    // registry through a checkout's setup.sh (README.Debian says so).
    EXPECT_TRUE(agent || hint.find("/usr/share/sandprobe/") != std::string::npos ||
                hint.find("apt-get install") != std::string::npos)
        << entry.path().filename() << ": " << hint;
    if (docker) {
      EXPECT_NE(hint.find("/usr/share/sandprobe/docker/build-images.sh"), std::string::npos)
          << entry.path().filename() << ": " << hint;
    }
  }
}

TEST_F(InstallTest, TheInstalledBinaryNamesNoPathOfThisCheckout) {
  const std::string binary = ReadAll(Installed());
  ASSERT_FALSE(binary.empty());
  // Whole strings (a compiled-in directory) and source file names (__FILE__): a short checkout
  // path like "/src" alone could match unrelated bytes.
  const std::string source = SANDPROBE_SOURCE_DIR, build = SANDPROBE_BINARY_DIR;
  for (const std::string& baked : {source + '\0', source + "/",
                                   build + '\0', build + "/probe"}) {
    EXPECT_EQ(binary.find(baked), std::string::npos) << "the installed sandprobe contains " << baked;
  }
}

TEST_F(InstallTest, VersionNamesTheCommitAndTheBuildDate) {
  CliRun version = RunCommand({Installed(), "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_TRUE(version.out.starts_with("sandprobe ")) << version.out;
  EXPECT_NE(version.out.find("(commit "), std::string::npos) << version.out;
  EXPECT_NE(version.out.find(", built 20"), std::string::npos) << version.out;
}

TEST_F(InstallTest, ListNamesEveryBuiltinFromTheInstalledData) {
  CliRun list = RunCommand({Installed(), "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.find("INVALID"), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("(none in"), std::string::npos) << list.out;
  for (const auto& entry : fs::directory_iterator(SourcePath("sandboxes"))) {
    if (entry.path().extension() != ".json") continue;
    EXPECT_NE(list.out.find("(" + entry.path().filename().string() + ")"), std::string::npos)
        << entry.path().filename() << " missing from the installed list:\n" << list.out;
  }
}

TEST_F(InstallTest, EveryShippedProfileValidatesAndNamesNoCheckoutRelativePath) {
  const fs::path sandboxes = fs::path(root_) / "usr/share/sandprobe/sandboxes";
  for (const auto& entry : fs::directory_iterator(sandboxes)) {
    if (entry.path().extension() != ".json") continue;
    // By name: resolved in the installed data directory, its policy ("../policies/x.json")
    // beside it.
    CliRun validate = RunCommand({Installed(), "validate", entry.path().stem().string()});
    EXPECT_EQ(validate.exit_code, 0) << entry.path() << ": " << validate.out << validate.err;
    EXPECT_NE(validate.out.find(sandboxes.string()), std::string::npos)
        << "validated a file outside the installed data: " << validate.out;
    std::vector<std::string> relative;
    CheckoutRelativeStrings(
        nlohmann::json::parse(ReadAll(entry.path()), nullptr, /*allow_exceptions=*/true,
                              /*ignore_comments=*/true),
        "", relative);
    EXPECT_TRUE(relative.empty()) << entry.path().filename() << " names checkout paths: "
                                  << ::testing::PrintToString(relative);
  }
}

TEST_F(InstallTest, AHostRunFromTheInstalledTreeFailsAndWritesItsReport) {
  const std::string json = scratch_ + "/host.json";
  // From a directory that holds no data: the installed tree alone must be enough.
  CliRun run = RunCommand({Installed(), "run", "--sandbox", "host", "--no-color", "--no-progress",
                           "--json", json},
                          scratch_);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  std::ifstream in(json);
  ASSERT_TRUE(in) << "no report at " << json << ": " << run.err;
  nlohmann::json report = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["profile"]["path"], root_ + "/usr/share/sandprobe/sandboxes/host.json");
  EXPECT_EQ(report["policy"]["name"], "tier-low");
  EXPECT_EQ(SchemaProblem(report), "");
  // The baseline fails, on the harness's own witness: the probe read the host canary.
  ExpectVerdict(report, "fs.read.denied:host-canary", "fail");
}

}  // namespace
}  // namespace sandprobe::testing
