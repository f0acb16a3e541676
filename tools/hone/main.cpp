// hone: the command-line tool. Each subcommand lives in its own file
// (inspect.cpp, run.cpp, backends.cpp, conformance.cpp) and registers itself
// through cli_common.h; this file holds the global options.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <unistd.h>

#include "cli_common.h"
#include "dist_cli.h"
#include "hone/limits.h"
#include "hone/logging.h"
#include "hone/platform.h"
#include "hone/temp_paths.h"
#include "hone/thread_pool.h"
#include "hone/version.h"

namespace {

// Kept in step with project(hone VERSION ...) in the top-level CMakeLists.txt.

}  // namespace

static int run_main(int argc, char** argv) {
  using namespace hone::cli;
  CLI::App app{"hone: tune, check and run neural-network models (ONNX) on this machine"};
  app.set_version_flag("--version", std::string("hone ") + hone::kVersion + "\n" +
                                        hone::distributed_tuning_status());
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  hone tune models/mlp.onnx -o mlp.hone          # try every backend, keep the best\n"
      "  hone infer mlp.hone --random-inputs 1 --dim batch=2\n"
      "  hone export mlp.hone --format triton -o model_repository/\n"
      "`hone COMMAND --help` explains each command, with examples.");
  // Global options (--threads, --log-level) may also follow the command:
  // `hone tune m.onnx -o m.hone --threads 2`.
  app.fallthrough();
  std::string log_level;
  int threads = -1;
  app.add_option("--log-level", log_level, "trace, debug, info, warn (default), error or off")
      ->type_name("LEVEL");
  std::string max_memory;
  app.add_option("--threads", threads, "worker threads for kernels (0 = all hardware threads)")
      ->type_name("N")
      ->check(CLI::Range(0, hone::kMaxThreads));
  app.add_option("--max-memory", max_memory,
                 "largest tensor, weight or arena hone allocates (e.g. 8G; default: 3/4 of RAM)")
      ->type_name("SIZE");

  app.add_option(
         "--trust-key", trust_options().trusted_keys,
         "public key (.pub from `hone keygen`) trusted to sign packages' native code "
         "(repeatable; also every *.pub in $HONE_TRUSTED_KEYS or ~/.config/hone/trusted-keys)")
      ->type_name("FILE");
  app.add_flag("--allow-unsigned-native", trust_options().allow_unsigned_native,
               "load a package's native code (aot's model.so) even when no trusted key signed it");

  std::vector<Command> commands;
  add_inspect_command(app, commands);
  add_inspect_run_command(app, commands);
  add_run_command(app, commands);
  add_backends_command(app, commands);
  add_conformance_command(app, commands);
  add_bench_command(app, commands);
  add_tune_command(app, commands);
  add_tune_many_command(app, commands);
  add_infer_command(app, commands);
  add_describe_command(app, commands);
  add_export_command(app, commands);
  add_signing_commands(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One "error:" line like every other failure (CLI11's own text follows it).
    return usage_error(std::string(e.what()) + " (see hone --help)");
  }

  hone::set_log_level_from_env();
  if (!log_level.empty()) {
    auto level = hone::parse_log_level(log_level);
    if (!level) return usage_error("--log-level: " + level.error().message());
    hone::set_log_level(*level);
  }
  if (!max_memory.empty()) {
    auto bytes = hone::parse_byte_size(max_memory);
    if (!bytes) return usage_error("--max-memory: " + bytes.error().message());
    hone::set_memory_budget(*bytes);
  }
  set_requested_threads(threads);

  for (const Command& c : commands)
    if (c.app->parsed()) return c.run();
  return usage_error("no command given (try --help)");
}

/// OpenBLAS fell back to kernels older than this CPU (hone/platform.h): run
/// again with OPENBLAS_CORETYPE naming the right ones, which OpenBLAS reads
/// only when it loads. Once: not when the variable is already set.
static void reexec_for_openblas(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const std::string core = hone::better_openblas_core();
  if (core.empty()) return;
  ::setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: go on with the old kernels
  ::unsetenv("OPENBLAS_CORETYPE");
}

int main(int argc, char** argv) {
  reexec_for_openblas(argv);
  // Staging folders and temporaries go on SIGINT/SIGTERM too.
  hone::install_cleanup_handlers();
  // Library code reports through Result; an exception reaching here is a
  // hone bug or an allocation the budget did not foresee, and still ends as
  // one error line, with the temporaries removed by their owners' destructors.
  try {
    return run_main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "error: out of memory (lower --max-memory to fail earlier, with the "
                 "tensor named)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "error: internal error: an unknown exception\n");
  }
  return hone::cli::kExitError;
}
