// How an upstream exchange hears that the client who asked for it has left, while it waits for
// the upstream's answer. Not an AbortSignal: on Node 20 a signal is built on its first read and
// each listener goes in and out through EventTarget, which together cost a two-token stream
// 2.5 % of the gateway's CPU; a flag and one listener is all this needs, since a model's routes
// are tried one after another and each exchange stops listening once its answer is in.

import { errors as undiciErrors } from 'undici';

export interface CancelListener {
  cancelled(reason: Error): void;
}

export class Cancel {
  /** Set once cancelled: what the exchange under way fails with. */
  reason: Error | undefined = undefined;
  private listener: CancelListener | undefined = undefined;

  get cancelled(): boolean {
    return this.reason !== undefined;
  }

  /** An exchange is listening (for tests: none should be once an answer is in). */
  get listening(): boolean {
    return this.listener !== undefined;
  }

  cancel(reason: Error = new undiciErrors.RequestAbortedError()): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    const listener = this.listener;
    this.listener = undefined;
    listener?.cancelled(reason);
  }

  listen(listener: CancelListener): void {
    this.listener = listener;
  }

  unlisten(listener: CancelListener): void {
    if (this.listener === listener) this.listener = undefined;
  }
}
