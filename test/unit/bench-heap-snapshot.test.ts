// bench/heap-diff.ts reads what a worker holds per open stream from two heap snapshots: it must
// count objects it was shown being made, and name objects whose hidden class is theirs alone
// (how a spread with a new key cost every stream a class on Node 20) without naming objects
// that share one. The snapshots are a small child process's, so that they take a second.

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HeapSnapshot, heldMore } from '../../bench/lib/heap-snapshot.js';

// 300 objects of a class (one class between them) and 200 objects that each become a prototype,
// which gives each a class of its own on every Node.
const CHILD = `
const v8 = require('node:v8');
const path = require('node:path');
const dir = process.argv[1];
const keep = [];
v8.writeHeapSnapshot(path.join(dir, 'before.heapsnapshot'));
class HeapProbe { constructor(n) { this.label = 'probe ' + n; } }
for (let i = 0; i < 300; i++) keep.push(new HeapProbe(i));
for (let i = 0; i < 200; i++) { const o = { probeKeyA: 'a' + i, probeKeyB: 'b' + i }; keep.push(o, Object.create(o)); }
// 30 calls of an async function waiting at an await, and 5 of another; 10 that returned.
const never = new Promise(() => {});
async function waitingProbe() { await never; }
async function otherProbe() { await never; }
async function doneProbe() { return 1; }
for (let i = 0; i < 30; i++) waitingProbe();
for (let i = 0; i < 5; i++) otherProbe();
for (let i = 0; i < 10; i++) doneProbe();
v8.writeHeapSnapshot(path.join(dir, 'after.heapsnapshot'));
process.stdout.write(String(keep.length));
`;

t.test('objects made between two snapshots, by kind; classes of their own named', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'heap-diff-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.equal(execFileSync(process.execPath, ['-e', CHILD, dir], { encoding: 'utf8' }), '700');
  const before = HeapSnapshot.read(path.join(dir, 'before.heapsnapshot'));
  const after = HeapSnapshot.read(path.join(dir, 'after.heapsnapshot'));

  const more = heldMore(before.composition(), after.composition());
  const probe = more.find((h) => h.kind === 'object:HeapProbe');
  t.equal(probe?.count, 300, 'every probe counted');
  t.ok(probe && probe.bytes >= 300 * 16, `their bytes (${probe?.bytes})`);
  t.ok(
    more.every((h, i) => i === 0 || more[i - 1]!.bytes >= h.bytes),
    'largest first',
  );

  const shapes = after.ownShapes(100);
  const own = shapes.find((s) => s.keys === 'Object{probeKeyA,probeKeyB}');
  t.ok(own && own.classes >= 200, `the prototypes' classes named (${own?.classes})`);
  t.notOk(
    shapes.some((s) => s.keys.startsWith('HeapProbe')),
    'objects sharing a class are not',
  );

  const waiting = after.suspended();
  t.equal(waiting.get('waitingProbe'), 30, 'async functions waiting at an await, by name');
  t.equal(waiting.get('otherProbe'), 5);
  t.equal(waiting.get('doneProbe'), undefined, 'not those that returned');
  t.equal(before.suspended().get('waitingProbe'), undefined, 'none before they were called');
});
