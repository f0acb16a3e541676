// The HTML shell of the feature-matrix page. Everything it shows is rendered
// by its inline script from the matrix-data block; nothing is fetched.
#include <string>

#include "hone-matrix/matrix_page.h"

namespace hone::matrix {
namespace {

constexpr const char* kHead = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hone feature matrix</title>
<style>
  :root { --passed:#1f883d; --skipped:#9a6700; --failed:#cf222e; --untested:#8c959f; --bg:#f6f8fa; }
  body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1f2328; }
  h1 { font-size: 22px; margin: 0 0 4px; }
  #meta { color: #59636e; margin-bottom: 14px; }
  #totals span { display: inline-block; margin-right: 14px; font-weight: 600; }
  nav { display: flex; flex-wrap: wrap; gap: 4px; border-bottom: 1px solid #d1d9e0; margin: 16px 0 0; }
  nav button { border: 1px solid transparent; border-bottom: none; background: none; padding: 7px 14px;
               font: inherit; cursor: pointer; border-radius: 6px 6px 0 0; color: #59636e; }
  nav button[aria-selected="true"] { border-color: #d1d9e0; background: #fff; color: #1f2328;
               font-weight: 600; margin-bottom: -1px; }
  nav button .count { font-size: 11px; color: var(--failed); margin-left: 4px; }
  table { border-collapse: collapse; margin-top: 16px; min-width: 480px; }
  th, td { border: 1px solid #d1d9e0; padding: 6px 10px; text-align: left; vertical-align: top; }
  th { background: var(--bg); font-weight: 600; }
  td.cell { text-align: center; min-width: 110px; cursor: default; }
  td.cell .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff;
                   font-size: 12px; font-weight: 600; }
  td.cell .reason { display: block; color: #59636e; font-size: 11px; margin-top: 3px; max-width: 260px; }
  .passed .badge { background: var(--passed); } .skipped .badge { background: var(--skipped); }
  .failed .badge { background: var(--failed); } .untested .badge { background: var(--untested); }
  .row-id { color: #59636e; font-family: ui-monospace, monospace; font-size: 12px; }
  #legend { margin-top: 18px; color: #59636e; font-size: 12px; }
</style>
</head>
<body>
<h1 id="title"></h1>
<div id="meta"></div>
<div id="totals"></div>
<nav id="tabs" role="tablist"></nav>
<div id="panel" role="tabpanel"></div>
<div id="legend">A cell is the worst result of the tests that prove it: failed &gt; skipped &gt; passed.
Hover a cell for the tests and the time of the run. A cell with a "run on" line was
measured on that machine (the GPU columns: CI has no GPU), not by this run. Untested cells have no test yet.</div>
<script type="application/json" id="matrix-data">)HTML";

constexpr const char* kTail = R"HTML(</script>
<script>
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('matrix-data').textContent);
  var cells = data.cells || {};
  document.getElementById('title').textContent = data.title || 'feature matrix';
  var run = data.run || {};
  document.getElementById('meta').textContent =
      (run.commit ? 'commit ' + run.commit + ' · ' : '') + (run.time ? 'run ' + run.time : 'no test run merged yet');
  var totals = {passed: 0, skipped: 0, failed: 0, untested: 0};
  Object.keys(cells).forEach(function (k) { totals[cells[k].status] = (totals[cells[k].status] || 0) + 1; });
  var t = document.getElementById('totals');
  ['passed', 'skipped', 'failed', 'untested'].forEach(function (s) {
    var e = document.createElement('span');
    e.className = s; e.style.color = 'var(--' + s + ')';
    e.textContent = totals[s] + ' ' + s; e.id = 'total-' + s;
    t.appendChild(e);
  });
  var nav = document.getElementById('tabs');
  var panel = document.getElementById('panel');
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function show(tabId) {
    var tab = data.tabs.filter(function (x) { return x.id === tabId; })[0] || data.tabs[0];
    Array.prototype.forEach.call(nav.children, function (b) {
      b.setAttribute('aria-selected', b.dataset.tab === tab.id ? 'true' : 'false');
    });
    panel.innerHTML = '';
    panel.dataset.tab = tab.id;
    var table = el('table');
    var head = el('tr');
    head.appendChild(el('th', '', 'feature'));
    tab.columns.forEach(function (c) { head.appendChild(el('th', '', c)); });
    table.appendChild(head);
    tab.rows.forEach(function (r) {
      var tr = el('tr');
      var th = el('td');
      th.appendChild(el('div', '', r.title || r.id));
      th.appendChild(el('div', 'row-id', tab.id + '.' + r.id));
      tr.appendChild(th);
      tab.columns.forEach(function (c) {
        var id = tab.id + '.' + r.id + '/' + c;
        var cell = cells[id] || {status: 'untested'};
        var td = el('td', 'cell ' + cell.status);
        td.dataset.cellId = id;
        td.dataset.status = cell.status;
        td.appendChild(el('span', 'badge', cell.status));
        if (cell.reason) td.appendChild(el('span', 'reason', cell.reason));
        if (cell.source) td.appendChild(el('span', 'reason source', cell.source));
        td.title = id + (cell.tests && cell.tests.length ? '\ntests: ' + cell.tests.join(', ') : '') +
                   (cell.updated ? '\nupdated: ' + cell.updated : '') +
                   (cell.source ? '\n' + cell.source : '');
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    panel.appendChild(table);
    if (history.replaceState) history.replaceState(null, '', '#tab=' + tab.id);
  }
  data.tabs.forEach(function (tab) {
    var b = el('button', '', tab.title || tab.id);
    b.dataset.tab = tab.id;
    b.id = 'tab-' + tab.id;
    b.setAttribute('role', 'tab');
    var failed = 0;
    tab.rows.forEach(function (r) { tab.columns.forEach(function (c) {
      var x = cells[tab.id + '.' + r.id + '/' + c]; if (x && x.status === 'failed') failed++; }); });
    if (failed) b.appendChild(el('span', 'count', failed + ' failed'));
    b.addEventListener('click', function () { show(tab.id); });
    nav.appendChild(b);
  });
  var m = /tab=([\w-]+)/.exec(location.hash);
  show(m ? m[1] : data.tabs[0].id);
})();
</script>
</body>
</html>
)HTML";

}  // namespace

std::string render_page(const nlohmann::json& data) {
  std::string json = data.dump(1);
  // Keep the JSON from closing its <script> element early.
  std::string safe;
  safe.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      safe += "<\\/";
      ++i;
    } else {
      safe += json[i];
    }
  }
  return std::string(kHead) + safe + kTail;
}

}  // namespace hone::matrix
