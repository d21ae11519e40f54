#include "cli/help_command.h"

#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/bash_completion.h"
#include "contract/exit_code.h"

namespace sandprobe {
namespace {

std::vector<const CLI::App*> Subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

}  // namespace

StatusOr<std::string> SubcommandHelp(const CLI::App& app, const std::string& name) {
  std::vector<std::string> names;
  for (const CLI::App* sub : Subcommands(app)) {
    // As `sandprobe NAME --help` prints it: the same formatter, the same "Usage: PROGRAM NAME".
    if (sub->get_name() == name) return sub->help(app.get_name());
    names.push_back(sub->get_name());
  }
  return Status::Error(fmt::format("help {}: no such command (the commands: {})", name, fmt::join(names, ", ")));
}

CliHandler SetupHelp(CLI::App& help, const CliGlobals&) {
  struct HelpFlags {
    std::string command;
    bool list = false;
  };
  auto flags = std::make_shared<HelpFlags>();
  help.add_option("command", flags->command, "the command to describe (default: the program)");
  help.add_flag("--commands", flags->list, "list the commands, one per line: NAME, a tab, what it does");
  const CLI::App* app = help.get_parent();
  return [flags, app]() -> int {
    if (flags->list) {
      for (const CLI::App* sub : Subcommands(*app)) std::cout << sub->get_name() << "\t" << sub->get_description() << "\n";
      return 0;
    }
    // Not app->help(): after a parse it shows the selected subcommand's (help's own) text.
    if (flags->command.empty()) {
      return std::cout << app->get_formatter()->make_help(app, app->get_name(), CLI::AppFormatMode::Normal), 0;
    }
    StatusOr<std::string> text = SubcommandHelp(*app, flags->command);
    if (!text.ok()) return std::cerr << "sandprobe " << text.status().message() << "\n", kExitUsage;
    return std::cout << *text, 0;
  };
}

CliHandler SetupCompletion(CLI::App& completion, const CliGlobals&) {
  auto shell = std::make_shared<std::string>();
  completion.add_option("shell", *shell, "the shell the script is for")
      ->required()
      ->check(CLI::IsMember({"bash"}));
  const CLI::App* app = completion.get_parent();
  return [shell, app] {
    std::cout << BashCompletionScript(*app, "sandprobe");
    return 0;
  };
}

}  // namespace sandprobe
