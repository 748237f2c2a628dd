// A TCP proxy the tests control, to take a link between the gateway and a store down and bring
// it back, as a network partition or a restarting server would.

import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections currently open through the proxy. */
  readonly open: number;
  /**
   * Takes the link down: `reset` closes every connection and refuses new ones (a server that
   * went away); `blackhole` keeps connections open but moves no bytes (a silent partition).
   */
  cut(mode?: 'reset' | 'blackhole'): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(
  target: { host: string; port: number },
  listen: { host?: string } = {},
): Promise<TcpProxy> {
  let mode: 'up' | 'reset' | 'blackhole' = 'up';
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const held: net.Socket[] = [];

  const link = (client: net.Socket) => {
    const upstream = net.connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const server = net.createServer((client) => {
    if (mode === 'reset') {
      client.resetAndDestroy();
      return;
    }
    if (mode === 'blackhole') {
      client.on('error', () => {});
      held.push(client);
      return;
    }
    link(client);
  });
  await new Promise<void>((resolve) => server.listen(0, listen.host ?? '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    get open() {
      return pairs.size;
    },
    cut(how = 'reset') {
      mode = how;
      for (const { client, upstream } of [...pairs]) {
        if (how === 'reset') {
          client.resetAndDestroy();
          upstream.destroy();
        } else {
          client.pause();
          upstream.pause();
        }
      }
    },
    restore() {
      const was = mode;
      mode = 'up';
      if (was === 'blackhole') {
        for (const { client, upstream } of pairs) {
          client.resume();
          upstream.resume();
        }
      }
      // Connections that arrived while the link was silent now get through.
      for (const c of held.splice(0)) if (!c.destroyed) link(c);
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      for (const c of held) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
