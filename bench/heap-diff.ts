// What a process holds per open stream: two heap snapshots of one worker, idle and with streams
// open, compared by kind of object; and the objects whose hidden class is theirs alone.
//
//   npm run bench -- --no-nginx --scenarios streams --streams 1000,1000 --stream-targets gateway \
//     --gateway-node-args "--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=/tmp/heap"
//   kill -USR2 <worker pid>   once between the levels, once while the second level's are open
//   node --import tsx bench/heap-diff.ts IDLE.heapsnapshot OPEN.heapsnapshot [streams open in it]
//
// The workers are the `airouter.js serve` processes whose arguments carry
// --max-semi-space-size (`ps -eo pid,args`); the bench's progress lines say when all are open.
// Each worker holds about half the streams.

import { HeapSnapshot, heldMore } from './lib/heap-snapshot.js';

const [beforeFile, afterFile, streamsArg] = process.argv.slice(2);
if (!beforeFile || !afterFile) {
  process.stderr.write('usage: node --import tsx bench/heap-diff.ts IDLE.heapsnapshot OPEN.heapsnapshot [streams]\n');
  process.exit(2);
}
const streams = Number(streamsArg ?? 1);
const before = HeapSnapshot.read(beforeFile);
const after = HeapSnapshot.read(afterFile);
const more = heldMore(before.composition(), after.composition());
const total = more.reduce((n, h) => n + h.bytes, 0);
const per = (n: number) => (n / streams).toFixed(streams > 1 ? 1 : 0);
console.log(
  `${total.toLocaleString('en-US')} bytes more${streams > 1 ? `, ${per(total)} a stream (${streams} streams)` : ''}`,
);
console.log('bytes'.padStart(12), 'a stream'.padStart(10), 'objects'.padStart(9), 'a stream'.padStart(9), ' kind');
for (const h of more.slice(0, 40)) {
  console.log(
    h.bytes.toLocaleString('en-US').padStart(12),
    per(h.bytes).padStart(10),
    String(h.count).padStart(9),
    per(h.count).padStart(9),
    ` ${h.kind}`,
  );
}
const own = after.ownShapes(Math.max(20, Math.floor(streams / 2)));
console.log(
  own.length === 0
    ? '\nno keys spread over a hidden class per object'
    : '\nobjects with a hidden class of their own (one per object, same keys):',
);
for (const s of own) console.log(String(s.classes).padStart(8), ` ${s.keys.slice(0, 160)}`);
// An async function waiting for as long as a stream lasts keeps its whole frame.
const waitedBefore = before.suspended();
const waiting = [...after.suspended()]
  .map(([fn, n]) => [fn, n - (waitedBefore.get(fn) ?? 0)] as const)
  .filter(([, n]) => n > 0)
  .sort((a, b) => b[1] - a[1]);
console.log(waiting.length === 0 ? '\nno more async functions waiting' : '\nasync functions waiting (more than idle):');
for (const [fn, n] of waiting.slice(0, 20)) console.log(String(n).padStart(8), per(n).padStart(9), ` ${fn}`);
