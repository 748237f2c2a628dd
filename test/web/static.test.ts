// The dashboard's files as the gateway serves them: hashed assets cached for a year (gzipped
// when asked), index.html revalidated, the client routes answered with index.html, and every
// API and ops path left to its own handler.

import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { request } from 'undici';
import { buildWeb, isFresh, readManifest, sourceHash } from '../../web/build.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { readResponse } from '../helpers/http.js';
import { captureLog } from '../helpers/payments.js';

const get = async (url: string, headers: Record<string, string> = {}) => {
  const res = await request(url, { headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body, text: body.toString('utf8') };
};

t.test('the built dashboard at /', async (t) => {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), 'airouter-web-')), 'dist');
  const manifest = await buildWeb(dir);
  t.ok(isFresh(dir), 'a build is fresh for the sources it was made from');
  t.equal(manifest.source_hash, sourceHash());
  t.same(readManifest(dir), manifest);
  for (const f of readdirSync(path.join(dir, 'assets')))
    t.match(f, /^[a-z]+-[A-Z0-9]{8}\.(js|css)$/, `${f}: content-hashed name`);

  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const gw = await startTestGateway(t, { upstream: up.url, env: { WEB_DIR: dir } });
  const html = readFileSync(path.join(dir, 'index.html'), 'utf8');

  const root = await get(`${gw.url}/`);
  t.equal(root.status, 200);
  t.equal(root.text, html, 'index.html as built');
  t.equal(root.headers['content-type'], 'text/html; charset=utf-8');
  t.equal(root.headers['cache-control'], 'no-cache', 'revalidated on every load');
  t.match(root.headers['content-security-policy'], /default-src 'self'/);
  t.equal(root.headers['referrer-policy'], 'no-referrer', 'the verification token is not passed on');
  t.match(html, `<script type="module" src="/${manifest.entry.js}">`);

  const again = await get(`${gw.url}/`, { 'if-none-match': String(root.headers.etag) });
  t.equal(again.status, 304, 'unchanged: 304');
  t.equal(again.body.length, 0);
  const gz = await get(`${gw.url}/`, { 'accept-encoding': 'gzip, br' });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.equal(gunzipSync(gz.body).toString('utf8'), html);

  for (const route of manifest.routes) {
    const r = await get(`${gw.url}${route}?token=abc`);
    t.equal(r.status, 200, `${route}: client route`);
    t.equal(r.text, html, `${route}: index.html`);
  }

  const js = readFileSync(path.join(dir, manifest.entry.js));
  const plain = await get(`${gw.url}/${manifest.entry.js}`);
  t.equal(plain.status, 200);
  t.ok(plain.body.equals(js), 'the file as built');
  t.equal(plain.headers['content-type'], 'text/javascript; charset=utf-8');
  t.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable', 'hashed: cached for a year');
  t.equal(plain.headers['content-encoding'], undefined, 'not compressed unless asked');
  const zipped = await get(`${gw.url}/${manifest.entry.js}`, { 'accept-encoding': 'gzip' });
  t.equal(zipped.headers['content-encoding'], 'gzip');
  t.equal(zipped.headers.vary, 'accept-encoding');
  t.ok(gunzipSync(zipped.body).equals(js), 'gzip of the same bytes');
  t.ok(zipped.body.length < js.length / 2, `gzipped ${zipped.body.length} of ${js.length} bytes`);
  const css = await get(`${gw.url}/${manifest.entry.css}`);
  t.equal(css.headers['content-type'], 'text/css; charset=utf-8');

  // Nothing else is shadowed: the API surfaces and ops keep their answers and their 404s.
  const cases: [string, number, (r: Awaited<ReturnType<typeof get>>) => boolean][] = [
    ['/v1/models', 401, (r) => JSON.parse(r.text).error.type === 'authentication_error'],
    ['/v1', 404, (r) => JSON.parse(r.text).error.code === 'not_found'],
    ['/v1/nothing', 404, (r) => JSON.parse(r.text).error.type === 'invalid_request_error'],
    ['/api/dashboard/keys', 401, (r) => typeof JSON.parse(r.text).error.message === 'string'],
    ['/api/nothing', 404, (r) => JSON.parse(r.text).error.code === 'not_found'],
    ['/healthz', 200, (r) => JSON.parse(r.text).status === 'ok'],
    ['/readyz', 200, (r) => JSON.parse(r.text).status === 'ready'],
    ['/metrics', 401, (r) => JSON.parse(r.text).error.code === 'authentication'],
    ['/assets/app-NOTBUILT.js', 404, (r) => /No such file/.test(JSON.parse(r.text).error.message)],
    ['/keys/extra', 404, (r) => JSON.parse(r.text).error.code === 'not_found'],
    ['/favicon.ico', 404, (r) => JSON.parse(r.text).error.code === 'not_found'],
  ];
  for (const [p, status, ok] of cases) {
    const r = await get(`${gw.url}${p}`);
    t.equal(r.status, status, `GET ${p}`);
    t.ok(ok(r), `GET ${p}: its own answer (${r.text.slice(0, 80)})`);
    t.notOk(r.text.startsWith('<!doctype html>'), `GET ${p}: not the dashboard`);
  }
  // A browser gets the dashboard's own not-found page for a path it does not have; API paths
  // stay JSON for browsers too.
  const browser = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
  for (const p of ['/keys/extra', '/no-such-page', '/favicon.ico']) {
    const r = await get(`${gw.url}${p}`, browser);
    t.equal(r.status, 404, `GET ${p} from a browser: 404`);
    t.ok(r.text.startsWith('<!doctype html>'), `GET ${p} from a browser: the dashboard's page`);
    t.match(r.headers['content-security-policy'], /default-src 'self'/, 'with the page headers');
  }
  for (const p of ['/v1/nothing', '/api/nothing', '/api/dashboard/nothing', '/assets/app-NOTBUILT.js']) {
    const r = await get(`${gw.url}${p}`, browser);
    t.equal(r.status, 404, `GET ${p} from a browser: 404`);
    t.doesNotThrow(() => JSON.parse(r.text), `GET ${p} from a browser: still JSON`);
  }
  const post = await readResponse(await request(`${gw.url}/keys`, { method: 'POST' }));
  t.equal(post.status, 404, 'client routes answer GET only');
});

t.test('the model list for the landing page needs no session', async (t) => {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const gw = await startTestGateway(t, { upstream: up.url });
  const r = await readResponse(await request(`${gw.url}/api/public/models`));
  t.equal(r.status, 200);
  t.same(
    r.json.data.map((m: { id: string }) => m.id),
    ['oa-model', 'an-model', 'fallback-model'],
  );
  t.match(r.json.data[0], { pricing: { input: 1, output: 2 }, official_pricing: { input: 1.25 }, discount_pct: 20 });
  t.match(r.headers['cache-control'], /public, max-age=\d+/);
});

t.test('without a build the gateway runs and says why / is missing', async (t) => {
  const empty = mkdtempSync(path.join(tmpdir(), 'airouter-noweb-'));
  writeFileSync(path.join(empty, 'README'), 'not a build');
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const logs = captureLog();
  const gw = await startTestGateway(t, { upstream: up.url, env: { WEB_DIR: empty }, log: logs.log });
  const r = await get(`${gw.url}/`);
  t.equal(r.status, 404);
  t.equal(JSON.parse(r.text).error.code, 'not_found');
  t.ok(
    logs.lines.some((l) => l.level === 40 && /web dashboard not served/.test(l.msg) && l.dir === empty),
    'a warning names the folder',
  );
  t.equal((await get(`${gw.url}/healthz`)).status, 200);
});
