// The terms of one inference request, settled before it is forwarded: which prices apply (a
// service tier may change them), the output cap the upstream is sent and the number of choices,
// the options that cost more than tokens (refused unless the model's catalogue entry prices
// them), the Anthropic headers that may be forwarded, and the hold: an upper bound of what the
// upstream can bill for all of it.

import type { Config } from '../config.js';
import type { Model, Prices } from '../catalogue/index.js';
import { worstCase } from '../billing/money.js';
import { asksOneHourCache, inputTokenBound, type BodySize } from '../billing/prompt-size.js';
import type { Dialect } from '../dialects/dialect.js';
import { GatewayError } from '../errors.js';
import { anthropicHeaders } from './anthropic-headers.js';

export interface Terms {
  pricing: Prices;
  officialPricing: Prices;
  /** Output tokens per choice: what the upstream is told, and what was reserved for. */
  outputCap: number;
  n: number;
  /** Charged per request on top of the tokens (OpenAI `web_search_options`). */
  feeNano: bigint;
  /** The worst-case cost reserved before forwarding. */
  hold: bigint;
  /** For Anthropic upstreams. */
  anthropicVersion: string;
  anthropicBetas?: string;
}

type Body = Record<string, unknown>;
type Limits = Pick<Config, 'MAX_N' | 'MAX_MESSAGES' | 'ANTHROPIC_VERSIONS' | 'ANTHROPIC_PRICED_BETAS'>;

const refuse = (param: string, message: string) => new GatewayError('invalid_request', message, { param, code: 'unsupported_option' });

/** The field is named in the message too: the Anthropic envelope has no `param`. */
const notSold = (param: string, what: string, model: Model) =>
  refuse(param, `${param}: ${what} costs more than plain tokens and is not offered on "${model.id}" by this gateway.`);

/** Anthropic tools that run on the client (priced as tokens); other typed tools run server-side. */
const CLIENT_TOOL = /^(?:custom|bash_\d+|text_editor_\d+|computer_\d+|memory_\d+)$/;

const SERVER_TOOL_FAMILY: [RegExp, string][] = [
  [/^web_fetch_/, 'web_fetch'],
  [/^code_execution_/, 'code_execution'],
  [/^tool_search_tool_/, 'tool_search'],
  [/^mcp_toolset$/, 'mcp'],
];

const max = (...xs: bigint[]) => xs.reduce((a, b) => (b > a ? b : a));

export function requestTerms(
  surface: 'chat' | 'messages',
  dialect: Dialect,
  body: Body,
  size: BodySize,
  model: Model,
  headers: Record<string, string>,
  limits: Limits,
): Terms {
  const messages = body.messages;
  if (Array.isArray(messages) && messages.length > limits.MAX_MESSAGES) {
    throw new GatewayError('invalid_request', `The request has ${messages.length} messages; at most ${limits.MAX_MESSAGES} are accepted (MAX_MESSAGES).`, { param: 'messages', code: 'too_many_messages' });
  }
  const inputTokens = inputTokenBound(body, size, dialect.promptParts(body), {
    maxImageTokens: model.maxImageTokens,
    contextWindow: model.contextWindow,
    longContext: model.pricing.longContext !== undefined,
  });
  const oneHourCache = asksOneHourCache(body);
  let pricing = model.pricing;
  let officialPricing = model.officialPricing;
  let n = 1;
  let outputCap: number;
  let extraOutput = 0;
  let feeNano = 0n;
  let holdFees = 0n;
  let audioIn = false;
  let audioOut = false;
  let anthropicVersion = limits.ANTHROPIC_VERSIONS[0]!;
  let anthropicBetas: string | undefined;

  if (surface === 'chat') {
    // Every cap the client named binds; none: the model's maximum. The upstream gets exactly this.
    const caps = [body.max_completion_tokens, body.max_tokens].filter((x): x is number => typeof x === 'number');
    outputCap = Math.min(model.maxOutputTokens, ...caps);
    if (body.n !== undefined && body.n !== null) {
      const allowed = Math.min(limits.MAX_N, model.maxN ?? limits.MAX_N);
      if (typeof body.n !== 'number' || !Number.isInteger(body.n) || body.n < 1) throw refuse('n', "Invalid 'n': must be a whole number of at least 1.");
      if (body.n > allowed) throw refuse('n', `Invalid 'n': at most ${allowed} choices per request on "${model.id}".`);
      n = body.n;
    }
    const tier = body.service_tier;
    if (tier !== undefined && tier !== null && tier !== 'auto' && tier !== 'default' && tier !== 'flex') {
      const sold = typeof tier === 'string' ? model.serviceTiers.get(tier) : undefined;
      if (!sold) throw notSold('service_tier', `service_tier ${JSON.stringify(tier)}`, model);
      ({ pricing, officialPricing } = sold);
    }
    if (body.web_search_options !== undefined && body.web_search_options !== null) {
      if (pricing.perWebSearch === 0n) throw notSold('web_search_options', 'Web search', model);
      feeNano += pricing.perWebSearch;
    }
    const modalities = Array.isArray(body.modalities) ? body.modalities : [];
    if (modalities.includes('audio') || (body.audio !== undefined && body.audio !== null)) {
      if (pricing.audioOut === undefined) throw notSold(body.audio ? 'audio' : 'modalities', 'Audio output', model);
      audioOut = true;
    }
    if (Array.isArray(messages)) {
      messages.forEach((m, i) => {
        const content = (m as Body | null)?.content;
        if (!Array.isArray(content)) return;
        content.forEach((part, j) => {
          if ((part as Body | null)?.type !== 'input_audio') return;
          if (pricing.audioIn === undefined) throw notSold(`messages[${i}].content[${j}]`, 'Audio input', model);
          audioIn = true;
        });
      });
    }
    // A predicted output's rejected tokens are billed as output, beyond the cap: at most one a byte.
    const prediction = body.prediction;
    if (prediction !== undefined && prediction !== null) extraOutput = Buffer.byteLength(JSON.stringify(prediction));
  } else {
    outputCap = Math.min(model.maxOutputTokens, typeof body.max_tokens === 'number' ? body.max_tokens : model.maxOutputTokens);
    const tools = Array.isArray(body.tools) ? (body.tools as (Body | null)[]) : [];
    tools.forEach((tool, i) => {
      const type = tool?.type;
      if (type === undefined || type === null || (typeof type === 'string' && CLIENT_TOOL.test(type))) return;
      const param = `tools.${i}.type`;
      if (typeof type === 'string' && type.startsWith('web_search_')) {
        if (pricing.perWebSearch === 0n) throw notSold(param, 'The web_search server tool', model);
        const uses = typeof tool?.max_uses === 'number' && tool.max_uses > 0 ? tool.max_uses : model.webSearchMaxCalls;
        holdFees += pricing.perWebSearch * BigInt(uses);
        return;
      }
      const family = typeof type === 'string' ? SERVER_TOOL_FAMILY.find(([re]) => re.test(type))?.[1] : undefined;
      if (!family || !model.serverTools.has(family)) throw notSold(param, `The server tool ${JSON.stringify(type)}`, model);
    });
    if (body.mcp_servers !== undefined && body.mcp_servers !== null && !model.serverTools.has('mcp')) throw notSold('mcp_servers', 'Remote MCP servers', model);
    if (body.container !== undefined && body.container !== null && !model.serverTools.has('code_execution')) throw notSold('container', 'A code execution container', model);
    // Fast mode is billed at a premium, asked for by the body on models that need no beta for it:
    // sold only where the catalogue entry's prices cover the fast-mode beta.
    if (body.speed !== undefined && body.speed !== null && body.speed !== 'standard' && !model.pricedBetas.some((p) => p.startsWith('fast-mode'))) {
      throw notSold('speed', `speed ${JSON.stringify(body.speed)}`, model);
    }

    ({ version: anthropicVersion, betas: anthropicBetas } = anthropicHeaders(headers, model, limits));
  }

  // What one input token can be billed at, at worst: long-context prices once the request may be
  // long enough, cache writes (one-hour ones if asked for), audio if sent.
  const lc = pricing.longContext;
  const p = lc && inputTokens > lc.threshold ? lc.prices : pricing;
  const inputPrice = max(p.input, p.cacheWrite, oneHourCache ? p.cacheWrite1h : 0n, audioIn ? p.audioIn! : 0n);
  const outputPrice = max(p.output, audioOut ? p.audioOut! : 0n);
  const hold = worstCase(inputTokens, outputCap * n + extraOutput, inputPrice, outputPrice, feeNano + holdFees);
  return { pricing, officialPricing, outputCap, n, feeNano, hold, anthropicVersion, anthropicBetas };
}
