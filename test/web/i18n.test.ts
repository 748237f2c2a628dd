// Every string of the dashboard in both languages: each key of the English dictionary has an
// Indonesian text with the same placeholders, every API error code and field rule has words in
// both, and every key the pages ask for exists.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ERROR_CODES, FIELD_REASONS } from '../../src/dashboard/error-codes.js';
import { REPO_ROOT } from '../helpers/child.js';

// The dictionaries touch localStorage and navigator only inside functions; importing is safe.
// The specifiers are built so that the server's type check (no DOM types) does not follow them;
// web/tsconfig.json checks those files.
type Dict = Record<string, string>;
type Words = { codes: Dict; reasons: Dict };
const WEB = '../../web/src/';
const { DICTS } = (await import(`${WEB}i18n.js`)) as { DICTS: Record<'en' | 'id', Dict> };
const { ERROR_WORDS } = (await import(`${WEB}i18n-errors.js`)) as { ERROR_WORDS: Record<'en' | 'id', Words> };
// The admin pages keep their words beside them (web/src/pages/admin/words.ts).
const { ADMIN_DICTS } = (await import(`${WEB}pages/admin/words.js`)) as { ADMIN_DICTS: Record<'en' | 'id', Dict> };

const holes = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

t.test('both languages say everything, with the same placeholders', async (t) => {
  for (const dicts of [DICTS, ADMIN_DICTS]) {
    const keys = Object.keys(dicts.en);
    t.ok(keys.length > 50, `${keys.length} messages`);
    t.same(Object.keys(dicts.id).sort(), [...keys].sort(), 'Indonesian has exactly the English keys');
    for (const k of keys) {
      const en = dicts.en[k];
      const id = dicts.id[k];
      t.ok(en.trim() && id?.trim(), `${k}: not empty`);
      t.same(holes(id), holes(en), `${k}: same placeholders`);
    }
  }
});

t.test('every API error code and field rule has words in both languages', async (t) => {
  for (const lang of ['en', 'id'] as const) {
    for (const c of ERROR_CODES) t.ok(ERROR_WORDS[lang].codes[c]?.trim(), `${lang}: code ${c}`);
    for (const r of FIELD_REASONS) t.ok(ERROR_WORDS[lang].reasons[r]?.trim(), `${lang}: reason ${r}`);
  }
  for (const c of ERROR_CODES)
    t.same(holes(ERROR_WORDS.id.codes[c]), holes(ERROR_WORDS.en.codes[c]), `code ${c}: same placeholders`);
  for (const r of FIELD_REASONS)
    t.same(holes(ERROR_WORDS.id.reasons[r]), holes(ERROR_WORDS.en.reasons[r]), `reason ${r}: same placeholders`);
});

t.test('every key a page asks for exists', async (t) => {
  const dir = path.join(REPO_ROOT, 'web', 'src');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.tsx') || f.endsWith('.ts'),
  );
  const used = new Set<string>();
  for (const f of files)
    for (const m of readFileSync(path.join(dir, f), 'utf8').matchAll(/\bt\('([a-zA-Z0-9_.]+)'/g)) used.add(m[1]);
  t.ok(used.size > 80, `${used.size} keys used`);
  const missing = [...used].filter((k) => !(k in DICTS.en) && !(k in ADMIN_DICTS.en));
  t.same(missing, [], 'no key used that the dictionaries lack');
});

t.test('every code the API sends to a page has words in both languages', async (t) => {
  const src = path.join(REPO_ROOT, 'src');
  // What the usage log's error_code holds: the codes GatewayErrors are given, their kinds, and 'internal'.
  const refusals = new Set(['internal']);
  const actions = new Set<string>();
  for (const f of readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((x) => x.endsWith('.ts'))) {
    const text = readFileSync(path.join(src, f), 'utf8');
    if (!f.startsWith('dashboard') && !f.startsWith('admin') && !f.startsWith('payments'))
      for (const m of text.matchAll(/\bcode: '([a-z][a-z_]+)'/g)) refusals.add(m[1]);
    if (text.includes('recordAudit')) for (const m of text.matchAll(/'([a-z]+\.[a-z_]+)'/g)) actions.add(m[1]);
  }
  const kinds = /const STATUS: Record<ErrorKind, number> = \{([^}]+)\}/.exec(
    readFileSync(path.join(src, 'errors.ts'), 'utf8'),
  )![1];
  for (const m of kinds.matchAll(/(\w+):/g)) refusals.add(m[1]);
  t.ok(refusals.size > 20 && actions.size > 8, `${refusals.size} refusal codes, ${actions.size} audit actions`);
  for (const lang of ['en', 'id'] as const) {
    for (const c of refusals) t.ok(DICTS[lang][`refusal.${c}`]?.trim(), `${lang}: refusal ${c}`);
    for (const m of ['qris', 'epusdt', 'code', 'operator'])
      t.ok(DICTS[lang][`method.${m}`]?.trim(), `${lang}: method ${m}`);
    for (const s of ['pending', 'paid', 'expired', 'failed'])
      t.ok(DICTS[lang][`status.${s}`]?.trim(), `${lang}: deposit state ${s}`);
    for (const a of actions) t.ok(ADMIN_DICTS[lang][`audit.${a}`]?.trim(), `${lang}: audit action ${a}`);
    for (const s of ['open', 'redeemed', 'expired'])
      t.ok(ADMIN_DICTS[lang][`codeStatus.${s}`]?.trim(), `${lang}: code state ${s}`);
  }
});
