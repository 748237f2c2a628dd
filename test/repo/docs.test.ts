// The configuration table in docs/api.md is the operators' reference: it must list every
// environment variable the gateway reads, with the same one-line description as src/config.ts.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ENV_DOCS } from '../../src/config.js';
import { REPO_ROOT } from '../helpers/child.js';

t.test('docs/api.md documents every environment variable', async (t) => {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs/api.md'), 'utf8');
  const rows = new Map([...doc.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2]]));
  for (const [name, text] of Object.entries(ENV_DOCS)) {
    t.equal(rows.get(name), text, `${name} is in the table, as config.ts says it`);
  }
});
