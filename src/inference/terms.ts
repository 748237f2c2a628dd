// The terms of one inference request, settled before it is forwarded: which prices apply, the
// output cap the upstream is sent and the number of choices, the options that cost more than
// tokens, the client headers that may be forwarded, and the hold: an upper bound of what the
// upstream can bill for all of it. What a surface's own fields say (caps, choices, priced
// options, headers) is its dialect's `clientTerms`; what every request shares is here.

import type { Config } from '../config.js';
import type { Model, Prices } from '../catalogue/index.js';
import { worstCase } from '../billing/money.js';
import { asksOneHourCache, inputTokenBound, type BodySize } from '../billing/prompt-size.js';
import type { DialectLimits } from '../dialects/dialect.js';
import { GatewayError } from '../errors.js';
import type { Surface } from './surfaces.js';

export interface Terms {
  pricing: Prices;
  officialPricing: Prices;
  /** Output tokens per choice: what the upstream is told, and what was reserved for. */
  outputCap: number;
  n: number;
  /**
   * Charged per request on top of the tokens (a hosted search): `hostedFee`, or nothing on a
   * route of another dialect, which cannot run the hosted tools (see inference/handle.ts).
   */
  feeNano: bigint;
  hostedFee: bigint;
  /** Hosted tools the model sells, kept in the body. */
  hosted: string[];
  /** Hosted tools the model does not sell, taken out of the body. */
  dropped: string[];
  /** The worst-case cost reserved before forwarding. */
  hold: bigint;
  /** The client's vetted headers, for an upstream of the client's own dialect. */
  forwardHeaders?: Record<string, string>;
}

type Body = Record<string, unknown>;
type Limits = Pick<Config, 'MAX_MESSAGES'> & DialectLimits;

const NONE: string[] = [];
const max = (...xs: bigint[]) => xs.reduce((a, b) => (b > a ? b : a));

export function requestTerms(
  surface: Surface,
  body: Body,
  size: BodySize,
  model: Model,
  headers: Record<string, string>,
  limits: Limits,
): Terms {
  // Gemini's turns are `contents`.
  const param = Array.isArray(body.messages) ? 'messages' : 'contents';
  const messages = body[param];
  if (Array.isArray(messages) && messages.length > limits.MAX_MESSAGES) {
    throw new GatewayError(
      'invalid_request',
      `The request has ${messages.length} messages; at most ${limits.MAX_MESSAGES} are accepted (MAX_MESSAGES).`,
      { param, code: 'too_many_messages' },
    );
  }
  const inputTokens = inputTokenBound(body, size, surface.dialect.promptParts(body), {
    maxImageTokens: model.maxImageTokens,
    contextWindow: model.contextWindow,
    longContext: model.pricing.longContext !== undefined,
  });
  const oneHourCache = asksOneHourCache(body);
  const c = surface.clientTerms(body, model, headers, limits);

  // What one input token can be billed at, at worst: long-context prices once the request may be
  // long enough, cache writes (one-hour ones if asked for), audio if sent.
  const lc = c.pricing.longContext;
  const p = lc && inputTokens > lc.threshold ? lc.prices : c.pricing;
  const inputPrice = max(p.input, p.cacheWrite, oneHourCache ? p.cacheWrite1h : 0n, c.audioIn ? p.audioIn! : 0n);
  const outputPrice = max(p.output, c.audioOut ? p.audioOut! : 0n);
  const hold = worstCase(
    inputTokens,
    c.outputCap * c.n + c.extraOutput,
    inputPrice,
    outputPrice,
    c.feeNano + c.holdFees,
  );
  return {
    pricing: c.pricing,
    officialPricing: c.officialPricing,
    outputCap: c.outputCap,
    n: c.n,
    feeNano: c.feeNano,
    hostedFee: c.feeNano,
    hold,
    forwardHeaders: c.forwardHeaders,
    hosted: c.hosted ?? NONE,
    dropped: c.dropped ?? NONE,
  };
}
