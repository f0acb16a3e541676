// Opens a feature-matrix page in headless Chromium (Debian's /usr/bin/chromium
// through playwright-core), clicks every tab and checks that each rendered
// cell shows the status the page's matrix-data JSON holds. Writes a
// screenshot of each tab when --screenshots DIR is given.
//
//   node check_page.js PAGE.html [--screenshots DIR]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const page_path = path.resolve(process.argv[2] || '');
const shots = process.argv.indexOf('--screenshots') > 0 ? process.argv[process.argv.indexOf('--screenshots') + 1] : null;

(async () => {
  const html = fs.readFileSync(page_path, 'utf8');
  const m = /<script type="application\/json" id="matrix-data">([\s\S]*?)<\/script>/.exec(html);
  if (!m) throw new Error('page has no matrix-data block');
  const data = JSON.parse(m[1]);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let checked = 0, problems = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on('request', r => { if (!r.url().startsWith('file:')) problems.push(`page fetched ${r.url()}`); });
    await page.goto('file://' + page_path);
    for (const tab of data.tabs) {
      await page.click(`#tab-${tab.id}`);
      const shown = await page.getAttribute('#panel', 'data-tab');
      if (shown !== tab.id) problems.push(`clicking tab ${tab.id} shows ${shown}`);
      const selected = await page.getAttribute(`#tab-${tab.id}`, 'aria-selected');
      if (selected !== 'true') problems.push(`tab ${tab.id} is not marked selected`);
      const cells = await page.$$eval('td.cell', tds => tds.map(td => [td.dataset.cellId, td.dataset.status, td.textContent]));
      const expected = tab.rows.length * tab.columns.length;
      if (cells.length !== expected) problems.push(`tab ${tab.id}: ${cells.length} cells rendered, ${expected} expected`);
      for (const [id, status, text] of cells) {
        const want = (data.cells[id] || {}).status;
        if (status !== want) problems.push(`${id}: rendered ${status}, JSON says ${want}`);
        if (!text.startsWith(want)) problems.push(`${id}: shows "${text}", JSON says ${want}`);
        const reason = (data.cells[id] || {}).reason;
        if (reason && !text.includes(reason)) problems.push(`${id}: reason not shown`);
        ++checked;
      }
      if (shots) {
        fs.mkdirSync(shots, { recursive: true });
        await page.screenshot({ path: path.join(shots, `${tab.id}.png`), fullPage: true });
      }
    }
  } finally {
    await browser.close();
  }
  if (problems.length) {
    console.log(problems.slice(0, 20).join('\n'));
    console.log(`${problems.length} problems in ${checked} cells`);
    process.exit(1);
  }
  console.log(`page ok: ${checked} cells in ${data.tabs.length} tabs match the JSON`);
})().catch(e => { console.error(`error: ${e.message}`); process.exit(1); });
