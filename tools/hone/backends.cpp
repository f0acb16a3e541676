// `hone backends [--json]`: the backends this build has, with capabilities.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "dist_cli.h"
#include "hone/registry.h"

namespace hone::cli {
namespace {

template <class T, class F>
std::vector<std::string> names_of(const std::vector<T>& xs, F name) {
  std::vector<std::string> out;
  for (const auto& x : xs) out.emplace_back(name(x));
  return out;
}

std::string join(const std::vector<std::string>& xs) {
  std::string s;
  for (const auto& x : xs) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "-" : s;
}

int run_backends(bool json) {
  const BackendRegistry& reg = default_registry();
  nlohmann::json j = nlohmann::json::array();
  for (const auto& e : reg.entries()) {
    const BackendCapabilities& c = e.capabilities;
    const auto devices = names_of(c.devices, [](Device d) { return std::string(to_string(d)); });
    const auto dtypes = names_of(c.dtypes, [](DType d) { return std::string(dtype_name(d)); });
    const auto precisions =
        names_of(c.precisions, [](Precision p) { return std::string(to_string(p)); });
    std::vector<std::string> missing;  // machine-dependent precisions this machine lacks
    for (const auto& [p, need] : c.precision_needs)
      if (std::find(c.precisions.begin(), c.precisions.end(), p) == c.precisions.end())
        missing.push_back(std::string(to_string(p)) + " needs " + need);
    if (json) {
      j.push_back({{"name", e.name},
                   {"description", e.description},
                   {"devices", devices},
                   {"dtypes", dtypes},
                   {"precisions", precisions},
                   {"precision_needs", missing},
                   {"mixed_precision", c.mixed_precision},
                   {"build_mode", std::string(to_string(c.build_mode))},
                   {"dynamic_shapes", c.dynamic_shapes},
                   {"artifact",
                    c.has_artifact ? nlohmann::json(c.artifact_format) : nlohmann::json(nullptr)},
                   {"available", e.unavailable().empty()},
                   {"unavailable_reason", e.unavailable()},
                   {"tuned_by_default", !e.opt_in}});
      continue;
    }
    fmt::print("{}\n  {}\n", e.name, e.description);
    fmt::print("  devices:        {}\n", join(devices));
    fmt::print("  dtypes:         {}\n", join(dtypes));
    fmt::print("  precisions:     {}{}\n", join(precisions),
               c.mixed_precision ? " (mixed: fp32_nodes)" : "");
    for (const auto& m : missing) fmt::print("  not here:       {}\n", m);
    fmt::print("  build mode:     {}\n", to_string(c.build_mode));
    fmt::print("  dynamic shapes: {}\n", c.dynamic_shapes ? "yes" : "no");
    fmt::print("  artifact:       {}\n", c.has_artifact ? c.artifact_format : "none");
    const std::string why = e.unavailable();
    fmt::print("  available:      {}\n", why.empty() ? "yes" : "no (" + why + ")");
    if (e.opt_in) fmt::print("  tuned:          only when named (--backends {})\n", e.name);
  }
  if (json) {
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("\n{}\n", distributed_tuning_status());
  }
  return kExitOk;
}

}  // namespace

int write_backend_pages(const std::string& dir, bool check);  // backend_pages.cpp

void add_backends_command(CLI::App& root, std::vector<Command>& commands) {
  auto json = std::make_shared<bool>(false);
  auto markdown = std::make_shared<std::string>();
  auto check = std::make_shared<bool>(false);
  CLI::App* sub =
      root.add_subcommand("backends", "list the backends in this build and what they can do");
  sub->footer(
      "Examples:\n  hone backends\n  hone backends --json\n"
      "  hone backends --markdown docs/backends          # write docs/backends/<name>.md\n"
      "  hone backends --markdown docs/backends --check  # exit 1 if a page is stale");
  sub->add_flag("--json", *json, "machine-readable output");
  CLI::Option* md =
      sub->add_option("--markdown", *markdown,
                      "write DIR/<name>.md per backend (settings, capabilities, DIR/<name>.in.md)");
  sub->add_flag("--check", *check, "with --markdown: write nothing, exit 1 if a page differs")
      ->needs(md);
  commands.push_back({sub, [json, markdown, check] {
                        if (!markdown->empty()) return write_backend_pages(*markdown, *check);
                        return run_backends(*json);
                      }});
}

}  // namespace hone::cli
