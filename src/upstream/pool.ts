// Keep-alive connections to one upstream origin: undici Clients carrying one request at a time,
// the free ones on a stack. undici's own Pool finds a free client by scanning all of them, twice
// per request, and opens a spare one whenever none is free: at thousands of open streams (each
// holds its connection for minutes) that scan is quadratic over a ramp, and every client it
// makes carries four pool listeners and a bound function.

import { buildConnector, Client, errors, type Dispatcher } from 'undici';

export type ClientOptions = ConstructorParameters<typeof Client>[1];

interface Waiting {
  opts: Dispatcher.DispatchOptions;
  handler: Dispatcher.DispatchHandler;
}

/**
 * What a free connection past the idle limit is destroyed with. close() ends in destroy() with a
 * ClientDestroyedError made for the occasion, whose stack Node's socket destroy then formats:
 * 64-96 µs of CPU a connection closed, against 24-41 with an error made once (medians, 2,000
 * idle connections at a time), and thousands are closed at once when a burst of streams ends.
 */
const SURPLUS = new errors.ClientDestroyedError();
void SURPLUS.stack;

export class OriginPool {
  /** Free clients, the most recently used on top: its connection is the likeliest still open. */
  private readonly free: Client[] = [];
  private readonly all = new Set<Client>();
  /** Clients whose connection failed: not used again (below). */
  private readonly retired = new WeakSet<Client>();
  /** Requests beyond `limit` connections, in arrival order. */
  private readonly waiting: Waiting[] = [];
  private waitingAt = 0;
  private closed = false;
  /** Shared by the clients, as in undici's pool: each would otherwise parse and keep its own. */
  private readonly url: URL;
  private readonly options: ClientOptions;

  constructor(
    origin: string,
    options: Omit<ClientOptions, 'connect'>,
    connectMs: number,
    private readonly limit: number,
    /**
     * Free clients kept: past a burst (thousands of streams ending) the rest are closed rather
     * than held with their sockets until the keep-alive time runs out, as nginx's `keepalive`
     * caches only so many.
     */
    private readonly idleMax: number,
  ) {
    this.url = new URL(origin);
    // One connector (and TLS session cache) for the origin rather than one per client.
    this.options = { ...options, connect: buildConnector({ timeout: connectMs }) };
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    if (this.closed) throw new errors.ClientClosedError();
    const client = this.free.pop() ?? (this.all.size < this.limit ? this.open() : undefined);
    if (client) this.send(client, opts, handler);
    else this.waiting.push({ opts, handler });
  }

  private send(client: Client, opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    // A client that took a request says it is busy (false) and emits 'drain' once it can take
    // the next. A request it refused at once (an invalid header: the handler has its error
    // already) also says false, but leaves it empty, and no 'drain' will come.
    if (client.dispatch(opts, handler) || client.stats.size === 0) this.release(client);
  }

  private release(client: Client): void {
    if (this.retired.delete(client)) {
      // Its place goes to a new client if a request is waiting for one.
      const next = this.closed ? undefined : this.takeWaiting();
      if (next) this.send(this.open(), next.opts, next.handler);
      return;
    }
    const next = this.takeWaiting();
    if (next) this.send(client, next.opts, next.handler);
    else if (this.free.length < this.idleMax) this.free.push(client);
    else {
      this.all.delete(client);
      // Free: it has no request in flight for the error to reach.
      client.destroy(SURPLUS).catch(() => {});
    }
  }

  private takeWaiting(): Waiting | undefined {
    if (this.waitingAt === this.waiting.length) return undefined;
    const next = this.waiting[this.waitingAt]!;
    this.waiting[this.waitingAt++] = undefined as never;
    if (this.waitingAt === this.waiting.length) {
      this.waiting.length = 0;
      this.waitingAt = 0;
    }
    return next;
  }

  // The clients' listeners are the pool's own, shared: undici names the client in each event
  // (its typings leave the targets out of 'drain', but it passes them as for the others).
  private readonly onDrain = ((_origin: URL, [client]: Client[]) => this.release(client!)) as (origin: URL) => void;

  /**
   * A client whose connection failed is not used again, as undici's own pool does since
   * nodejs/undici#3895. It still drains (its requests have their errors), and that frees its
   * place.
   */
  private readonly onConnectionError = (_origin: URL, [target]: readonly Dispatcher[]) => {
    this.retired.add(target as Client);
    this.all.delete(target as Client);
  };

  private open(): Client {
    const client = new Client(this.url, this.options);
    client.on('drain', this.onDrain).on('connectionError', this.onConnectionError);
    this.all.add(client);
    return client;
  }

  /** Lets running requests finish, then closes every connection. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.all].map((c) => c.close()));
  }
}
