// Keep-alive connections to one upstream origin: undici Clients carrying one request at a time,
// the free ones on a stack. undici's own Pool finds a free client by scanning all of them, twice
// per request, and opens a spare one whenever none is free: at thousands of open streams (each
// holds its connection for minutes) that scan is quadratic over a ramp, and every client it
// makes carries four pool listeners and a bound function.

import { Client, errors, type Dispatcher } from 'undici';

export type ClientOptions = ConstructorParameters<typeof Client>[1];

interface Waiting {
  opts: Dispatcher.DispatchOptions;
  handler: Dispatcher.DispatchHandler;
}

export class OriginPool {
  /** Free clients, the most recently used on top: its connection is the likeliest still open. */
  private readonly free: Client[] = [];
  private readonly all: Client[] = [];
  /** Requests beyond `limit` connections, in arrival order. */
  private readonly waiting: Waiting[] = [];
  private waitingAt = 0;
  private closed = false;

  constructor(
    private readonly origin: string,
    private readonly options: ClientOptions,
    private readonly limit: number,
  ) {}

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    if (this.closed) throw new errors.ClientClosedError();
    const client = this.free.pop() ?? (this.all.length < this.limit ? this.open() : undefined);
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
    if (this.waitingAt < this.waiting.length) {
      const next = this.waiting[this.waitingAt]!;
      this.waiting[this.waitingAt++] = undefined as never;
      if (this.waitingAt === this.waiting.length) {
        this.waiting.length = 0;
        this.waitingAt = 0;
      }
      this.send(client, next.opts, next.handler);
    } else this.free.push(client);
  }

  private open(): Client {
    const client = new Client(this.origin, this.options);
    client.on('drain', () => this.release(client));
    this.all.push(client);
    return client;
  }

  /** Connections made so far (each reconnects by itself when its socket was closed). */
  get size(): number {
    return this.all.length;
  }

  /** Requests waiting for a free connection. */
  get queued(): number {
    return this.waiting.length - this.waitingAt;
  }

  /** Lets running requests finish, then closes every connection. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.all.map((c) => c.close()));
  }
}
