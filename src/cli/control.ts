// The control socket: how the command line reaches a running gateway. The process that owns
// the stores (a single gateway, or a cluster's primary) listens on DATA_DIR/airouter.sock and
// runs each command itself (./commands.ts). That is the only way to reach an embedded store
// while it serves (PGlite and the in-process hot store belong to that process), and it spares a
// command on real stores the connections it would open: a command is one round trip.
//
// A Unix socket, mode 0600: whoever may use it may already read the data directory, which is
// the authority the command line has always had. Lines of JSON: the command's argv in, then its
// output lines and one last line with the outcome.

import { createHash } from 'node:crypto';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';

export const socketPath = (dataDir: string) => path.join(dataDir, 'airouter.sock');

/** sun_path is 108 bytes on Linux; a longer path cannot be bound. */
const MAX_SOCKET_PATH = 100;
const MAX_REQUEST_BYTES = 64 * 1024;
/** A client that connects and sends no command is let go: it must not hold a gateway's stop. */
const REQUEST_WAIT_MS = 10_000;
const CLOSE_WAIT_MS = 5_000;

type Reply = { line: string } | { ok: true } | { error: string } | { otherStores: true };

/**
 * Which stores a process uses, as a digest: a command sent with other stores than the gateway's
 * (another DATABASE_URL beside the same DATA_DIR) must not run on the gateway's.
 */
export function storesOf(config: {
  DATABASE_URL?: string;
  REDIS_URL?: string;
  REDIS_CLUSTER_NODES?: string[];
  REDIS_PREFIX?: string;
  dataDir: string;
}): string {
  const redis = config.REDIS_CLUSTER_NODES?.join(',') ?? config.REDIS_URL;
  const hot = redis ? `${redis}\n${config.REDIS_PREFIX ?? ''}` : 'memory';
  const what = `${config.DATABASE_URL ?? `embedded:${config.dataDir}`}\n${hot}`;
  return createHash('sha256').update(what).digest('hex');
}

/** Runs one command's argv; throws with the one-line message the command line prints. */
export type Runner = (argv: string[], out: (line: string) => void) => Promise<void>;

function answered(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection(path);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/**
 * Listens for commands. Returns null (and says why) when it cannot: a path too long, or another
 * live gateway already answering on this data directory.
 */
export async function serveControl(
  dataDir: string,
  stores: string,
  run: Runner,
  warn: (msg: string) => void,
): Promise<{ close(): Promise<void> } | null> {
  const file = socketPath(dataDir);
  if (file.length > MAX_SOCKET_PATH) {
    warn(
      `control socket not opened: ${file} is longer than a Unix socket path may be; the command line will open the stores itself`,
    );
    return null;
  }
  mkdirSync(dataDir, { recursive: true });
  if (await answered(file)) {
    warn(`control socket not opened: another gateway answers on ${file}`);
    return null;
  }
  // Left by a gateway that did not stop cleanly.
  rmSync(file, { force: true });
  const server: Server = createServer((socket) => handle(socket, stores, run));
  // The socket is created by bind(): a umask of 077 makes it private from its first instant.
  const umask = process.umask(0o077);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(file, () => resolve());
    });
  } finally {
    process.umask(umask);
  }
  chmodSync(file, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        // Connections in progress finish their command (a stop waits for them a few seconds at
        // most); the file goes now, so no new one comes.
        const bound = setTimeout(resolve, CLOSE_WAIT_MS);
        bound.unref();
        server.close(() => {
          clearTimeout(bound);
          resolve();
        });
        rmSync(file, { force: true });
      }),
  };
}

function handle(socket: Socket, stores: string, run: Runner): void {
  let buffered = '';
  let started = false;
  socket.setEncoding('utf8');
  socket.on('error', () => socket.destroy());
  socket.setTimeout(REQUEST_WAIT_MS, () => {
    if (!started) socket.destroy();
  });
  const send = (r: Reply) => {
    if (!socket.destroyed) socket.write(JSON.stringify(r) + '\n');
  };
  socket.on('data', (chunk: string) => {
    if (started) return;
    buffered += chunk;
    if (buffered.length > MAX_REQUEST_BYTES) return socket.destroy();
    const nl = buffered.indexOf('\n');
    if (nl < 0) return;
    started = true;
    let argv: unknown;
    let theirs: unknown;
    try {
      ({ argv, stores: theirs } = JSON.parse(buffered.slice(0, nl)));
    } catch {
      argv = undefined;
    }
    if (theirs !== stores) {
      send({ otherStores: true });
      socket.end();
      return;
    }
    if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) {
      send({ error: 'malformed control request' });
      socket.end();
      return;
    }
    run(argv, (line) => send({ line }))
      .then(
        () => send({ ok: true }),
        (err: unknown) => send({ error: (err as Error)?.message ?? String(err) }),
      )
      .finally(() => socket.end());
  });
}

export class RemoteCommandError extends Error {}

/**
 * Runs argv in the gateway that answers on the data directory's socket. False when none does
 * (no gateway, one that has gone, or one on other stores), so that the caller opens the stores
 * itself.
 */
export function runInGateway(
  dataDir: string,
  stores: string,
  argv: string[],
  out: (line: string) => void,
): Promise<boolean> {
  const file = socketPath(dataDir);
  return new Promise((resolve, reject) => {
    const c = createConnection(file);
    let connected = false;
    let buffered = '';
    let outcome: Reply | undefined;
    c.setEncoding('utf8');
    c.once('connect', () => {
      connected = true;
      c.write(JSON.stringify({ argv, stores }) + '\n');
    });
    c.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const r = JSON.parse(buffered.slice(0, nl)) as Reply;
        buffered = buffered.slice(nl + 1);
        if ('line' in r) out(r.line);
        else outcome = r;
      }
    });
    c.on('error', (err) => {
      if (!connected) resolve(false);
      else reject(new RemoteCommandError(`the gateway's control socket failed: ${err.message}`));
    });
    c.on('close', () => {
      if (!connected) return;
      if (outcome && 'otherStores' in outcome) resolve(false);
      else if (!outcome)
        reject(new RemoteCommandError('the gateway closed the control socket before the command finished'));
      else if ('error' in outcome) reject(new RemoteCommandError(outcome.error));
      else resolve(true);
    });
  });
}
