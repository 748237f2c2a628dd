// Messages to every gateway process through Redis pub/sub. Publishing goes over the store's
// connection; a subscribed connection takes no other commands, so listening has one of its own,
// made when the first channel is subscribed to.

import type { Bus } from './hot.js';
import { connectRedis, isCluster, whenReady, type RedisClient, type RedisTarget } from './redis-connect.js';
import type { RedisLayout } from './redis-layout.js';

/** A connection of a cluster made while running (the subscriber) may take its time to learn the slots. */
const START_WAIT_MS = 10_000;

export class RedisBus implements Bus {
  private sub?: RedisClient;
  private readonly handlers = new Map<string, (message: string) => void>();

  constructor(
    private readonly redis: RedisClient,
    private readonly target: RedisTarget,
    private readonly layout: RedisLayout,
    private readonly timeoutMs: number,
    /** Why the store's connection is down, if it is: what a subscribe that timed out says. */
    private readonly lastError: () => Error | undefined,
  ) {}

  async publish(channel: string, message: string) {
    await this.redis.publish(this.layout.channel(channel), message);
  }

  async subscribe(channel: string, onMessage: (message: string) => void) {
    if (!this.sub) {
      this.sub = connectRedis(this.target, { lazyConnect: false, connectTimeout: this.timeoutMs });
      this.sub.on('error', () => {});
      this.sub.on('message', (ch: string, msg: string) => this.handlers.get(ch)?.(msg));
    }
    this.handlers.set(this.layout.channel(channel), onMessage);
    if (isCluster(this.target)) await whenReady(this.sub, START_WAIT_MS, this.lastError);
    await this.sub.subscribe(this.layout.channel(channel));
  }

  close(): void {
    this.sub?.disconnect();
  }
}
