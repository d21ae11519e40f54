#include "cli/bash_completion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The script's words come from the app: a new option or subcommand is in it without an edit.
TEST(BashCompletionTest, ListsEverySubcommandAndItsOptions) {
  CLI::App app{"tool", "tool"};
  std::string dir, sandbox;
  bool dry = false;
  app.add_option("--data-dir", dir, "data");
  CLI::App* run = app.add_subcommand("run", "run things");
  run->add_option("-s,--sandbox", sandbox, "which sandbox");
  run->add_flag("--dry-run", dry, "only say");
  run->add_option("files", dir, "positional: not an option word");
  app.add_subcommand("list", "list things");
  const std::string script = BashCompletionScript(app, "tool");
  EXPECT_THAT(script, HasSubstr("complete -o filenames -F _tool_complete tool\n"));
  EXPECT_THAT(script, HasSubstr("run|list) command="));
  EXPECT_THAT(script, HasSubstr("compgen -W 'run list'"));
  EXPECT_THAT(script, HasSubstr("    run)\n      options='--help -h --sandbox -s --dry-run'\n      valued='--sandbox|-s' ;;"));
  EXPECT_THAT(script, HasSubstr("options='--help -h --data-dir'"));
  EXPECT_THAT(script, HasSubstr("--data-dir) ((i++))"));  // a top-level value is no subcommand
  EXPECT_THAT(script, Not(HasSubstr("files")));
}

}  // namespace
}  // namespace sandprobe
