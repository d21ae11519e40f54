// The HTML reports rendered by a real browser: a run's page (`run --html`) and a matrix's page
// (`matrix --html`) opened in headless Chromium (Debian's `chromium`); the DOM it builds holds
// every check of the reports, and a screenshot is made. SANDPROBE_KEEP_TEST_DIRS=1 keeps the
// pages and screenshots to look at.
#include <cstdint>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/test_cli_runner.h"

namespace sandprobe::testing {
namespace {

namespace fs = std::filesystem;

// Text as a serialized DOM has it (& < > escaped in text nodes).
std::string AsDomText(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

// Headless Chromium as root needs --no-sandbox; its own profile dir keeps it off $HOME.
std::vector<std::string> Chromium(const std::string& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                                   "--user-data-dir=" + dir + "/chromium-profile", "--no-first-run"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// The PNG's width and height from its IHDR chunk; {0, 0} when it is not a PNG.
std::pair<std::uint32_t, std::uint32_t> PngSize(const std::string& png) {
  if (png.size() < 24 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || png.compare(12, 4, "IHDR") != 0) return {0, 0};
  auto be32 = [&png](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(png[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

// Renders `page` in Chromium: every id of `ids` in the DOM it builds, and a 1400x1000 screenshot.
void ExpectRenders(const std::string& dir, const std::string& page, const std::vector<std::string>& ids,
                   const std::string& png) {
  CliRun dom = RunCommand(Chromium(dir, {"--dump-dom", "file://" + page}));
  ASSERT_EQ(dom.exit_code, 0) << dom.err.substr(0, 2000);
  ASSERT_NE(dom.out.find("</html>"), std::string::npos) << dom.out.substr(0, 500);
  for (const std::string& id : ids) {
    EXPECT_NE(dom.out.find(">" + AsDomText(id) + "</code>"), std::string::npos) << page << ": no " << id;
  }
  EXPECT_NE(dom.out.find("<select id=\"family\"><option value=\"\">all</option><option"), std::string::npos);
  // The page's script ran (its Content-Security-Policy lets inline script through, nothing else).
  EXPECT_NE(dom.out.find("<body data-filter=\"ready\">"), std::string::npos) << dom.out.substr(0, 300);
  CliRun shot = RunCommand(Chromium(dir, {"--screenshot=" + png, "--window-size=1400,1000", "file://" + page}));
  ASSERT_EQ(shot.exit_code, 0) << shot.err.substr(0, 2000);
  const std::string bytes = ReadText(png);
  EXPECT_GT(bytes.size(), 10000u) << png << ": a page of text and colour is more than a blank image";
  EXPECT_EQ(PngSize(bytes), (std::pair<std::uint32_t, std::uint32_t>{1400, 1000})) << png;
}

std::vector<std::string> CheckIds(const nlohmann::json& report) {
  std::vector<std::string> ids;
  for (const auto& check : report["checks"]) ids.push_back(check["id"].get<std::string>());
  return ids;
}

TEST(HtmlChromiumTest, RunAndMatrixPagesRenderWithEveryCheck) {
  if (!BackendAvailable("chromium", {"chromium", "--version"})) return;
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string dir = MakeTempDir("html");
  CliRun run = RunCli({"run", "--sandbox", "bwrap-strict,bwrap-leaky", "--no-color", "--json", dir + "/r.json",
                       "--html", dir + "/r.html"});
  ASSERT_EQ(run.exit_code, 1) << "bwrap-leaky fails its policy: " << run.out << run.err;
  const nlohmann::json leaky = ReadJson(dir + "/r.bwrap-leaky.json");
  const nlohmann::json strict = ReadJson(dir + "/r.bwrap-strict.json");
  ASSERT_TRUE(leaky.is_object() && strict.is_object()) << run.err;
  ASSERT_GT(leaky["summary"]["fail"].get<int>(), 0);
  ExpectRenders(dir, dir + "/r.bwrap-leaky.html", CheckIds(leaky), dir + "/run.png");

  CliRun matrix = RunCli({"matrix", dir + "/r.bwrap-strict.json", dir + "/r.bwrap-leaky.json", "--html",
                          dir + "/m.html"});
  ASSERT_EQ(matrix.exit_code, 0) << matrix.err;
  std::vector<std::string> ids = CheckIds(strict);
  for (const std::string& id : CheckIds(leaky)) ids.push_back(id);
  ExpectRenders(dir, dir + "/m.html", ids, dir + "/matrix.png");

  // The family filter works in the browser: #family=env.secret hides every other family's row.
  CliRun filtered = RunCommand(Chromium(dir, {"--dump-dom", "file://" + dir + "/m.html#family=env.secret"}));
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err.substr(0, 2000);
  EXPECT_NE(filtered.out.find("<tr data-family=\"env.secret\" data-agree=\"0\"><td>"), std::string::npos)
      << "env.secret's row shown";
  EXPECT_NE(filtered.out.find("<tr data-family=\"fs.read\" data-agree=\"0\" hidden=\"\">"), std::string::npos)
      << "fs.read's rows hidden";
}

// A saved report whose values are markup (a node's report may come from anywhere): the page shows
// them as text, and the browser runs none of it.
TEST(HtmlChromiumTest, MarkupInAReportIsShownAsTextNotRun) {
  if (!BackendAvailable("chromium", {"chromium", "--version"})) return;
  if (!BackendAvailable("bwrap", kBwrapUp)) return;
  const std::string dir = MakeTempDir("html");
  CliRun run = RunCli({"run", "--sandbox", "bwrap-strict", "--no-color", "--json", dir + "/r.json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  nlohmann::json report = ReadJson(dir + "/r.json");
  const std::string id = "fs.read:<script>document.body.setAttribute('data-pwned','1')</script>";
  report["checks"][0]["id"] = id;
  report["checks"][0]["observed"] = "<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\">";
  report["profile"]["name"] = "<b>evil</b>";
  std::ofstream(dir + "/evil.json") << report.dump();
  CliRun matrix = RunCli({"matrix", dir + "/evil.json", dir + "/r.json", "--html", dir + "/m.html"});
  ASSERT_EQ(matrix.exit_code, 0) << matrix.err;
  CliRun dom = RunCommand(Chromium(dir, {"--dump-dom", "file://" + dir + "/m.html"}));
  ASSERT_EQ(dom.exit_code, 0) << dom.err.substr(0, 2000);
  EXPECT_NE(dom.out.find("<body data-filter=\"ready\">"), std::string::npos) << "only the page's script ran";
  EXPECT_EQ(dom.out.find("data-pwned=\""), std::string::npos);
  EXPECT_NE(dom.out.find(">" + AsDomText(id) + "</code>"), std::string::npos);
  EXPECT_NE(dom.out.find("&lt;b&gt;evil&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(dom.out.find("<b>evil</b>"), std::string::npos);
}

}  // namespace
}  // namespace sandprobe::testing
