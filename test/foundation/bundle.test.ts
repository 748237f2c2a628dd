// The compiled gateway (`npm start` runs dist/airouter.js, built by build/server.ts): it must
// find its migrations and dashboard from where the bundle sits, serve and bill like the
// sources do, and carry no TypeScript loader (that is what it is for).

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildFiles, buildServer, isFresh } from '../../build/server.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { childEnv, lines, REPO_ROOT, runCli, startServe } from '../helpers/child.js';
import { testCatalogue } from '../helpers/gateway.js';

const KEY_RE = /^ar-[0-9A-Za-z]{40}$/;

t.test('the bundle builds, knows when it is stale, and serves on the embedded defaults', async (t) => {
  // Beside the real build (same folder depth, which the bundle's paths rely on), never over it.
  const bundle = path.join(REPO_ROOT, 'dist', `test-${process.pid}.js`);
  const stamp = bundle.replace(/\.js$/, '.json');
  t.teardown(() => {
    for (const f of buildFiles(bundle)) rmSync(f, { force: true });
  });
  t.notOk(isFresh(bundle), 'no build yet: stale');
  await buildServer(bundle);
  t.ok(isFresh(bundle), 'fresh for the sources it was made from');
  t.match(
    readFileSync(bundle, 'utf8'),
    new RegExp(`//# sourceMappingURL=test-${process.pid}\\.js\\.map\\n$`),
    'the bundle names its own map',
  );
  const maps = buildFiles(bundle).filter((f) => f.endsWith('.map'));
  t.ok(
    maps.some((m) =>
      (JSON.parse(readFileSync(m, 'utf8')) as { sources: string[] }).sources.some((f) => f.endsWith('src/gateway.ts')),
    ),
    'the maps point at the sources',
  );
  const first = buildFiles(bundle);
  writeFileSync(stamp, JSON.stringify({ source_hash: 'something else' }));
  t.notOk(isFresh(bundle), 'a build made from other sources is stale');
  // A chunk left by an earlier build, which the next build must clear away.
  const stale = bundle.replace(/\.js$/, '-AAAAAAAA.js');
  writeFileSync(stale, 'export {};\n');
  await buildServer(bundle);
  t.ok(isFresh(bundle));
  t.same(
    buildFiles(bundle).sort(),
    first.sort(),
    "the same sources build the same files; an earlier build's chunks are gone",
  );
  t.same(
    readdirSync(path.dirname(bundle)).filter((f) => f.startsWith('.build-')),
    [],
    'no build folder left behind',
  );

  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-bundle-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const catalogue = path.join(dir, 'gateway.config.json');
  writeFileSync(catalogue, JSON.stringify(testCatalogue({ upstream: fake.url })));
  const env = childEnv({
    DATA_DIR: path.join(dir, 'data'),
    GATEWAY_CONFIG: catalogue,
    FAKE_OPENAI_KEY: 'sk-fake-openai-provider-key-0001',
    FAKE_ANTHROPIC_KEY: 'sk-ant-fake-provider-key-0002',
  });

  const gw = await startServe(t, env, 60_000, bundle);
  const key = lines(gw.stdout()).find((l) => KEY_RE.test(l));
  t.ok(key, 'first start ran: the migrations were found from the bundle');
  const children = (() => {
    try {
      return execFileSync('pgrep', ['-P', String(gw.proc.pid)])
        .toString()
        .trim();
    } catch {
      return '';
    }
  })();
  t.equal(children, '', 'no loader service beside the gateway (tsx would run an esbuild child)');

  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const answer = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'hello' }] }),
  });
  t.equal(answer.status, 200);
  const json = (await answer.json()) as {
    choices: { message: { content: string } }[];
    usage: { prompt_tokens: number };
  };
  t.type(json.choices[0]?.message.content, 'string');
  t.ok(json.usage.prompt_tokens > 0, 'usage passed through');

  const stream = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      model: 'oa-model',
      max_tokens: 50,
      stream: true,
      messages: [{ role: 'user', content: 'hello' }],
    }),
  });
  t.equal(stream.status, 200);
  const events = await stream.text();
  t.match(events, /event: message_start/, 'translated stream');
  t.match(events, /event: message_stop/);

  // The tokenizer thread's entry is found beside the chunks: a 100 KB one-word body is counted
  // (pieces of 256 "x", 32 tokens each), not answered by the one-token-a-byte upper bound.
  const counted = await fetch(`${gw.url}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'x'.repeat(102_400) }] }),
  });
  t.equal(counted.status, 200);
  t.same(await counted.json(), { input_tokens: 102_400 / 8 + 4 }, 'counted by the tokenizer thread');

  const page = await fetch(`${gw.url}/`);
  t.equal(page.status, 200, 'the dashboard was found from the bundle');
  t.match(page.headers.get('content-type') ?? '', /text\/html/);
  await page.arrayBuffer();

  t.same(await gw.stop('SIGTERM'), { code: 0, signal: null }, 'SIGTERM: exit 0');
  const rec = await runCli(['reconcile'], env, 30_000, bundle);
  t.equal(rec.code, 0, rec.stderr);
  t.match(rec.stdout, /^1 users checked, 0 mismatches/, 'both answers were charged exactly');
  t.match(rec.stdout, /0 usage records waiting in the outbox/);
});

/** The packages a module of the build loads when it is imported, following its static imports of the build's own chunks. */
function packagesLoaded(file: string, seen = new Set<string>()): Set<string> {
  const out = new Set<string>();
  if (seen.has(file)) return out;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  // Static imports only: `import ... from "x"` / `import "x"` at the start of a line (esbuild's output).
  for (const m of text.matchAll(/^(?:import|export)\b[^;]*?(?:from\s*)?"([^"]+)";?$/gms)) {
    const spec = m[1]!;
    if (spec.startsWith('./')) for (const p of packagesLoaded(path.join(path.dirname(file), spec), seen)) out.add(p);
    else if (!spec.startsWith('node:'))
      out.add(spec.split('/')[0]!.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
  }
  return out;
}

t.test('the command line and the cluster primary load none of the server', async (t) => {
  const bundle = path.join(REPO_ROOT, 'dist', `test-split-${process.pid}.js`);
  t.teardown(() => {
    for (const f of buildFiles(bundle)) rmSync(f, { force: true });
  });
  await buildServer(bundle);
  const entry = packagesLoaded(bundle);
  // A command that a running gateway answers loads no store client beyond what its errors name.
  t.notOk(entry.has('ioredis'), `the entry loads no Redis client (${[...entry].join(', ')})`);
  // `serve`'s primary imports the serve chunk on top of the entry, nothing more.
  const serveChunk = buildFiles(bundle).find(
    (f) => f.endsWith('.js') && readFileSync(f, 'utf8').includes('// src/cli/serve.ts'),
  );
  t.ok(serveChunk, 'serve is a chunk of its own');
  const files = new Set<string>();
  const primary = new Set([...packagesLoaded(bundle, files), ...packagesLoaded(serveChunk!, files)]);
  for (const pkg of ['rxjs', 'undici', 'nodemailer', 'qrcode'])
    t.notOk(primary.has(pkg), `the primary does not load ${pkg}`);
  const code = [...files].map((f) => readFileSync(f, 'utf8')).join('\n');
  for (const src of ['src/gateway.ts', 'src/server/uws.ts', 'src/dashboard/routes.ts'])
    t.notOk(code.includes(`// ${src}\n`), `the primary does not load ${src}`);
  t.ok(primary.has('prom-client'), 'the primary loads what it runs: the cluster metrics');
  const server = buildFiles(bundle).find(
    (f) => f.endsWith('.js') && readFileSync(f, 'utf8').includes('// src/gateway.ts'),
  );
  t.ok(server && packagesLoaded(server).has('rxjs'), 'the server chunk loads the stream stack');
  // The tokenizer's ~66 MB of tables are loaded by its thread only, never by a gateway's loop.
  t.notOk(
    primary.has('gpt-tokenizer') || packagesLoaded(server!).has('gpt-tokenizer'),
    'neither the primary nor the server loads the tokenizer',
  );
  t.ok(packagesLoaded(bundle.replace(/\.js$/, '-tokenizer.js')).has('gpt-tokenizer'), "its thread's entry does");
});
