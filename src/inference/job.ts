// One inference request as it travels (handle.ts): what it is, what its translated answer is
// rendered with, and the two things done with it before its last byte leaves, its charge and,
// on a stateful surface, its answer kept.

import type { KeyIdentity } from '../accounts/keys.js';
import type { Reservation } from '../billing/reservation.js';
import { costOf } from '../billing/money.js';
import type { Forwarded } from '../billing/prompt-size.js';
import type { Model, Route } from '../catalogue/index.js';
import type { Dialect, RenderContext, SurfaceCall } from '../dialects/dialect.js';
import { DIALECTS } from '../dialects/index.js';
import type { IRRequest, IRTool, IRUsage } from '../dialects/ir.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import type { OutboxRecord } from '../store/hot.js';
import type { RequestLine } from './request-log.js';
import type { Conversation } from './state.js';
import type { Surface } from './surfaces.js';
import type { Terms } from './terms.js';

/**
 * What a translated answer is rendered with. A class rather than an object literal with a
 * getter: such a literal is a dictionary-mode object, and every open stream holds one.
 */
export class AnswerContext implements RenderContext {
  private ownId?: string;
  readonly created = Math.floor(Date.now() / 1000);
  // Set for stateful surfaces only; declared so that every context has one shape.
  clientTools?: ReadonlyMap<string, IRTool> = undefined;
  echo?: Record<string, unknown> = undefined;
  onFinal?: (answer: Record<string, unknown>) => void = undefined;
  compaction = false;

  constructor(
    readonly model: string,
    readonly includeUsage: boolean,
    readonly requestId: string,
    private readonly surface: Surface,
    readonly call: SurfaceCall | undefined = undefined,
  ) {}

  /** Only translated answers carry an id of ours; pass-through ones keep the upstream's. */
  get id(): string {
    return (this.ownId ??= this.surface.newId());
  }
}

export interface Job {
  gw: Gateway;
  ex: Exchange;
  surface: Surface;
  identity: KeyIdentity;
  model: Model;
  /**
   * The request. Once a stream starts, the meter holds the whole of it (for the fallback token
   * count) and this keeps only its settings: see streamAnswer.
   */
  ir: IRRequest;
  /** The client's body, needed only while routes are tried. */
  body?: Record<string, unknown>;
  terms: Terms;
  reservation: Reservation;
  ctx: RenderContext;
  /** The request went out to an upstream: from then on an abort still costs its input. */
  sent: boolean;
  /** What the last route tried was sent: counted as its input if the upstream never says. */
  forwarded?: Forwarded;
  /** A stateful surface's conversation (Responses): the history this request continues. */
  conversation?: Conversation;
  /** The whole answer as the client got it, for a stateful surface to keep. */
  final?: Record<string, unknown>;
  /** The route that answered. */
  route?: Route;
  /** What the request's log line says. */
  line: RequestLine;
}

/**
 * What a charge is worked out from: the part of a request every billed surface has, chat or
 * embeddings (src/inference/embeddings.ts, which has no IR and never streams).
 */
export type Billable = Pick<Job, 'gw' | 'ex' | 'identity' | 'model' | 'reservation' | 'line'> & {
  surface: { name: string };
  ir: { stream: boolean };
  terms: Pick<Terms, 'pricing' | 'officialPricing' | 'feeNano'>;
};

export function usageRecord(job: Billable, usage: IRUsage, status: number, ttftMs: number | null): OutboxRecord {
  const { model, identity, ex, reservation, terms } = job;
  const cost = costOf(usage, terms.pricing) + terms.feeNano;
  const overrun = cost > reservation.amount;
  if (overrun) {
    job.gw.metrics.overruns.inc();
    job.gw.log.warn(
      { requestId: ex.requestId, reserved: String(reservation.amount), cost: String(cost) },
      'cost went past the reservation; charged in full',
    );
  }
  const record: OutboxRecord = {
    settleId: reservation.id,
    userId: identity.userId,
    keyId: identity.keyId,
    requestId: ex.requestId,
    model: model.id,
    surface: job.surface.name,
    stream: job.ir.stream,
    status,
    promptTokens: usage.input + usage.cacheRead + usage.cacheWrite,
    completionTokens: usage.output,
    cachedTokens: usage.cacheRead,
    cacheWriteTokens: usage.cacheWrite,
    costNano: cost,
    officialCostNano: costOf(usage, terms.officialPricing) + terms.feeNano,
    latencyMs: Math.round(performance.now() - ex.startedAt),
    ttftMs,
    overrun,
    createdAt: new Date(),
    // Set by the routing step (handle.ts, embeddings.ts) once a route answered.
    route: job.line.route ?? null,
  };
  job.line.record = record;
  return record;
}

/** Charge before the answer leaves: an answer that reached the client has its charge recorded. */
export async function settleBeforeAnswer(job: Billable, usage: IRUsage, status: number): Promise<void> {
  const record = usageRecord(job, usage, status, null);
  await job.gw.ledger.settle(job.reservation, record.costNano, record);
}

/**
 * A stateful surface keeps the answer before its last byte leaves, so that a client continuing
 * from it at once finds it. Failing to keep it fails nothing else: the answer is billed and
 * sent, and a continuation from it gets a 404.
 */
/**
 * Whether `dialect`'s upstream gets the client's own body and its answer goes back as the
 * upstream wrote it: the client's dialect, unless the answer must be the gateway's (compaction).
 */
export const passesThrough = (job: Pick<Job, 'surface' | 'ir'>, dialect: Dialect): boolean =>
  dialect === job.surface.dialect && job.ir.compaction !== true;

export async function keepAnswer(job: Job, streamed?: Record<string, unknown>): Promise<void> {
  const { conversation, surface, route } = job;
  const answer = job.final ?? streamed;
  if (!conversation || !surface.state || !answer || !route) return;
  try {
    await surface.state.keep(
      job.gw,
      job.identity.userId,
      conversation,
      answer,
      route,
      passesThrough(job, DIALECTS[route.provider.dialect]),
    );
  } catch (err) {
    job.gw.log.warn({ err, requestId: job.ex.requestId }, 'the answer could not be kept for continuations');
  }
}
