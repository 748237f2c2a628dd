// A client that reads a streamed answer slowly, on a raw socket: it sends the request, holds
// its receive side closed for a while (socket paused, so the kernel window fills), then reads
// at a capped rate. With end-to-end backpressure the gateway stops pulling from the upstream
// while it waits, and holds no more than a few chunks for this client.

import net from 'node:net';

export interface SlowReadResult {
  status: number | null;
  bytes: number;
  complete: boolean;
  wallS: number;
  error?: string;
}

export interface SlowReadProgress {
  bytes: number;
}

export function slowRead(opts: {
  url: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Read nothing at all for this long after sending. */
  holdMs: number;
  /** Then read at most this many bytes per second. */
  bytesPerSecond: number;
  timeoutMs: number;
  progress?: SlowReadProgress;
}): Promise<SlowReadResult> {
  const u = new URL(opts.url);
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port) });
    let head = '';
    let status: number | null = null;
    let bytes = 0;
    let readingFrom = 0;
    let tail = '';
    let finished = false;
    let sawDone = false;
    const finish = (complete: boolean, error?: string) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, bytes, complete, wallS: Math.round((performance.now() - started) / 10) / 100, error });
    };
    const timer = setTimeout(
      () => finish(false, `timed out after ${opts.timeoutMs} ms with ${bytes} bytes read`),
      opts.timeoutMs,
    );
    socket.on('connect', () => {
      const body = Buffer.from(opts.body);
      const lines = [
        `POST ${opts.path} HTTP/1.1`,
        `host: ${u.host}`,
        'content-type: application/json',
        `content-length: ${body.length}`,
        'connection: close',
      ];
      for (const [k, v] of Object.entries(opts.headers)) lines.push(`${k}: ${v}`);
      socket.write(lines.join('\r\n') + '\r\n\r\n');
      socket.write(body);
      socket.pause();
      setTimeout(() => {
        readingFrom = performance.now();
        socket.resume();
      }, opts.holdMs);
    });
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (opts.progress) opts.progress.bytes += chunk.length;
      if (status === null) {
        head += chunk.toString('latin1');
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
        if (m) status = Number(m[1]);
        else if (head.length > 4096) return finish(false, 'no status line');
      }
      // The end of the answer: the OpenAI terminator, or the chunked-encoding end after it.
      // Waiting for the chunked terminator too, so the gateway sees a whole answer, not an abort.
      tail = (tail + chunk.toString('latin1')).slice(-64);
      if (tail.includes('[DONE]')) sawDone = true;
      if (sawDone && tail.endsWith('\r\n0\r\n\r\n')) return finish(status === 200);
      // Rate cap: if ahead of the allowance, stop reading until the allowance catches up.
      const allowed = ((performance.now() - readingFrom) / 1000) * opts.bytesPerSecond;
      if (bytes > allowed) {
        socket.pause();
        setTimeout(() => socket.resume(), Math.min(1000, ((bytes - allowed) / opts.bytesPerSecond) * 1000));
      }
    });
    socket.on('error', (err) => finish(false, err.message));
    socket.on('close', () =>
      finish(
        status === 200 && sawDone,
        sawDone ? undefined : `connection closed before the end of the answer (status ${status}, ${bytes} bytes)`,
      ),
    );
  });
}
