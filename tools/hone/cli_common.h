// Pieces the `hone` subcommands share: how a command registers itself, exit
// codes, error printing, and small file and tensor helpers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hone/backend.h"
#include "hone/error.h"
#include "hone/file_io.h"  // write_file_atomic, used by every command that writes
#include "hone/graph.h"
#include "hone/random_samples.h"
#include "hone/tensor.h"

namespace hone::cli {

/// Exit codes: 0 success, 1 a failure the tool reports, 2 bad usage.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

/// A registered subcommand: the CLI11 node and what to run once parsed.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

void add_inspect_command(CLI::App& root, std::vector<Command>& commands);
void add_inspect_run_command(CLI::App& root, std::vector<Command>& commands);
void add_run_command(CLI::App& root, std::vector<Command>& commands);
void add_backends_command(CLI::App& root, std::vector<Command>& commands);
void add_conformance_command(CLI::App& root, std::vector<Command>& commands);
void add_bench_command(CLI::App& root, std::vector<Command>& commands);
void add_tune_command(CLI::App& root, std::vector<Command>& commands);
void add_tune_many_command(CLI::App& root, std::vector<Command>& commands);
void add_infer_command(CLI::App& root, std::vector<Command>& commands);
void add_describe_command(CLI::App& root, std::vector<Command>& commands);
void add_export_command(CLI::App& root, std::vector<Command>& commands);
void add_signing_commands(CLI::App& root, std::vector<Command>& commands);

/// --threads as given (-1 when not given). Commands apply it with
/// apply_requested_threads() when they start running kernels, so that
/// `conformance` can create the pool inside each forked test process.
void set_requested_threads(int threads);
void apply_requested_threads();
/// --threads as given, -1 when not given.
int requested_threads();

/// --trust-key FILE (repeatable) and --allow-unsigned-native, global
/// options every command that loads a package applies to its LoadOptions.
struct TrustOptions {
  std::vector<std::string> trusted_keys;
  bool allow_unsigned_native = false;
};
TrustOptions& trust_options();

/// Applies --config FIELD=VALUE settings (inspect, run, bench) to `be`;
/// kInvalidArgument naming a setting that is not FIELD=VALUE.
[[nodiscard]] Result<void> apply_configs(Backend& be, const std::vector<std::string>& configs);

/// For a backend that sizes its buffers by bounds (aot's `dim_bounds`), not
/// given bounds by --config: this call's input dims become the bounds of the
/// graph inputs' symbols (the backend derives the inner dims from them).
[[nodiscard]] Result<void> bound_dims_by_inputs(Backend& be, const Graph& g,
                                                const std::vector<Tensor>& inputs);

/// Where a command's inputs come from and where its outputs go, with the
/// options `run` and `infer` share: --inputs, --random-inputs, --dim, --outputs.
struct IoOptions {
  std::string inputs_dir;
  std::optional<uint64_t> seed;
  std::vector<std::string> dims;
  std::string outputs_dir;
};
void add_io_options(CLI::App& sub, IoOptions& io);

/// Prints "error: <to_string()>" to stderr and returns kExitError.
int report(const Error& error);
/// Prints "error: <message>" to stderr and returns kExitUsage.
int usage_error(const std::string& message);
/// While set (a distributed tune, dist_cli.h), report() and usage_error()
/// hand the error to it first and print what it returns: the error every
/// rank agreed on, so all ranks fail with the failing rank's error.
void set_error_hook(std::function<Error(const Error&)> hook);

/// Parses "NAME=VALUE" (VALUE a non-negative integer) into `out`.
[[nodiscard]] Result<void> parse_dim_binding(const std::string& text,
                                             std::map<std::string, int64_t>& out);

/// Every name bound in `dims` (from --dim) must be a symbolic dim of one of
/// `g`'s inputs; the error lists the ones there are.
[[nodiscard]] Result<void> check_dim_bindings(const Graph& g,
                                              const std::map<std::string, int64_t>& dims);

/// Seeded random values for graph input `v` (the library's, shared with
/// the C API and Python so all tune on the same inputs).
using hone::random_input;

/// "f32[batch,3]", "seq<f32>", "optional<...>", "f32[?]" for a graph value.
std::string describe_value_type(const Value& v);

/// min / max / mean over a numeric tensor, and its first few values.
struct TensorStats {
  double min = 0, max = 0, mean = 0;
  int64_t nan_count = 0;
  std::vector<double> head;
};
TensorStats tensor_stats(const Tensor& t, size_t head = 6);
/// "output 0 'probs': f32[2,8]  min .. max .. mean ..  [first values]" on stdout.
void print_output_summary(size_t i, const std::string& name, const Tensor& t);
/// Writes output_<i>.npy and outputs.json (names, dtypes, shapes) into `dir`,
/// creating it; every output is serialized before anything is written.
[[nodiscard]] Result<void> write_outputs(const std::filesystem::path& dir,
                                         const std::vector<Tensor>& outputs,
                                         const std::vector<std::string>& names);
/// A double printed compactly ("0.5", "-1.25e-07", "nan").
std::string format_number(double v);

}  // namespace hone::cli
