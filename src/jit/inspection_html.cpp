// The inspection page: rows rendered here, from the same tree the embedded
// JSON holds, so a browser test can check one against the other. The script
// only filters and folds; the page loads nothing from anywhere.
#include <fmt/core.h>

#include <string>

#include "hone/inspection.h"

#include "core/html.h"

namespace hone {

namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

std::string leaves_html(const std::vector<LeafSeen>& leaves) {
  std::string o;
  for (const auto& l : leaves) {
    o += "<div class=\"leaf\"><span class=\"path\">" +
         html_escape(l.path.empty() ? "(root)" : l.path) + "</span>: <span class=\"dtype\">" +
         html_escape(l.dtype) + "</span>";
    for (const auto& s : l.shapes) o += " <span class=\"shape\">" + shape_text(s) + "</span>";
    if (l.more_shapes) o += fmt::format(" <span class=\"more\">+{} more</span>", l.more_shapes);
    if (l.rank_varied) o += " <span class=\"varied\">rank varied</span>";
    if (!l.varied_axes.empty()) {
      o += " <span class=\"varied\">varied axes";
      for (int a : l.varied_axes) o += " " + std::to_string(a);
      o += "</span>";
    }
    o += "</div>";
  }
  return o;
}

void rows(const InspectionNode& n, const std::string& parent, int depth, std::string& out) {
  const std::string id = parent.empty() ? n.name : parent + "/" + n.name;
  std::string state = n.state.empty() ? "-" : n.state;
  out += fmt::format(
      "<tr class=\"node\" data-id=\"{}\" data-parent=\"{}\" data-depth=\"{}\" data-state=\"{}\">"
      "<td class=\"name\" style=\"padding-left:{}em\">",
      html_escape(id), html_escape(parent), depth, html_escape(n.state), 0.4 + 1.4 * depth);
  if (!n.children.empty())
    out += "<button class=\"toggle\" aria-expanded=\"true\" title=\"fold\">&#9662;</button>";
  out += fmt::format("<span class=\"label\">{}</span> <span class=\"kind\">{}{}</span></td>",
                     html_escape(n.name), html_escape(n.kind),
                     n.mode.empty() ? "" : ", " + html_escape(n.mode));
  out += fmt::format("<td class=\"state s-{}\">{}", html_escape(n.state), html_escape(state));
  if (!n.reason.empty()) out += "<div class=\"reason\">" + html_escape(n.reason) + "</div>";
  out += "</td>";
  out += fmt::format("<td class=\"backend\">{}</td>", html_escape(n.backend));
  out += fmt::format("<td class=\"num calls\">{}</td>", n.calls);
  out += fmt::format("<td class=\"num total\">{:.3f}</td>", n.total_ms);
  out += fmt::format("<td class=\"num self\">{:.3f}</td>", n.self_ms);
  out += fmt::format("<td class=\"num avg\">{:.3f}</td>", n.avg_ms);
  out += fmt::format("<td class=\"num share\">{:.1f}%</td>", 100.0 * n.share);
  out += "<td class=\"inputs\">" + leaves_html(n.inputs) + "</td>";
  out += "<td class=\"outputs\">" + leaves_html(n.outputs) + "</td></tr>\n";
  for (const auto& c : n.children) rows(c, id, depth + 1, out);
}

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em;margin:0 0 .3em}
.summary{color:#555;margin:.2em 0 1em}
#filter{width:28em;padding:.3em;font:inherit}
#shown{margin-left:1em;color:#555}
table{border-collapse:collapse;margin-top:1em;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#f4f4f4;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.kind{color:#777;font-size:.85em}
.toggle{border:0;background:none;cursor:pointer;padding:0 .3em 0 0;font:inherit}
.reason{color:#933;font-size:.85em;max-width:30em;white-space:pre-wrap}
.s-tuned{color:#176b2c}.s-failed{color:#b00020}.s-skipped{color:#8a6d00}
.s-recording,.s-tuning{color:#0b5cad}.s-inspecting{color:#555}
.leaf{white-space:nowrap}.shape{font-family:monospace}.varied{color:#0b5cad;font-size:.85em}
tr.hidden{display:none}
)";

// Filter: a row stays when its text holds the query, or when a descendant's
// does (so the path to a match stays visible). Folding hides descendants.
constexpr const char* kScript = R"(
(function(){
  const rows = Array.from(document.querySelectorAll('tr.node'));
  const byId = new Map(rows.map(r => [r.dataset.id, r]));
  const folded = new Set();
  function foldedAbove(r){
    for (let p = r.dataset.parent; p; p = (byId.get(p)||{dataset:{}}).dataset.parent)
      if (folded.has(p)) return true;
    return false;
  }
  function apply(){
    const q = document.getElementById('filter').value.trim().toLowerCase();
    const keep = new Set();
    for (const r of rows) {
      if (q && !r.textContent.toLowerCase().includes(q)) continue;
      for (let id = r.dataset.id; id; id = (byId.get(id)||{dataset:{}}).dataset.parent) keep.add(id);
    }
    let shown = 0;
    for (const r of rows) {
      const hide = !keep.has(r.dataset.id) || (!q && foldedAbove(r));
      r.classList.toggle('hidden', hide);
      if (!hide) ++shown;
    }
    document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' rows';
  }
  for (const b of document.querySelectorAll('button.toggle')) {
    b.addEventListener('click', () => {
      const id = b.closest('tr').dataset.id;
      if (folded.has(id)) folded.delete(id); else folded.add(id);
      b.setAttribute('aria-expanded', folded.has(id) ? 'false' : 'true');
      b.innerHTML = folded.has(id) ? '&#9656;' : '&#9662;';
      apply();
    });
  }
  document.getElementById('filter').addEventListener('input', apply);
  apply();
})();
)";

}  // namespace

std::string inspection_html(const InspectionNode& root) {
  std::string data = inspection_json(root);
  // "</" inside a script element would end it; "<\/" is the same JSON string.
  for (size_t p = 0; (p = data.find("</", p)) != std::string::npos; p += 3)
    data.replace(p, 2, "<\\/");
  std::string body;
  rows(root, "", 0, body);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<title>hone inspection: " + html_escape(root.name) + "</title>\n<style>" + kStyle +
         "</style></head>\n<body>\n";
  out += "<h1>hone inspection: " + html_escape(root.name) + "</h1>\n";
  out += fmt::format(
      "<p class=\"summary\">{} calls, {:.3f} ms in all; self is the part of a row's time no "
      "row below it accounts for; share is of the top row's total.</p>\n",
      root.calls, root.total_ms);
  out +=
      "<input id=\"filter\" type=\"search\" placeholder=\"filter: name, state, backend, dtype, "
      "shape\" aria-label=\"filter rows\"><span id=\"shown\"></span>\n";
  out +=
      "<table id=\"tree\"><thead><tr><th>name</th><th>state</th><th>backend</th><th>calls</th>"
      "<th>total ms</th><th>self ms</th><th>avg ms</th><th>share</th><th>inputs seen</th>"
      "<th>outputs seen</th></tr></thead>\n<tbody>\n";
  out += body;
  out += "</tbody></table>\n<script type=\"application/json\" id=\"inspection-data\">" + data +
         "</script>\n<script>" + kScript + "</script>\n</body></html>\n";
  return out;
}

}  // namespace hone
