// The crash drills: each runs a load against a rig, breaks something under it, repairs it, and
// reports what was answered, what was recorded and how long the gateway took to recover.

import { OPERATOR } from '../helpers/http.js';
import { DrillRig, sleep, type DrillResult, type Outcome } from './rig.js';

const CLIENTS = 32;
const WARM_MS = 1500;

export interface DrillExtras {
  /** Observations made while the fault was on. */
  during: Record<string, unknown>;
  outcomes: Outcome[];
}

async function run(
  rig: DrillRig,
  name: string,
  fault: () => Promise<Record<string, unknown>>,
  afterMs = 2500,
  partialBilled = false,
): Promise<DrillResult & DrillExtras> {
  const load = rig.load(CLIENTS, name.replace(/\W+/g, '-'));
  await sleep(WARM_MS);
  const during = await fault();
  const faultEnd = Date.now();
  await sleep(afterMs);
  // A loaded machine may take longer than afterMs to serve again: that is measured, not cut off.
  for (const deadline = Date.now() + 20_000; load.recoveredAfter(faultEnd) === null && Date.now() < deadline;)
    await sleep(100);
  const outcomes = await load.stop();
  return { ...(await rig.verify(name, outcomes, faultEnd, load, { partialBilled })), during, outcomes };
}

/** kill -9 of one worker: the primary starts another, the other worker keeps serving. */
export function workerKill(rig: DrillRig) {
  return run(
    rig,
    'kill -9 a worker',
    async () => {
      const [pid] = rig.workerPids();
      process.kill(pid, 'SIGKILL');
      return { killed: pid };
    },
    3000,
  );
}

/** kill -9 of the primary: the workers finish what they hold and stop; an operator restarts. */
export function primaryKill(rig: DrillRig) {
  return run(rig, 'kill -9 the primary, restart', async () => {
    const port = rig.gateway.port;
    rig.gateway.proc.kill('SIGKILL');
    await rig.gateway.exited;
    await rig.startGateway(port);
    return { port };
  });
}

/** Redis killed (no final fsync) and started again from its append-only file. */
export function redisRestart(rig: DrillRig) {
  return run(rig, 'Redis kill -9 + restart (AOF)', async () => {
    await rig.redis.stop('kill');
    await sleep(1000);
    await rig.redis.start();
    return {};
  });
}

/** FLUSHALL under load: every hot account, hold and queued record is gone at once. */
export function redisFlush(rig: DrillRig) {
  return run(rig, 'Redis FLUSHALL', async () => {
    const c = rig.redis.client();
    await c.flushall();
    return {};
  });
}

/** Postgres out of reach for `ms`: answers go on from the hot store, records wait in the outbox. */
export function postgresCut(rig: DrillRig, ms = 20_000) {
  return run(
    rig,
    `Postgres cut ${ms / 1000} s`,
    async () => {
      const cutAt = Date.now();
      rig.pgProxy.cut('reset');
      await sleep(Math.min(2000, ms / 2));
      const readyz = await fetch(`${rig.gateway.url}/readyz`, { headers: OPERATOR });
      const ready = { status: readyz.status, body: await readyz.json() };
      await sleep(ms - (Date.now() - cutAt));
      rig.pgProxy.restore();
      return { readyz: ready, cutAt };
    },
    4000,
  );
}

/**
 * Redis out of reach for `ms`: requests get 503 quickly, nothing is served unbilled. `probe`, if
 * given, runs half a second into the cut, beside the load; what it answers is `during.probe`.
 */
export function redisCut<P>(rig: DrillRig, ms = 3000, probe?: () => Promise<P>) {
  return run(
    rig,
    `Redis cut ${ms / 1000} s`,
    async () => {
      const cutAt = Date.now();
      rig.redisProxy.cut('reset');
      const probed = probe ? sleep(500).then(probe) : Promise.resolve(undefined);
      await sleep(ms);
      const answer = await probed;
      rig.redisProxy.restore();
      return { cutAt, restoredAt: Date.now(), probe: answer };
    },
    2500,
    true,
  );
}
