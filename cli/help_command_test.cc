#include "cli/help_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using ::testing::HasSubstr;

TEST(HelpCommandTest, ACommandsHelpIsItsOwnHelpText) {
  CLI::App app{"tool", "tool"};
  CLI::App* run = app.add_subcommand("run", "run things");
  std::string sandbox;
  run->add_option("--sandbox", sandbox, "which sandbox");
  app.add_subcommand("list", "list things");
  StatusOr<std::string> text = SubcommandHelp(app, "run");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, run->help("tool"));
  EXPECT_THAT(*text, HasSubstr("--sandbox"));
  EXPECT_THAT(*text, HasSubstr("Usage: tool run"));
}

TEST(HelpCommandTest, AnUnknownCommandIsNamedWithTheCommands) {
  CLI::App app{"tool", "tool"};
  app.add_subcommand("run", "run things");
  app.add_subcommand("list", "list things");
  StatusOr<std::string> text = SubcommandHelp(app, "rnu");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), "help rnu: no such command (the commands: run, list)");
}

}  // namespace
}  // namespace sandprobe
