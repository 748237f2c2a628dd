// The bench's sampling window over a real child process: the peak RSS of the whole window, and
// the peak of the samples taken while a condition held (the stream scenarios' "every stream
// open"), which must not count what the process took on after it stopped holding.
import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { TreeSampler, UsageWindow } from '../../bench/lib/proc.js';

// Takes 40 MB (touched, so resident), says so, then on "more" another 80 MB, and says so.
const CHILD = `
const held = [];
const take = (mb) => { const b = Buffer.alloc(mb << 20, 1); held.push(b); };
take(40);
process.stdout.write('one\\n');
process.stdin.on('data', () => { take(80); process.stdout.write('two\\n'); });
setInterval(() => {}, 1000);
`;

t.test('the held peak counts only the samples taken while the condition held', async (t) => {
  const child = spawn(process.execPath, ['-e', CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => child.kill());
  const lines = child.stdout!.setEncoding('utf8');
  await once(lines, 'data');
  let holding = true;
  const win = new UsageWindow(new TreeSampler(child.pid!), 20, () => holding);
  await new Promise((r) => setTimeout(r, 200));
  holding = false;
  child.stdin!.write('more\n');
  await once(lines, 'data');
  await new Promise((r) => setTimeout(r, 200));
  const u = win.finish();
  t.ok(u.rssHeldPeakMb !== null, 'samples were taken while it held');
  t.ok(u.rssHeldPeakMb! >= 40, `held peak ${u.rssHeldPeakMb} MB counts the first 40 MB`);
  t.ok(u.rssPeakMb - u.rssHeldPeakMb! >= 70, `whole peak ${u.rssPeakMb} MB, about 80 MB above the held one`);
});

t.test('a condition that never held leaves no held peak', async (t) => {
  const win = new UsageWindow(new TreeSampler(process.pid), 10, () => false);
  await new Promise((r) => setTimeout(r, 50));
  t.equal(win.finish().rssHeldPeakMb, null);
});
