// The feature matrix's Models tab has a "corpus-NAME" row for every model of
// the corpus manifest, and no other corpus row, so that every corpus test's
// cells have a place on the page.
//
//   node rows_match.js MANIFEST.json FEATURES.json
'use strict';
const fs = require('node:fs');
const [manifest, features] = process.argv.slice(2).map(f => JSON.parse(fs.readFileSync(f, 'utf8')));
const models = manifest.models.map(m => `corpus-${m.name}`);
const tab = features.tabs.find(t => t.id === 'models');
const rows = (tab ? tab.rows : []).map(r => r.id).filter(id => id.startsWith('corpus-'));
const missing = models.filter(m => !rows.includes(m));
const extra = rows.filter(r => !models.includes(r));
if (missing.length || extra.length) {
  console.log(`features.json models tab: missing rows [${missing}], rows without a model [${extra}]`);
  process.exit(1);
}
console.log(`${rows.length} corpus rows match the manifest`);
