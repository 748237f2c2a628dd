// Connections to Redis: one server (a URL) or a Redis Cluster (its seed nodes). The hot store
// talks to either through ioredis's common surface; what differs (which node serves a slot,
// every master for a SCAN) is answered here.

import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis';

export type RedisClient = Redis | Cluster;

/** A single server's URL, or a cluster's seed nodes (`host:port`, or `redis://[:password@]host:port`). */
export type RedisTarget = string | readonly string[];

export const isCluster = (target: RedisTarget): target is readonly string[] => typeof target !== 'string';

/** `host:port` or a redis:// URL, as ioredis's node and the password it carries. */
export function parseNode(seed: string): { node: ClusterNode & { host: string; port: number }; password?: string } {
  const text = /^rediss?:\/\//.test(seed) ? seed : `redis://${seed}`;
  const u = new URL(text);
  if (!u.hostname || !u.port) throw new Error(`a cluster node is host:port, got ${JSON.stringify(seed)}`);
  return {
    node: { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) },
    password: u.password ? decodeURIComponent(u.password) : undefined,
  };
}

/** Host and port of what is connected to: never a password. */
export function describeTarget(target: RedisTarget): string {
  if (isCluster(target))
    return `the Redis Cluster at ${target.map((s) => `${parseNode(s).node.host}:${parseNode(s).node.port}`).join(',')}`;
  const u = new URL(target);
  return `Redis at ${u.host}${u.pathname === '/' ? '' : u.pathname}`;
}

export function connectRedis(target: RedisTarget, options: RedisOptions): RedisClient {
  if (!isCluster(target)) return new Redis(target, options);
  const nodes = target.map(parseNode);
  const password = nodes.find((n) => n.password)?.password;
  return new Cluster(
    nodes.map((n) => n.node),
    {
      redisOptions: { ...options, password },
      // Commands wait while the slots are learnt or refreshed (a start, a failover); one sent to
      // a node that does not answer fails after commandTimeout like any other. Start-up waits
      // for the cluster to be ready, bounded (whenReady), instead of queueing its first command.
      enableOfflineQueue: true,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      maxRedirections: 16,
      slotsRefreshTimeout: options.connectTimeout ?? 2000,
      clusterRetryStrategy: (times: number) => Math.min(100 * times, 1000),
      scaleReads: 'master',
      enableAutoPipelining: false,
    },
  );
}

/**
 * Resolves once the client is connected (a cluster: its slots known), or rejects after
 * `timeoutMs` with a timed-out error naming why it is not (the last connection error).
 */
export function whenReady(client: RedisClient, timeoutMs: number, lastError: () => Error | undefined): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      client.off('ready', ready);
      if (err) reject(err);
      else resolve();
    };
    const ready = () => done();
    const timer = setTimeout(
      () => done(new Error(`timed out connecting${lastError() ? `: ${lastError()!.message}` : ''}`)),
      timeoutMs,
    );
    client.once('ready', ready);
  });
}

/** Every server whose data counts: the masters of a cluster, or the one server. */
export function masters(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/** The master serving a slot (the one server when not clustered). */
export function masterOf(client: RedisClient, slot: number): Redis | undefined {
  if (!(client instanceof Cluster)) return client;
  const key = (client as unknown as { slots: string[][] }).slots[slot]?.[0];
  return client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === key);
}
