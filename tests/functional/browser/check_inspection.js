// Opens an inspection page (hone inspect-run / save_report) in headless
// Chromium and checks it against the JSON the page embeds: every node of the
// tree is a row, in order, under its parent, with its calls, times, share,
// state, backend and input/output specs; the filter box keeps a match and
// its ancestors and hides the rest; folding a row hides its descendants.
//
//   node check_inspection.js PAGE.html [--screenshot FILE.png]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const page_path = path.resolve(process.argv[2] || '');
const shot = process.argv.indexOf('--screenshot') > 0 ? process.argv[process.argv.indexOf('--screenshot') + 1] : null;

function flatten(node, parent, depth, out) {
  const id = parent ? parent + '/' + node.name : node.name;
  if (id !== node.id) throw new Error(`node ${node.name}: JSON id ${node.id}, expected ${id}`);
  out.push({ node, id, parent, depth });
  for (const c of node.children) flatten(c, id, depth + 1, out);
  return out;
}

// The strings of a node the page shows (a superset check of its row text).
function strings(n) {
  const s = [n.name, n.kind, n.mode, n.state, n.backend, n.reason];
  for (const l of n.inputs.concat(n.outputs)) s.push(l.path, l.dtype);
  return s.filter(x => x).map(x => x.toLowerCase());
}

(async () => {
  const html = fs.readFileSync(page_path, 'utf8');
  const m = /<script type="application\/json" id="inspection-data">([\s\S]*?)<\/script>/.exec(html);
  if (!m) throw new Error('page has no inspection-data block');
  const data = JSON.parse(m[1]);
  const nodes = flatten(data.root, '', 0, []);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const problems = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('request', r => { if (!r.url().startsWith('file:')) problems.push(`page fetched ${r.url()}`); });
    page.on('pageerror', e => problems.push(`script error: ${e.message}`));
    await page.goto('file://' + page_path);
    const rows = () => page.$$eval('tr.node', trs => trs.map(tr => ({
      id: tr.dataset.id, parent: tr.dataset.parent, depth: Number(tr.dataset.depth),
      visible: tr.offsetParent !== null,
      text: tr.textContent,
      cell: Object.fromEntries(Array.from(tr.querySelectorAll('td')).map(td => [td.classList[td.classList.length - 1], td.textContent.trim()])),
      state: tr.querySelector('td.state').childNodes[0].textContent.trim(),
      inputs: tr.querySelector('td.inputs').textContent,
      outputs: tr.querySelector('td.outputs').textContent,
    })));
    const shown = await rows();
    if (shown.length !== nodes.length) problems.push(`${shown.length} rows rendered, the JSON has ${nodes.length} nodes`);
    nodes.forEach((want, i) => {
      const r = shown[i];
      if (!r) return;
      const n = want.node;
      const near = (text, v, digits) => Math.abs(Number(text) - v) <= 0.5 * Math.pow(10, -digits) + 1e-9;
      if (r.id !== want.id) problems.push(`row ${i}: ${r.id}, JSON order says ${want.id}`);
      if (r.parent !== want.parent) problems.push(`${want.id}: parent ${r.parent}, JSON says ${want.parent}`);
      if (r.depth !== want.depth) problems.push(`${want.id}: depth ${r.depth}, JSON says ${want.depth}`);
      if (!r.visible) problems.push(`${want.id}: hidden with an empty filter`);
      if (Number(r.cell.calls) !== n.calls) problems.push(`${want.id}: calls ${r.cell.calls}, JSON ${n.calls}`);
      if (!near(r.cell.total, n.total_ms, 3)) problems.push(`${want.id}: total ${r.cell.total}, JSON ${n.total_ms}`);
      if (!near(r.cell.self, n.self_ms, 3)) problems.push(`${want.id}: self ${r.cell.self}, JSON ${n.self_ms}`);
      if (!near(r.cell.avg, n.avg_ms, 3)) problems.push(`${want.id}: avg ${r.cell.avg}, JSON ${n.avg_ms}`);
      if (!near(r.cell.share.replace('%', ''), 100 * n.share, 1)) problems.push(`${want.id}: share ${r.cell.share}, JSON ${n.share}`);
      if (r.state !== (n.state || '-')) problems.push(`${want.id}: state ${r.state}, JSON ${n.state}`);
      if (r.cell.backend !== n.backend) problems.push(`${want.id}: backend ${r.cell.backend}, JSON ${n.backend}`);
      if (n.reason && !r.text.includes(n.reason)) problems.push(`${want.id}: reason not shown`);
      for (const [side, leaves] of [['inputs', n.inputs], ['outputs', n.outputs]]) {
        for (const l of leaves) {
          const text = r[side];
          if (!text.includes(l.dtype)) problems.push(`${want.id}: ${side} ${l.path} dtype ${l.dtype} not shown`);
          for (const s of l.shapes) if (!text.includes('[' + s.join(',') + ']')) problems.push(`${want.id}: ${side} ${l.path} shape [${s}] not shown`);
          if (l.varied_axes.length && !text.includes('varied axes ' + l.varied_axes.join(' '))) problems.push(`${want.id}: ${side} ${l.path} varied axes not shown`);
        }
      }
    });
    // The filter: each node's name in turn; a match and its ancestors stay.
    for (const want of nodes.slice(1)) {
      const q = want.node.name.toLowerCase();
      await page.fill('#filter', want.node.name);
      const expect = new Set();
      for (const n of nodes) {
        if (!strings(n.node).some(s => s.includes(q)) && !n.id.toLowerCase().split('/').pop().includes(q)) continue;
        for (let id = n.id; id; id = (nodes.find(x => x.id === id) || {}).parent) expect.add(id);
      }
      for (const r of await rows()) {
        // A row may also match on text the JSON strings do not hold (numbers); never the reverse.
        if (expect.has(r.id) && !r.visible) problems.push(`filter "${q}": ${r.id} hidden, it matches`);
        if (!expect.has(r.id) && r.visible && !r.text.toLowerCase().includes(q)) problems.push(`filter "${q}": ${r.id} shown without matching`);
      }
    }
    await page.fill('#filter', '');
    // Folding the root hides every other row; unfolding shows them again.
    if (data.root.children.length) {
      await page.click('tr.node >> nth=0 >> button.toggle');
      let after = await rows();
      if (after.slice(1).some(r => r.visible)) problems.push('folding the root left rows shown');
      await page.click('tr.node >> nth=0 >> button.toggle');
      after = await rows();
      if (after.some(r => !r.visible)) problems.push('unfolding the root left rows hidden');
    } else if (await page.$('button.toggle')) {
      problems.push('a tree of one row has a fold button');
    }
    if (shot) await page.screenshot({ path: shot, fullPage: true });
  } finally {
    await browser.close();
  }
  if (problems.length) {
    console.log(problems.slice(0, 30).join('\n'));
    console.log(`${problems.length} problems in ${nodes.length} nodes`);
    process.exit(1);
  }
  console.log(`inspection page ok: ${nodes.length} rows match the JSON, filter and folding work`);
})().catch(e => { console.error(`error: ${e.message}`); process.exit(1); });
