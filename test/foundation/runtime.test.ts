// The runtimes the gateway supports (Node 20, 22 and 24): the one running this suite loads the
// uWebSockets.js binary and serves; an unsupported one is told what to do; package.json's
// engines says the same. CI runs the whole suite on the machine's Node and on Node 24; with
// AIROUTER_SECOND_NODE naming another node binary, this file also starts the gateway with it.

import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkUwsLoads, SUPPORTED_NODE } from '../../src/runtime.js';
import { loadUws } from '../../src/server/uws.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { childEnv, lines, REPO_ROOT, startServe } from '../helpers/child.js';
import { testCatalogue } from '../helpers/gateway.js';

const major = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

t.test('this runtime is a supported one and its uWS binary serves', async (t) => {
  const here = SUPPORTED_NODE.find((n) => n.major === major(process.version));
  t.ok(here, `Node ${process.version} is one of ${SUPPORTED_NODE.map((n) => n.major).join(', ')}`);
  t.equal(here?.abi, process.versions.modules, 'its ABI is the one the binary is picked by');
  t.doesNotThrow(checkUwsLoads, "a cluster primary's startup check passes");
  const uws = loadUws();
  t.type(uws.App, 'function');
  const app = uws.App().get('/*', (res) => void res.end('served'));
  const socket = await new Promise<unknown>((resolve) => app.listen('127.0.0.1', 0, resolve));
  t.ok(socket, 'listens');
  const port = uws.us_socket_local_port(socket as never);
  t.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'served');
  uws.us_listen_socket_close(socket as never);
});

t.test('an unsupported runtime is told which are supported and what to do', async (t) => {
  const err = t.throws(() => loadUws({ abi: '999' })) as Error;
  t.match(err.message, /native module did not load/);
  for (const n of SUPPORTED_NODE) t.match(err.message, `Node ${n.major}`, `names Node ${n.major}`);
  t.match(err.message, /glibc ≥ 2\.38/, 'and the glibc Node 24 needs');
  t.match(err.message, /Switch to a supported Node/, 'says what to do');
});

t.test("package.json's engines and the README name the supported majors", async (t) => {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  const ranges = pkg.engines.node.split('||').map((r) => r.trim());
  t.same(
    ranges.map((r) => major(r.replace(/^[\^~>=]+/, ''))),
    SUPPORTED_NODE.map((n) => n.major),
  );
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  for (const n of SUPPORTED_NODE) t.match(readme, `Node ${n.major}`, `README names Node ${n.major}`);
});

const second = process.env.AIROUTER_SECOND_NODE;
t.test(
  'the gateway starts and serves on the second runtime (AIROUTER_SECOND_NODE)',
  { skip: second ? false : 'AIROUTER_SECOND_NODE not set' },
  async (t) => {
    const version = execFileSync(second!, ['-v']).toString().trim();
    t.ok(
      SUPPORTED_NODE.some((n) => n.major === major(version)),
      `${second} is Node ${version}, a supported one`,
    );
    const fake = await startFakeUpstream();
    t.teardown(() => fake.close());
    const dir = mkdtempSync(path.join(tmpdir(), 'airouter-runtime-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const catalogue = path.join(dir, 'gateway.config.json');
    writeFileSync(catalogue, JSON.stringify(testCatalogue({ upstream: fake.url })));
    const env = childEnv({
      DATA_DIR: path.join(dir, 'data'),
      GATEWAY_CONFIG: catalogue,
      FAKE_OPENAI_KEY: 'sk-fake-openai-provider-key-0001',
      FAKE_ANTHROPIC_KEY: 'sk-ant-fake-provider-key-0002',
    });
    const gw = await startServe(t, env, 60_000, 'src/bin.js', second!);
    const key = lines(gw.stdout()).find((l) => /^ar-[0-9A-Za-z]{40}$/.test(l));
    t.ok(key, 'first start printed a key');
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'hello' }] }),
    });
    t.equal(res.status, 200, await res.clone().text());
    t.equal(((await res.json()) as { object: string }).object, 'chat.completion');
    await gw.stop('SIGTERM');
  },
);

// CI on a host whose glibc is older than Node 24's uWS binary needs (.ci/node) names the
// unpatched Node 24 here: a real wrong host, on which the gateway must stop once, saying why.
const unloadable = process.env.AIROUTER_UNLOADABLE_NODE;
t.test(
  'on a host too old for its binary, the gateway stops at once and says what to use',
  { skip: unloadable ? false : 'AIROUTER_UNLOADABLE_NODE not set' },
  async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'airouter-runtime-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const run = (args: string[]) =>
      spawnSync(unloadable!, args, {
        cwd: REPO_ROOT,
        env: childEnv({ DATA_DIR: path.join(dir, 'data'), PORT: '0', HOST: '127.0.0.1' }),
        encoding: 'utf8',
        timeout: 60_000,
      });
    const serve = run(['src/bin.js', 'serve']);
    t.not(serve.status, 0, 'serve exits');
    t.match(serve.stderr, /native module did not load/);
    t.match(
      serve.stderr,
      /This host's glibc is [\d.]+, older than the 2\.38 Node 24's binary needs: use Node 20 or Node 22 here/,
    );
    // A cluster's primary checks before forking (src/cli/serve.ts), in a child of its own node.
    const primary = run(['--import', 'tsx', '-e', "import('./src/runtime.ts').then((m) => m.checkUwsLoads())"]);
    t.not(primary.status, 0, "the primary's check fails");
    t.match(primary.stderr, /This host's glibc is/);
  },
);
