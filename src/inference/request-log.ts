// One log line per inference request, at `info`: enough to diagnose a client's failure from the
// gateway alone (who, which surface, model and route, the status, how long, the tokens and the
// cost), and never the prompt, the answer or a key. A request refused (or failed unanswered)
// after its key was identified also goes to the user's usage log, from the same facts
// (./refusal-log.ts).

import type { OutboxRecord } from '../store/hot.js';
import { GatewayError } from '../errors.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';

/** What is known of a request as it goes: filled in by the steps that learn it. */
export class RequestLine {
  userId?: string = undefined;
  keyId?: string = undefined;
  model?: string = undefined;
  stream?: boolean = undefined;
  /** provider/model of the route that answered. */
  route?: string = undefined;
  /** Hosted tools the request declared and the gateway took out (not sold, or not run by the route). */
  droppedTools?: string[] = undefined;
  /** The usage record, once the request was charged. */
  record?: OutboxRecord = undefined;
}

export function logRequest(gw: Gateway, ex: Exchange, surface: string, line: RequestLine, err?: unknown): void {
  const r = line.record;
  const status = r ? r.status : err instanceof GatewayError ? err.status : err === undefined ? 200 : 500;
  const latencyMs = Math.round(performance.now() - ex.startedAt);
  // Charged requests have their usage record; an unknown key has no user to show it to.
  if (!r && err !== undefined && line.userId && line.keyId) {
    gw.refusals.add({
      userId: line.userId,
      keyId: line.keyId,
      requestId: ex.requestId,
      model: line.model ?? '',
      surface,
      stream: line.stream ?? false,
      status,
      code: err instanceof GatewayError ? (err.code ?? err.kind) : 'internal',
      latencyMs,
      at: Date.now(),
    });
  }
  if (!gw.log.isLevelEnabled('info')) return;
  gw.log.info(
    {
      requestId: ex.requestId,
      userId: line.userId,
      keyId: line.keyId,
      surface,
      model: line.model,
      route: line.route,
      ...(line.droppedTools?.length ? { droppedTools: line.droppedTools } : {}),
      status,
      ...(err instanceof GatewayError ? { error: err.kind } : err !== undefined ? { error: 'internal' } : {}),
      latencyMs,
      ...(r
        ? {
            inputTokens: r.promptTokens,
            outputTokens: r.completionTokens,
            cachedTokens: r.cachedTokens,
            costNano: String(r.costNano),
            ttftMs: r.ttftMs,
          }
        : {}),
    },
    'inference',
  );
}
