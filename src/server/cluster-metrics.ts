// With WORKERS > 1 each process has its own counters, and a scrape lands on whichever worker
// the kernel picks. The worker that gets GET /metrics asks the primary, which gathers every
// worker's registry (prom-client's AggregatorRegistry) and answers with the sum.

import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type Registry } from 'prom-client';

const REQUEST = 'airouter:metrics-request';
const REPLY = 'airouter:metrics-reply';

interface Reply {
  type: typeof REPLY;
  id: string;
  text?: string;
}

/**
 * In the primary: answer workers' requests with the merged metrics of all workers, followed by
 * the primary's own (`own`: metrics no worker has, such as the outbox writer's).
 */
export function serveClusterMetrics(own: Registry): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, msg: { type?: string; id?: string }) => {
    if (msg?.type !== REQUEST || !msg.id) return;
    Promise.all([aggregator.clusterMetrics(), own.metrics()]).then(
      ([workers, primary]) => worker.send({ type: REPLY, id: msg.id, text: `${workers.trimEnd()}\n${primary}` }),
      () => worker.send({ type: REPLY, id: msg.id }),
    );
  });
}

/** In a worker: let the primary's aggregator collect this registry. */
export function exposeToCluster(registry: Registry): void {
  if (!cluster.isWorker) return;
  AggregatorRegistry.setRegistries([registry]);
  // prom-client starts answering the primary's requests only once an aggregator exists here.
  new AggregatorRegistry();
}

/** The gateway's metrics text: merged over all workers when clustered, this process's otherwise. */
export function gatewayMetrics(registry: Registry, timeoutMs = 3000): Promise<string> {
  if (!cluster.isWorker || !process.send) return registry.metrics();
  const id = randomUUID();
  return new Promise((resolve) => {
    const done = (text?: string) => {
      clearTimeout(timer);
      process.off('message', onMessage);
      // A primary that cannot answer still leaves this worker's own figures.
      if (text === undefined) registry.metrics().then(resolve, () => resolve(''));
      else resolve(text);
    };
    const onMessage = (msg: Reply) => {
      if (msg?.type === REPLY && msg.id === id) done(msg.text);
    };
    const timer = setTimeout(() => done(), timeoutMs);
    process.on('message', onMessage);
    process.send!({ type: REQUEST, id });
  });
}
