// Any file a user points sandprobe at: the loaders return a Status, never crash or hang, and
// every error names a position.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "load/json_source.h"
#include "load/policy.h"
#include "load/profile.h"
#include "load/suite.h"

namespace {

void RequirePosition(const sandprobe::Status& status) {
  // "f.json:LINE:COL: ..." — the file name comes first in every error about the content.
  if (!status.ok() && status.message().rfind("f.json:", 0) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto doc = sandprobe::JsonDocument::Parse(text, "f.json");
  RequirePosition(doc.status());
  if (!doc.ok()) return 0;
  RequirePosition(sandprobe::ParsePolicy(*doc).status());
  RequirePosition(sandprobe::ParseProfile(*doc).status());
  RequirePosition(sandprobe::ParseSuite(*doc, {{"fs.read", {}}, {"fs.write", {}},
      {"fs.alias", {sandprobe::VariantKind::kOneOf, {"symlink", "dotdot"}}},
      {"net.unix", {sandprobe::VariantKind::kAbsolutePaths, {}}}, {"env.secret", {}}}).status());
  return 0;
}
