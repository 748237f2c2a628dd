// What each open stream holds should cost what its content needs. Two V8 behaviours of Node 20
// made it cost more, and these tests go red on the code that had them (Node 24's V8 has neither):
// a spread followed by a key its source lacks gave every copy a hidden class of its own, and
// randomUUID()'s string stayed a rope of some twenty pieces.
import t from 'tap';
import v8 from 'node:v8';
import vm from 'node:vm';
import { DIALECTS } from '../../src/dialects/index.js';
import { settingsOnly } from '../../src/inference/handle.js';
import { reservationId } from '../../src/billing/reservation.js';

v8.setFlagsFromString('--allow-natives-syntax');
v8.setFlagsFromString('--expose-gc');
const sameShape = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
const gc = vm.runInNewContext('gc') as () => void;

const parse = (body: object) => DIALECTS.openai.parseRequest(body);

t.test('the settings a stream keeps share one hidden class across requests', async (t) => {
  const request = (content: string) => ({ model: 'm', stream: true, messages: [{ role: 'user', content }] });
  const kept = Array.from({ length: 60 }, (_, i) => settingsOnly(parse(request(`hello ${i}`))));
  // The first copies go through V8's inline cache while it is still learning: those differ.
  const settled = kept.slice(20);
  t.ok(
    settled.every((s) => sameShape(s, settled[0]!)),
    'forty requests, one shape',
  );
  t.same(kept[7]!.messages, [], 'the content is gone');
  t.same(kept[7]!.system, []);
  t.equal(kept[7]!.stream, true, 'the settings stay');
  const withTools = settingsOnly(
    parse({ ...request('x'), tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] }),
  );
  t.equal(withTools.tools, undefined, 'tools are dropped too');
});

t.test('a reservation id is held as one flat string', async (t) => {
  const n = 20_000;
  const ids: string[] = [];
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) ids.push(reservationId());
  gc();
  const perId = (process.memoryUsage().heapUsed - before) / n;
  t.ok(perId < 160, `${perId.toFixed(0)} bytes held per id (a rope of its pieces holds about 490)`);
  t.match(ids[n - 1], /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'still a UUID (v7)');
  t.equal(new Set(ids).size, n, 'all different');
});
