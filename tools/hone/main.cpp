// hone: the command-line tool. Each subcommand lives in its own file
// (inspect.cpp, run.cpp, backends.cpp, conformance.cpp) and registers itself
// through cli_common.h; this file holds the global options.
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli_common.h"
#include "hone/logging.h"
#include "hone/version.h"

namespace {

// Kept in step with project(hone VERSION ...) in the top-level CMakeLists.txt.

}  // namespace

int main(int argc, char** argv) {
  using namespace hone::cli;
  CLI::App app{"hone: tune, check and run neural-network models (ONNX) on this machine"};
  app.set_version_flag("--version", std::string("hone ") + hone::kVersion);
  app.require_subcommand(1);
  // Global options (--threads, --log-level) may also follow the command:
  // `hone tune m.onnx -o m.hone --threads 2`.
  app.fallthrough();
  std::string log_level;
  int threads = -1;
  app.add_option("--log-level", log_level, "trace, debug, info, warn (default), error or off")
      ->type_name("LEVEL");
  app.add_option("--threads", threads, "worker threads for kernels (0 = all hardware threads)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);

  std::vector<Command> commands;
  add_inspect_command(app, commands);
  add_run_command(app, commands);
  add_backends_command(app, commands);
  add_conformance_command(app, commands);
  add_bench_command(app, commands);
  add_tune_command(app, commands);
  add_infer_command(app, commands);
  add_describe_command(app, commands);
  add_export_command(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  hone::set_log_level_from_env();
  if (!log_level.empty()) {
    auto level = hone::parse_log_level(log_level);
    if (!level) return usage_error("--log-level: " + level.error().message());
    hone::set_log_level(*level);
  }
  set_requested_threads(threads);

  for (const Command& c : commands)
    if (c.app->parsed()) return c.run();
  return usage_error("no command given (try --help)");
}
