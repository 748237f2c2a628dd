import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'airouter_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'airouter_http_request_duration_seconds',
    help: 'Time to the end of the response, by route and status',
    labelNames: ['route', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });
  readonly sockets = new Gauge({
    name: 'airouter_websockets_open',
    help: "WebSocket connections open (the Responses API's WebSocket mode)",
    registers: [this.registry],
  });
  readonly socketsOpened = new Counter({
    name: 'airouter_websockets_opened_total',
    help: 'WebSocket connections accepted',
    registers: [this.registry],
  });
  readonly activeStreams = new Gauge({
    name: 'airouter_active_streams',
    help: 'Streaming responses in progress',
    registers: [this.registry],
  });
  readonly reservationRefusals = new Counter({
    name: 'airouter_reservation_refusals_total',
    help: 'Requests refused for insufficient balance',
    registers: [this.registry],
  });
  readonly upstream = new Counter({
    name: 'airouter_upstream_attempts_total',
    help: 'Upstream attempts by route and outcome',
    labelNames: ['route', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly backpressure = new Counter({
    name: 'airouter_stream_backpressure_total',
    help: 'Times a client socket was full and the upstream was paused',
    registers: [this.registry],
  });
  readonly maxBuffered = new Gauge({
    name: 'airouter_stream_buffered_bytes_max',
    help: 'Most bytes written to a full client socket while its upstream was paused',
    registers: [this.registry],
  });

  readonly overruns = new Counter({
    name: 'airouter_billing_overruns_total',
    help: 'Requests whose actual cost went past their reservation (charged in full all the same)',
    registers: [this.registry],
  });
  readonly settleRetries = new Gauge({
    name: 'airouter_settle_retry_queue',
    help: 'Charges of delivered answers waiting for the hot store to come back',
    registers: [this.registry],
  });
  readonly leaseDraws = new Counter({
    name: 'airouter_lease_draws_total',
    help: "Requests whose hold was drawn from their process's lease, without a store call",
    registers: [this.registry],
  });
  readonly leaseCalls = new Counter({
    name: 'airouter_lease_store_calls_total',
    help: 'Store calls that opened, renewed and topped up, or closed a lease',
    labelNames: ['mode'] as const,
    registers: [this.registry],
  });

  /** For the ledger's leases (billing's LeaseObserver). */
  get leaseObserver(): { drawn(): void; called(mode: 'open' | 'extend' | 'close'): void } {
    return { drawn: () => this.leaseDraws.inc(), called: (mode) => this.leaseCalls.inc({ mode }) };
  }

  private maxBufferedSeen = 0;

  constructor() {
    // The event-loop lag histogram samples with a timer: prom-client's 10 ms woke every idle
    // worker 100 times a second, which cost an idle gateway about 0.6 % of a core on a 2-core
    // VM (measured). Every 100 ms still gives a scrape interval's worth of lag samples.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
  }

  noteBuffered(bytes: number) {
    if (bytes > this.maxBufferedSeen) {
      this.maxBufferedSeen = bytes;
      this.maxBuffered.set(bytes);
    }
  }

  observe(route: string, status: number, seconds: number) {
    const s = String(status);
    this.requests.inc({ route, status: s });
    this.latency.observe({ route, status: s }, seconds);
  }
}

/**
 * The outbox writer's figures, in the registry of the process that runs the writer: a worker of
 * its own when there is one process, the primary when there are several (workers would each
 * report the same outbox length, and a scrape sums them).
 */
export class OutboxMetrics {
  readonly committed: Counter;
  readonly failures: Counter;

  constructor(registry: Registry, outboxLength: () => Promise<number>) {
    this.committed = new Counter({
      name: 'airouter_outbox_committed_total',
      help: 'Usage records written from the outbox to Postgres',
      registers: [registry],
    });
    this.failures = new Counter({
      name: 'airouter_outbox_write_failures_total',
      help: 'Failed attempts to write usage records to Postgres (retried)',
      registers: [registry],
    });
    const length: Gauge = new Gauge({
      name: 'airouter_outbox_length',
      help: 'Usage records waiting in the outbox for Postgres',
      registers: [registry],
      // Read from the store at scrape time; a store that is down leaves the last value.
      collect: async () => {
        const n = await outboxLength().catch(() => undefined);
        if (n !== undefined) length.set(n);
      },
    });
  }

  /** For the writer (billing's WriterObserver). */
  get observer(): { committed(n: number): void; failed(): void } {
    return { committed: (n) => this.committed.inc(n), failed: () => this.failures.inc() };
  }
}
