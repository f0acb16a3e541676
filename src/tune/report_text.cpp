// TuneReport as a terminal table and as a self-contained HTML page with
// inline SVG plots (latency and throughput against batch size per backend).
#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include <fmt/core.h>

#include "hone/tune_report.h"

#include "core/html.h"
#include "hone/registry.h"

namespace hone {
namespace {

std::string join_names(const std::vector<std::string>& xs) {
  std::string s;
  for (const auto& x : xs) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string status_of(const CandidateResult& c, const Decision& d) {
  if (c.backend == d.chosen()) return "chosen";
  if (!c.skipped.empty()) return "skipped";
  if (c.error && c.error->code() == ErrorCode::kUnsupportedHardware)
    return "n/a";  // this machine cannot run it
  if (c.error) return "failed";
  if (c.checked && !c.correctness.passed) return "wrong";
  if (!c.built && !c.from_cache) return "not run";
  return c.backend == kReferenceBackend ? "baseline" : "lost";
}

/// 409000 -> "409k", 1.5e6 -> "1.5M", 0.334 -> "0.334": short tick labels.
std::string short_number(double v) {
  const double a = std::abs(v);
  if (a >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{:.3g}", v);
}

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                         "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

/// One line chart: x = batch size (log2), y = value, one series per backend.
std::string svg_chart(
    const std::string& title, const std::string& unit,
    const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>& series) {
  const double W = 460, H = 280, L = 64, R = 16, T = 30, B = 44;
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
  for (const auto& [name, pts] : series)
    for (const auto& [x, y] : pts) {
      xmin = std::min(xmin, std::log2(x));
      xmax = std::max(xmax, std::log2(x));
      ymax = std::max(ymax, y);
    }
  std::ostringstream o;
  o << fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"{}\">",
      W, H, W, H, html_escape(title));
  o << fmt::format("<text x=\"{}\" y=\"18\" class=\"ct\">{}</text>", L, html_escape(title));
  if (!std::isfinite(xmin) || ymax <= 0)
    return o.str() + "<text x=\"80\" y=\"140\">no measurements</text></svg>";
  if (xmax - xmin < 1e-9) {
    xmin -= 1;
    xmax += 1;
  }
  ymax *= 1.1;
  auto px = [&](double x) { return L + (std::log2(x) - xmin) / (xmax - xmin) * (W - L - R); };
  auto py = [&](double y) { return H - B - y / ymax * (H - T - B); };
  o << fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"ax\"/>", L, H - B, W - R,
                   H - B);
  o << fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"ax\"/>", L, T, L, H - B);
  for (int i = 0; i <= 4; ++i) {
    const double y = ymax * i / 4;
    o << fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"grid\"/>", L,
                     py(y), W - R, py(y));
    o << fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>",
                     L - 6, py(y) + 4, short_number(y));
  }
  for (int e = static_cast<int>(std::ceil(xmin)); e <= static_cast<int>(std::floor(xmax)); ++e) {
    const double x = std::pow(2.0, e);
    o << fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
                     px(x), H - B + 16, x);
  }
  o << fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">batch size</text>",
      (L + W - R) / 2, H - 8);
  o << fmt::format(
      "<text x=\"14\" y=\"{}\" class=\"tick\" transform=\"rotate(-90 14 {})\" "
      "text-anchor=\"middle\">{}</text>",
      (T + H - B) / 2, (T + H - B) / 2, html_escape(unit));
  size_t k = 0;
  for (const auto& [name, pts] : series) {
    const char* color = kColors[k % std::size(kColors)];
    std::string path;
    for (const auto& [x, y] : pts)
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", px(x), py(y));
    o << fmt::format("<path d=\"{}\" stroke=\"{}\" fill=\"none\" stroke-width=\"2\"/>", path,
                     color);
    for (const auto& [x, y] : pts)
      o << fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{} batch {}: {:.4g} "
          "{}</title></circle>",
          px(x), py(y), color, html_escape(name), x, y, html_escape(unit));
    o << fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
        "class=\"tick\">{}</text>",
        W - R - 110, T + 4 + 16 * k, color, W - R - 95, T + 13 + 16 * k, html_escape(name));
    ++k;
  }
  return o.str() + "</svg>";
}

/// What is special about one measurement, for the table and the page.
std::string figures_note(const LatencyFigures& f) {
  if (f.dominated) return fmt::format("stopped after {} runs: slower than the best so far", f.runs);
  if (f.runs == 1) return "one run";
  if (f.out_of_time) return fmt::format("{} runs in the time budget", f.runs);
  return "";
}

std::string sci(double v) {
  return std::isfinite(v) ? fmt::format("{:.2e}", v) : "inf";
}

/// "passed", with the output closest to its bound: "passed: worst output 'y'
/// rel L2 3.1e-07 (bound 1e-05)".
std::string passed_text(const CandidateResult& c) {
  const OutputCheck* worst = nullptr;
  double worst_ratio = -1;
  for (const OutputCheck& o : c.correctness.outputs) {
    if (o.exact || o.bound_rel_l2 <= 0) continue;
    const double r = o.rel_l2 / o.bound_rel_l2;
    if (r > worst_ratio) worst_ratio = r, worst = &o;
  }
  if (worst == nullptr) return "passed";
  return fmt::format("passed: worst output '{}' rel L2 {} (bound {})", worst->output,
                     sci(worst->rel_l2), sci(worst->bound_rel_l2));
}

/// One line per candidate output: its errors, the f32 reference's and the bound.
std::vector<std::vector<std::string>> check_rows(const std::vector<CandidateResult>& cands) {
  std::vector<std::vector<std::string>> rows;
  for (const CandidateResult& c : cands)
    for (const OutputCheck& o : c.correctness.outputs) {
      if (o.exact) {
        rows.push_back({c.backend, o.output, "exact", "", "", "", "", "",
                        !o.passed          ? fmt::format("FAIL ({} differ)", o.mismatches)
                        : o.tied_flips > 0 ? fmt::format("pass ({} tied flips)", o.tied_flips)
                                           : "pass"});
        continue;
      }
      rows.push_back({c.backend, o.output, sci(o.rel_l2), sci(o.ref_rel_l2), sci(o.bound_rel_l2),
                      sci(o.max_err), sci(o.ref_max_err), sci(o.bound_max_err),
                      o.passed ? "pass" : "FAIL"});
    }
  return rows;
}

const char* kCheckHeader[] = {"candidate",     "output", "rel L2", "ref rel L2", "bound",
                              "max|diff|/RMS", "ref",    "bound",  "verdict"};

/// The truth and tolerance the checks used (the first candidate that has them).
std::string check_basis(const std::vector<CandidateResult>& cands) {
  const CandidateResult* first = nullptr;
  for (const CandidateResult& c : cands)
    if (!c.correctness.outputs.empty()) {
      if (first == nullptr) first = &c;
      // Candidates at several precisions have several tolerances: the rows' bounds say each.
      if (c.correctness.tolerance != first->correctness.tolerance)
        return "truth: " + first->correctness.truth + "; tolerance per precision, see each bound";
    }
  return first == nullptr
             ? ""
             : "truth: " + first->correctness.truth + "; " + first->correctness.tolerance;
}

/// A partition as Partition::describe() writes it: the blocks line, the
/// fallbacks-by-op line and the per-node fallback lines.
struct PartitionText {
  std::string blocks, by_op;
  std::vector<std::string> nodes;
};

PartitionText parse_partition(const std::string& partition) {
  PartitionText p;
  std::istringstream in(partition);
  std::string line;
  for (bool first = true; std::getline(in, line); first = false) {
    if (first)
      p.blocks = line;
    else if (line.starts_with("  fallbacks by op:"))
      p.by_op = line.substr(2);
    else if (line.starts_with("  fallback "))
      p.nodes.push_back(line.substr(2));
  }
  return p;
}

/// The HTML partition cell: the blocks and the fallbacks by op type, with the
/// fallback nodes (a transformer can have hundreds) folded away.
std::string partition_cell(const std::string& partition) {
  const PartitionText p = parse_partition(partition);
  std::string cell = "<code>" + html_escape(p.blocks) + "</code>";
  if (!p.by_op.empty()) cell += "<br><code>" + html_escape(p.by_op) + "</code>";
  if (!p.nodes.empty()) {
    std::string nodes;
    for (const std::string& n : p.nodes) nodes += html_escape(n) + "\n";
    cell += fmt::format("<details><summary>{} fallback node{}</summary><pre>{}</pre></details>",
                        p.nodes.size(), p.nodes.size() == 1 ? "" : "s", nodes);
  }
  return cell;
}

}  // namespace

std::string TuneReport::table() const {
  std::ostringstream o;
  o << fmt::format("{:<12} {:<9} {:>9} {:>6} {:>10} {:>10} {:>12}  {}\n", "backend", "status",
                   "build ms", "batch", "p50 ms", "p90 ms", "samples/s", "note");
  for (const CandidateResult& c : candidates) {
    const std::string status = status_of(c, decision);
    std::string note = c.backend == decision.chosen() ? decision.reason : c.lost_because;
    if (!c.fp32_nodes.empty()) note += "; fp32 nodes: " + join_names(c.fp32_nodes);
    if (c.from_cache) note = "(cached) " + note;
    const std::string build = c.built ? fmt::format("{:.1f}", c.build_ms) : "-";
    if (c.figures.empty()) {
      o << fmt::format("{:<12} {:<9} {:>9} {:>6} {:>10} {:>10} {:>12}  {}\n", c.backend, status,
                       build, "-", "-", "-", "-", note);
      continue;
    }
    for (size_t i = 0; i < c.figures.size(); ++i) {
      const LatencyFigures& f = c.figures[i];
      std::string line_note = i == 0 ? note : "";
      if (const std::string fn = figures_note(f); !fn.empty())
        line_note += (line_note.empty() ? "" : "; ") + fn;
      o << fmt::format("{:<12} {:<9} {:>9} {:>6} {:>10.3f} {:>10.3f} {:>12.1f}  {}\n",
                       i == 0 ? c.backend : "", i == 0 ? status : "", i == 0 ? build : "", f.batch,
                       f.p50_ms, f.p90_ms, f.throughput, line_note);
    }
  }
  if (const auto rows = check_rows(candidates); !rows.empty()) {
    o << "correctness (" << check_basis(candidates) << "):\n";
    auto line = [&](const auto& r) {
      o << fmt::format("  {:<12} {:<16} {:>9} {:>10} {:>9} {:>13} {:>9} {:>9}  {}\n", r[0], r[1],
                       r[2], r[3], r[4], r[5], r[6], r[7], r[8]);
    };
    line(kCheckHeader);
    for (const auto& r : rows) line(r);
  }
  if (!measured_inputs.empty()) {
    o << "measured at:";
    for (size_t i = 0; i < measured_inputs.size(); ++i)
      o << (i == 0 ? " " : "; ") << measured_inputs[i];
    o << "\n";
  }
  for (const CandidateResult& c : candidates)
    if (const std::string f = parse_partition(c.partition).by_op; !f.empty())
      o << fmt::format("{} partition: {}\n", c.backend, f);
  if (!optimized.empty()) o << "graph passes (once, for every candidate): " << optimized << "\n";
  o << fmt::format("chose {}: {}\n", decision.chosen(), decision.reason);
  return o.str();
}

std::string TuneReport::html() const {
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> lat, thr;
  for (const CandidateResult& c : candidates) {
    if (c.figures.empty()) continue;
    std::vector<std::pair<double, double>> l, t;
    for (const auto& f : c.figures) {
      l.emplace_back(static_cast<double>(f.batch), f.p50_ms);
      t.emplace_back(static_cast<double>(f.batch), f.throughput);
    }
    lat.emplace_back(c.backend, l);
    thr.emplace_back(c.backend, t);
  }
  std::ostringstream o;
  o << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>hone tuning report: "
    << html_escape(model) << "</title><style>"
    << "body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}"
    << "h1{font-size:20px}h2{font-size:16px;margin-top:28px}.decision{background:#eef6ee;border:"
       "1px solid #9c9;"
    << "padding:12px "
       "16px;border-radius:6px}table{border-collapse:collapse;margin-top:8px}td,th{border:1px "
       "solid #ccc;"
    << "padding:4px "
       "8px;text-align:left;vertical-align:top}th{background:#f4f4f4}.num{text-align:right;font-"
       "variant-numeric:tabular-nums}"
    << ".chosen{background:#e4f4e4}.failed,.wrong{background:#fbe9e9}.charts{display:flex;flex-"
       "wrap:wrap;gap:16px}"
    << ".chart{border:1px solid "
       "#ddd;border-radius:6px;background:#fff}.ct{font-weight:600;font-size:13px}"
    << ".tick{font-size:11px;fill:#555}.ax{stroke:#444}.grid{stroke:#eee}code{font-size:12px}."
       "muted{color:#666}"
    << "</style></head><body>";
  o << "<h1>hone tuning report: " << html_escape(model) << "</h1>";
  o << "<div class=\"decision\"><b>Chosen: " << html_escape(decision.chosen()) << "</b> &mdash; "
    << html_escape(decision.reason) << "<br><span class=\"muted\">strategy "
    << html_escape(strategy) << ", " << threads << " threads, baseline gate "
    << baseline_gate_percent << "%, tuned in " << fmt::format("{:.1f}", total_ms / 1000.0) << " s"
    << (cache_used ? fmt::format(", tuning cache {} hits / {} misses", cache_hits, cache_misses)
                   : std::string(", no cache"))
    << "</span></div>";
  if (!measured_inputs.empty()) {
    o << "<p class=\"muted\">Every candidate measured at: ";
    for (size_t i = 0; i < measured_inputs.size(); ++i)
      o << (i == 0 ? "" : "; ") << "<code>" << html_escape(measured_inputs[i]) << "</code>";
    o << "</p>";
  }
  o << "<h2>Latency and throughput against batch size</h2><div class=\"charts\">"
    << svg_chart("p50 latency", "ms", lat) << svg_chart("throughput", "samples/s", thr) << "</div>";
  o << "<h2>Candidates</h2><table><tr><th>backend</th><th>status</th><th>build</th><th>partition</"
       "th>"
    << "<th>check</th><th>batch</th><th>p50 ms</th><th>p90 ms</th><th>p99 "
       "ms</th><th>samples/s</th><th>why</th></tr>";
  for (const CandidateResult& c : candidates) {
    const std::string status = status_of(c, decision);
    const size_t rows = std::max<size_t>(1, c.figures.size());
    std::string check = !c.checked             ? "-"
                        : c.correctness.passed ? passed_text(c)
                                               : c.correctness.message;
    if (c.error) check = c.error->to_string();
    if (!c.skipped.empty()) check = "skipped: " + c.skipped;
    std::string why = c.backend == decision.chosen() ? decision.reason : c.lost_because;
    if (!c.fp32_nodes.empty()) why += "; fp32 nodes: " + join_names(c.fp32_nodes);
    for (size_t i = 0; i < rows; ++i) {
      o << "<tr class=\"" << status << "\">";
      if (i == 0) {
        const std::string span = fmt::format(" rowspan=\"{}\"", rows);
        o << "<td" << span << "><b>" << html_escape(c.backend) << "</b>"
          << (c.from_cache ? " <span class=\"muted\">(cached)</span>" : "") << "</td><td" << span
          << ">" << status << "</td><td" << span << " class=\"num\">"
          << (c.built ? fmt::format("{:.1f} ms", c.build_ms) : "-") << "</td><td" << span << ">"
          << partition_cell(c.partition) << "</td><td" << span << ">" << html_escape(check)
          << "</td>";
      }
      if (c.figures.empty()) {
        o << "<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>";
      } else {
        const LatencyFigures& f = c.figures[i];
        o << fmt::format(
            "<td class=\"num\">{}</td><td class=\"num\">{:.3f}</td><td class=\"num\">{:.3f}</td>"
            "<td class=\"num\">{:.3f}</td><td class=\"num\">{:.1f}{}</td>",
            f.batch, f.p50_ms, f.p90_ms, f.p99_ms, f.throughput,
            figures_note(f).empty()
                ? ""
                : " <span class=\"muted\">(" + html_escape(figures_note(f)) + ")</span>");
      }
      if (i == 0) o << "<td rowspan=\"" << rows << "\">" << html_escape(why) << "</td>";
      o << "</tr>";
    }
  }
  o << "</table>";
  if (const auto rows = check_rows(candidates); !rows.empty()) {
    o << "<h2>Correctness</h2><p class=\"muted\">" << html_escape(check_basis(candidates))
      << ". Errors are per output: relative L2 and max|diff| over the output's RMS, of the "
         "candidate and of the f32 reference against the truth; the bound is the larger of "
         "factor &times; the reference's and the floor.</p><table><tr>";
    for (const char* h : kCheckHeader) o << "<th>" << html_escape(h) << "</th>";
    o << "</tr>";
    for (const auto& r : rows) {
      o << "<tr class=\"" << (r[8] == "pass" ? "" : "wrong") << "\">";
      for (size_t i = 0; i < r.size(); ++i)
        o << (i >= 2 && i <= 7 ? "<td class=\"num\">" : "<td>") << html_escape(r[i]) << "</td>";
      o << "</tr>";
    }
    o << "</table>";
  }
  if (!decision.kernel_plan.empty()) {
    o << "<h2>Kernel plan of " << html_escape(decision.backend) << "</h2><ul>";
    for (const auto& k : decision.kernel_plan)
      o << "<li><code>" << html_escape(k) << "</code></li>";
    o << "</ul>";
  }
  for (const BatchSearchResult& s : batch_searches) {
    o << "<h2>Batch-size search: " << html_escape(s.backend) << "</h2><p>best batch "
      << s.best_batch << "; stopped: " << html_escape(s.stopped_because) << "</p>";
  }
  o << "<h2>Model</h2><p>" << html_escape(model) << " <code>"
    << html_escape(graph_hash.substr(0, 16)) << "</code></p><pre>" << html_escape(spec) << "</pre>";
  o << "</body></html>\n";
  return o.str();
}

}  // namespace hone
