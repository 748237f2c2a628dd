// What a WebSocket client sent, recorded on the way to the gateway: a TCP proxy that keeps the
// client's bytes of each connection, and a reader of RFC 6455 frames (client frames are masked;
// the gateway negotiates no compression, so payloads are plain). For `npm run test:clients
// -- --keep`, whose Codex WebSocket runs it keeps as their requests (test/fixtures/clients/).

import net from 'node:net';

export interface RecordedSocket {
  /** The upgrade request: its path and headers (names in lower case). */
  upgrade: { path: string; headers: Record<string, string> };
  /** Every text message the client sent, parsed as JSON where it is JSON. */
  messages: unknown[];
}

/** The upgrade head and the text messages in `bytes`, a client's side of one connection. */
export function readClientSide(bytes: Buffer): RecordedSocket | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const [requestLine, ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const at = l.indexOf(':');
    if (at > 0) headers[l.slice(0, at).trim().toLowerCase()] = l.slice(at + 1).trim();
  }
  const messages: unknown[] = [];
  let i = headEnd + 4;
  let parts: Buffer[] = [];
  let textMessage = false;
  while (i + 2 <= bytes.length) {
    const fin = (bytes[i]! & 0x80) !== 0;
    const opcode = bytes[i]! & 0x0f;
    const masked = (bytes[i + 1]! & 0x80) !== 0;
    let len = bytes[i + 1]! & 0x7f;
    let at = i + 2;
    if (len === 126) {
      len = bytes.readUInt16BE(at);
      at += 2;
    } else if (len === 127) {
      len = Number(bytes.readBigUInt64BE(at));
      at += 8;
    }
    const mask = masked ? bytes.subarray(at, at + 4) : undefined;
    if (masked) at += 4;
    if (at + len > bytes.length) break;
    const payload = Buffer.from(bytes.subarray(at, at + len));
    if (mask) for (let k = 0; k < payload.length; k++) payload[k]! ^= mask[k % 4]!;
    i = at + len;
    if (opcode === 1 || opcode === 2) {
      textMessage = opcode === 1;
      parts = [payload];
    } else if (opcode === 0) parts.push(payload);
    else continue; // close, ping, pong
    if (fin && textMessage) {
      const text = Buffer.concat(parts).toString('utf8');
      try {
        messages.push(JSON.parse(text));
      } catch {
        messages.push(text);
      }
    }
  }
  return { upgrade: { path: requestLine!.split(' ')[1] ?? '', headers }, messages };
}

/** A proxy to `port` on loopback that keeps what clients send; `sockets()` reads it back. */
export async function startWsRecorder(
  port: number,
): Promise<{ port: number; sockets(): RecordedSocket[]; close(): Promise<void> }> {
  const sent: Buffer[][] = [];
  const server = net.createServer((client) => {
    const chunks: Buffer[] = [];
    sent.push(chunks);
    const upstream = net.connect(port, '127.0.0.1');
    client.on('data', (d: Buffer) => chunks.push(d));
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    sockets: () =>
      sent
        .map((c) => readClientSide(Buffer.concat(c)))
        .filter((s): s is RecordedSocket => s !== undefined && s.upgrade.headers.upgrade !== undefined),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
