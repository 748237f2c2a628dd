// A real Redis Cluster on this machine (the installed redis-server and redis-cli), for the tests
// and drills of the gateway's cluster mode: nodes are child processes a test may kill -9 and
// start again, and waitHealthy() says when the cluster has settled after it. The node timeout
// is short (1 s) so that a failover takes seconds, and a replica's data is never too old to fail
// over (validity factor 0): a drill's failover must happen, however long the master was gone.

import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';

export interface RedisClusterNode {
  host: string;
  port: number;
  /** As of the last waitHealthy() (a killed node keeps the role it had). */
  role: 'master' | 'replica';
  /** Of the current process: restart() changes it. */
  pid: number;
}

export interface RedisCluster {
  /** Every node, masters first (in the order of the start: roles change, the order does not). */
  nodes: RedisClusterNode[];
  /** A comma-separated seed list: what REDIS_CLUSTER_NODES would be set to. */
  seeds: string;
  /** kill -9 one node (by port); resolves when the process is gone. */
  kill(port: number): Promise<void>;
  /** Start a killed node again with its own nodes.conf (it rejoins, as a replica if it was failed over). */
  restart(port: number): Promise<void>;
  /**
   * Resolves when `CLUSTER INFO` on every live node says cluster_state:ok, every slot is served
   * by a live master, every live node sees the same slot map and every live replica's link to its
   * master is up; rejects after timeoutMs, saying what was still wrong.
   */
  waitHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /** Where the nodes' folders go (kept at stop); a temporary folder (removed at stop) by default. */
  dir?: string;
  nodeTimeoutMs?: number;
  bind?: string;
}

const SLOTS = 16384;
/** Redis Cluster's bus listens on the client port plus this. */
const BUS_OFFSET = 10_000;

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether redis-server and redis-cli can be run here. */
export function clusterAvailable(): boolean {
  return ['redis-server', 'redis-cli'].every((cmd) => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status === 0);
}

interface Member {
  node: RedisClusterNode;
  dir: string;
  args: string[];
  proc?: ChildProcess;
}

export async function startRedisCluster(opts: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = opts.masters ?? 3;
  const replicas = opts.replicasPerMaster ?? 0;
  // redis-cli refuses fewer, after the nodes would have been started for nothing.
  if (masters < 3) throw new Error(`a Redis Cluster needs at least 3 masters, not ${masters}`);
  const bind = (opts.bind ?? '127.0.0.1').split(/\s+/);
  // A node bound to every address is reached, and announced, through the loopback one.
  const host = ['0.0.0.0', '::', '*'].includes(bind[0]) ? '127.0.0.1' : bind[0];
  const root = opts.dir ?? mkdtempSync(path.join(tmpdir(), 'airouter-redis-cluster-'));
  if (!opts.dir) scratch.add(root);
  const ports = await clusterPorts(masters * (1 + replicas), host);
  const members: Member[] = ports.map((port) => {
    const dir = path.join(root, String(port));
    mkdirSync(dir, { recursive: true });
    return {
      node: { host, port, role: 'master', pid: 0 },
      dir,
      args: nodeArgs(port, dir, bind, opts.nodeTimeoutMs ?? 1000),
    };
  });
  const byPort = (port: number) => {
    const m = members.find((x) => x.node.port === port);
    if (!m) throw new Error(`no node of this cluster on port ${port}`);
    return m;
  };

  const cluster: RedisCluster = {
    nodes: members.map((m) => m.node),
    seeds: members.map((m) => `${host}:${m.node.port}`).join(','),
    async kill(port) {
      await killMember(byPort(port));
    },
    async restart(port) {
      const m = byPort(port);
      if (alive(m)) throw new Error(`node ${port} is running`);
      await launch(m);
    },
    waitHealthy: (timeoutMs = 20_000) => waitHealthy(members, timeoutMs),
    async stop() {
      await Promise.all(members.map(killMember));
      if (opts.dir) return;
      rmSync(root, { recursive: true, force: true });
      scratch.delete(root);
    },
  };

  try {
    await Promise.all(members.map(launch));
    await create(members, replicas);
    await cluster.waitHealthy();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  // redis-cli picks the masters itself: the list is put in the promised order once.
  const rank = (n: RedisClusterNode) => (n.role === 'master' ? 0 : 1);
  cluster.nodes.sort((a, b) => rank(a) - rank(b) || a.port - b.port);
  return cluster;
}

function nodeArgs(port: number, dir: string, bind: string[], nodeTimeoutMs: number): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    ...bind,
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(nodeTimeoutMs),
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--protected-mode',
    'no',
    '--cluster-replica-validity-factor',
    '0',
    // A master waits 5 s by default before it streams a replica its first copy (for more
    // replicas to share it): 5 s of every start and of every rejoin after a restart.
    '--repl-diskless-sync-delay',
    '0',
  ];
}

/**
 * `count` ports that are free, with their bus ports (port + 10000) free too, all below the
 * kernel's ephemeral range: a port from that range (what binding port 0 gives) can become the
 * local end of an outgoing connection before the node binds it (see bench/lib/http.ts).
 */
async function clusterPorts(count: number, host: string): Promise<number[]> {
  let low = 32768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // not Linux: Linux's default
  }
  const from = Math.max(1024, low - BUS_OFFSET - 12_000);
  const to = low - BUS_OFFSET;
  if (to <= from) throw new Error(`no room for cluster ports below the ephemeral range (from ${low})`);
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; ports.length < count; i++) {
    if (i > 200) throw new Error(`no ${count} free port pairs between ${from} and ${to + BUS_OFFSET}`);
    const port = from + Math.floor(Math.random() * (to - from));
    if (taken.has(port) || taken.has(port + BUS_OFFSET)) continue;
    if (!(await canListen(port, host)) || !(await canListen(port + BUS_OFFSET, host))) continue;
    ports.push(port);
    taken.add(port).add(port + BUS_OFFSET);
  }
  return ports;
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

// Where the kernel can (Linux, util-linux's setpriv), a node is killed when the process that
// started it dies, however it dies: tap ends a test that runs out of time with SIGALRM and then
// SIGKILL, and neither runs an 'exit' handler.
const SETPRIV = spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' }).status === 0;

// What stop() was not reached for when this process exits (a test that threw, one that forgot):
// nodes, killed, and temporary folders, removed.
const running = new Set<ChildProcess>();
const scratch = new Set<string>();
let exitHook = false;

function cleanUpOnExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const p of running) p.kill('SIGKILL');
    for (const dir of scratch) {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // A node not yet dead may still write into it: /tmp keeps it.
      }
    }
  });
}

function track(proc: ChildProcess): void {
  cleanUpOnExit();
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
}

/** Starts the node's process and resolves once it answers. */
async function launch(m: Member): Promise<void> {
  const [cmd, args] = SETPRIV
    ? ['setpriv', ['--pdeathsig', 'KILL', '--', 'redis-server', ...m.args]]
    : ['redis-server', m.args];
  const log = openSync(logPath(m), 'a');
  try {
    m.proc = spawn(cmd, args, { stdio: ['ignore', log, log] });
  } finally {
    closeSync(log);
  }
  // A failed spawn is reported on the child as an event, and that event unheard would be thrown.
  m.proc.on('error', () => {});
  if (m.proc.pid === undefined) throw new Error(`${cmd} could not be started`);
  m.node.pid = m.proc.pid;
  track(m.proc);
  await answers(m);
}

async function answers(m: Member): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!alive(m)) throw new Error(`redis-server on ${m.node.port} exited: ${logTail(m)}`);
    try {
      await ask(m.node, (c) => c.ping());
      return;
    } catch {
      if (Date.now() > deadline)
        throw new Error(`redis-server on ${m.node.port} did not answer within 10 s: ${logTail(m)}`);
      await sleep(25);
    }
  }
}

const alive = (m: Member) => !!m.proc && m.proc.exitCode === null && m.proc.signalCode === null;

async function killMember(m: Member): Promise<void> {
  const p = m.proc;
  if (!p || !alive(m)) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGKILL');
  await exited;
}

const logPath = (m: Member) => path.join(m.dir, 'redis.log');

function logTail(m: Member): string {
  try {
    return readFileSync(logPath(m), 'utf8').slice(-2000);
  } catch {
    return '(no log)';
  }
}

async function create(members: Member[], replicas: number): Promise<void> {
  const addrs = members.map((m) => `${m.node.host}:${m.node.port}`);
  try {
    await run('redis-cli', ['--cluster', 'create', ...addrs, '--cluster-replicas', String(replicas), '--cluster-yes'], {
      timeout: 60_000,
    });
  } catch (err) {
    const e = err as { message: string; stdout?: string; stderr?: string };
    throw new Error(`redis-cli --cluster create failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** A command on a connection of its own, which fails at once rather than retrying. */
async function ask<T>(node: RedisClusterNode, fn: (c: Redis) => Promise<T>): Promise<T> {
  const c = new Redis(node.port, node.host, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    connectTimeout: 1000,
    commandTimeout: 1000,
  });
  c.on('error', () => {});
  try {
    await c.connect();
    return await fn(c);
  } finally {
    c.disconnect();
  }
}

async function waitHealthy(members: Member[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let why: string;
    try {
      why = await unhealthy(members);
    } catch (err) {
      why = (err as Error).message;
    }
    if (!why) return;
    if (Date.now() > deadline) throw new Error(`the cluster was not healthy within ${timeoutMs} ms: ${why}`);
    await sleep(100);
  }
}

interface NodeView {
  info: string;
  replication: string;
  /** CLUSTER SLOTS: [start, end, master, ...replicas], each node [host, port, id, ...]. */
  slots: [number, number, ...[string, number, string, unknown[]][]][];
}

/** What is wrong with the cluster, or '' when nothing is; live nodes' roles are updated. */
async function unhealthy(members: Member[]): Promise<string> {
  const live = members.filter(alive);
  const views = await Promise.all(
    live.map((m) =>
      ask(m.node, async (c): Promise<NodeView> => ({
        info: await c.cluster('INFO'),
        replication: await c.info('replication'),
        slots: await c.cluster('SLOTS'),
      })),
    ),
  );
  const livePorts = new Set(live.map((m) => m.node.port));
  let agreed: string | undefined;
  for (const [i, v] of views.entries()) {
    const { node } = live[i];
    node.role = /^role:slave/m.test(v.replication) ? 'replica' : 'master';
    if (!/^cluster_state:ok/m.test(v.info)) return `${node.port} says cluster_state:fail`;
    const served = v.slots.reduce((n, [start, end]) => n + end - start + 1, 0);
    if (served !== SLOTS) return `${node.port} sees ${served} of ${SLOTS} slots served`;
    const dead = v.slots.find(([, , [, port]]) => !livePorts.has(port));
    if (dead) return `${node.port} sees slots ${dead[0]}-${dead[1]} on ${dead[2][1]}, which is down`;
    const map = v.slots
      .map(([start, end, [, port]]) => `${start}-${end}@${port}`)
      .sort()
      .join(' ');
    if (agreed !== undefined && map !== agreed)
      return `the nodes' slot maps differ (${live[0].node.port}: ${agreed}; ${node.port}: ${map})`;
    agreed = map;
    if (node.role === 'replica' && !/^master_link_status:up/m.test(v.replication))
      return `replica ${node.port} is not linked to its master yet`;
  }
  return '';
}

/** Deletes every key under `prefix` on every master of a cluster (its seeds, as `host:port`). */
export async function dropClusterPrefix(seeds: readonly string[], prefix: string): Promise<void> {
  const cluster = new Cluster(
    seeds.map((s) => ({ host: s.slice(0, s.lastIndexOf(':')), port: Number(s.slice(s.lastIndexOf(':') + 1)) })),
  );
  cluster.on('error', () => {});
  try {
    await dropPrefixOn(await ready(cluster), prefix);
  } finally {
    cluster.disconnect();
  }
}

/** Deletes every key under `prefix` on these servers, a key at a time (a cluster's keys of one node may be in many slots). */
export async function dropPrefixOn(nodes: readonly Redis[], prefix: string): Promise<void> {
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const k of keys) await node.del(k);
    } while (cursor !== '0');
  }
}

async function ready(cluster: Cluster) {
  await new Promise<void>((resolve, reject) => {
    cluster.once('ready', resolve);
    cluster.once('end', () => reject(new Error('the cluster connection ended')));
  });
  return cluster.nodes('master');
}
