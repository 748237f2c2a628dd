// The bench's own clients and harness helpers (bench/lib/loadgen.ts, bench/lib/http.ts), against
// a real HTTP server: what they count is what the reports say, so a miscount is a wrong figure.

import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fetchText, freePort, getJson, parseProm, scrapeMax, waitForHttp } from '../../bench/lib/http.js';
import { autocannonClosedLoop, findWrk, wrkClosedLoop, type HttpTarget } from '../../bench/lib/loadgen.js';

interface Seen {
  served: number;
  bodies: Set<string>;
  headers: Set<string>;
  scrapes: number;
}

async function server(t: Test): Promise<{ base: string; seen: Seen }> {
  const seen: Seen = { served: 0, bodies: new Set(), headers: new Set(), scrapes: 0 };
  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.url === '/metrics') {
      // Each scrape answers as another worker would: one gauge up, one down.
      seen.scrapes++;
      res.end(`# HELP g a gauge\ng{w="x"} ${seen.scrapes}\nh ${10 - seen.scrapes}\nnot_a_number NaN\n`);
      return;
    }
    if (req.url === '/json') return void res.end('{"ok":true}');
    seen.served++;
    seen.bodies.add(body);
    seen.headers.add(String(req.headers['x-probe']));
    res.statusCode = req.url === '/refuse' ? 503 : 200;
    res.end('{}');
  };
  const srv = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
  );
  return { base: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, seen };
}

// A body and a header that a naive Lua long string would cut short.
const awkward = (base: string, p: string): HttpTarget => ({
  url: `${base}${p}`,
  headers: { 'x-probe': 'a]]b]=]c' },
  body: '{"text":"]]x]=]y"}',
});

t.test('autocannon closed loop: every answer counted, refusals as non-2xx', async (t) => {
  const { base, seen } = await server(t);
  const ok = await autocannonClosedLoop({ target: awkward(base, '/ok'), connections: 4, durationS: 1 });
  t.ok(ok.requests > 0, `${ok.requests} requests`);
  t.ok(ok.requests <= seen.served, 'no request counted that the server did not answer');
  t.equal(ok.errors + ok.non2xx, 0);
  t.ok(ok.rps > 0 && ok.latency.p50 !== null);
  t.same([...seen.bodies], ['{"text":"]]x]=]y"}'], 'the body as given');
  const refused = await autocannonClosedLoop({ target: awkward(base, '/refuse'), connections: 2, durationS: 1 });
  t.ok(refused.requests > 0 && refused.non2xx === refused.requests, `${refused.non2xx} of ${refused.requests} refused`);
});

t.test('wrk closed loop: the Lua script sends the body and headers as given, and its summary is read', async (t) => {
  const saved = process.env.WRK_BIN;
  process.env.WRK_BIN = '/nonexistent/wrk';
  t.equal(findWrk(), null, 'no wrk binary: null, and the bench falls back to autocannon');
  if (saved === undefined) delete process.env.WRK_BIN;
  else process.env.WRK_BIN = saved;
  const wrk = findWrk();
  if (!wrk) return; // not installed here: the fallback above is what the bench runs
  t.match(wrk.version, /^wrk/);
  const { base, seen } = await server(t);
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-wrk-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const r = await wrkClosedLoop({
    ...wrk,
    dir,
    target: awkward(base, '/ok'),
    connections: 4,
    durationS: 1,
    threads: 8,
  });
  t.ok(r.requests > 0 && r.requests <= seen.served, `${r.requests} requests, ${seen.served} served`);
  t.equal(r.errors + r.non2xx, 0);
  t.same([...seen.bodies], ['{"text":"]]x]=]y"}'], 'the body as given');
  t.same([...seen.headers], ['a]]b]=]c'], 'the header as given');
  t.ok(r.latency.p99 !== null && r.latency.p99 >= r.latency.p50!, 'percentiles read from its summary');
  const refused = await wrkClosedLoop({
    ...wrk,
    dir,
    target: awkward(base, '/refuse'),
    connections: 2,
    durationS: 1,
    threads: 1,
  });
  t.ok(refused.non2xx > 0, `${refused.non2xx} refusals counted`);
});

t.test('harness helpers: JSON, readiness, free ports, Prometheus scrapes', async (t) => {
  const { base } = await server(t);
  t.same(await getJson(`${base}/json`), { ok: true });
  await t.rejects(getJson(`${base}/refuse`), /status 503/, 'a control call that fails says so');
  t.equal((await fetchText(`${base}/ok`, { method: 'POST', body: '{}' })).status, 200);
  await waitForHttp(
    base,
    2000,
    () => false,
    () => '',
  );
  const port = await freePort();
  await t.rejects(
    waitForHttp(
      `http://127.0.0.1:${port}`,
      5000,
      () => true,
      () => 'its log',
    ),
    /exited\nits log/,
    'a dead process ends the wait at once',
  );
  await t.rejects(
    waitForHttp(
      `http://127.0.0.1:${port}`,
      300,
      () => false,
      () => 'its log',
    ),
    /did not answer within 300 ms/,
  );
  t.same(
    [...parseProm('# HELP x\nx{a="1"} 2\ny 3.5\nbroken\nz NaN\n')],
    [
      ['x{a="1"}', 2],
      ['y', 3.5],
    ],
  );
  const max = await scrapeMax(base, 3);
  t.equal(max.get('g{w="x"}'), 3, 'a gauge: the largest of the scrapes');
  t.equal(max.get('h'), 9, 'and for another the largest too, which came first');
  t.notOk(max.has('not_a_number'));
});
