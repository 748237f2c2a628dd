// What a messages-surface client's Anthropic headers become on an Anthropic upstream.
//
// Betas pass through: a client knows better than the gateway what its release needs, and an
// allow-list dropped what each new Claude Code release sent, so its requests failed upstream.
// What a beta may not do is change the price behind the gateway's back. Those that only unlock
// a body feature (web fetch, code execution, MCP, tool search) cost nothing unless the body uses
// the feature, and the body is what the surface's terms (surface.ts) gate and price. Those that
// change what tokens cost are named in ANTHROPIC_PRICED_BETAS and refused unless the model's
// catalogue entry says its prices cover them; `context-1m-…` needs the model's long-context
// pricing.

import type { Model } from '../../catalogue/index.js';
import { GatewayError } from '../../errors.js';
import type { DialectLimits } from '../dialect.js';

type Limits = Pick<DialectLimits, 'ANTHROPIC_VERSIONS' | 'ANTHROPIC_PRICED_BETAS'>;

/** RFC 9110 token characters: what a comma-separated header item may hold. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `pattern`: a beta name, or a prefix ending in `*` (`fast-mode-*`), as ANTHROPIC_PRICED_BETAS and the catalogue write them. */
const betaMatches = (pattern: string, beta: string) =>
  pattern.endsWith('*') ? beta.startsWith(pattern.slice(0, -1)) : beta === pattern;

/** The field is named in the message too: the Anthropic envelope has no `param`. */
const notSold = (beta: string, why: string, model: Model) =>
  new GatewayError(
    'invalid_request',
    `anthropic-beta: The ${beta} beta (${why}) costs more than plain tokens and is not offered on "${model.id}" by this gateway.`,
    {
      param: 'anthropic-beta',
      code: 'unsupported_option',
    },
  );

/**
 * Any valid version date is accepted and replaced by a known one when the gateway was not built
 * against it; betas are forwarded unless they are priced and the model does not sell them (a
 * 400 naming the beta); invalid values are a 400.
 */
export function anthropicHeaders(
  headers: Record<string, string>,
  model: Model,
  limits: Limits,
): Record<string, string> {
  let version = limits.ANTHROPIC_VERSIONS[0]!;
  const sent = headers['anthropic-version']?.trim();
  if (sent !== undefined) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(sent)) {
      throw new GatewayError(
        'invalid_request',
        `anthropic-version: ${JSON.stringify(sent.slice(0, 40))} is not a version date like 2023-06-01.`,
        { param: 'anthropic-version' },
      );
    }
    if (limits.ANTHROPIC_VERSIONS.includes(sent)) version = sent;
  }
  const out: Record<string, string> = { 'anthropic-version': version };
  const beta = headers['anthropic-beta'];
  const betas = beta === undefined ? undefined : forwardedBetas(beta, model, limits.ANTHROPIC_PRICED_BETAS);
  if (betas) out['anthropic-beta'] = betas;
  return out;
}

/** The anthropic-beta values to forward: all of them, once each priced one is sold by the model. */
function forwardedBetas(header: string, model: Model, priced: readonly string[]): string | undefined {
  const kept: string[] = [];
  for (const raw of header.split(',')) {
    const beta = raw.trim();
    if (beta === '') continue;
    if (!TOKEN.test(beta)) {
      throw new GatewayError(
        'invalid_request',
        `anthropic-beta: ${JSON.stringify(beta.slice(0, 60))} is not a valid beta name.`,
        { param: 'anthropic-beta' },
      );
    }
    if (/^context-1m-/.test(beta)) {
      if (!model.pricing.longContext) throw notSold(beta, 'long-context pricing', model);
    } else if (priced.some((p) => betaMatches(p, beta)) && !model.pricedBetas.some((p) => betaMatches(p, beta))) {
      throw notSold(beta, 'listed in ANTHROPIC_PRICED_BETAS', model);
    }
    kept.push(beta);
  }
  return kept.length > 0 ? kept.join(',') : undefined;
}
