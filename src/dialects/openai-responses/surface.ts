// The gateway's /v1/responses: the key as a bearer token, `resp_…` ids, and what its options
// cost beyond the prompt. Hosted tools that run at the vendor are sold only where the model's
// catalogue entry prices them (web search), and refused otherwise with a 400 naming the tool;
// tools the client runs (functions, freeform tools, shell and patch tools) are plain tokens.

import type { Model } from '../../catalogue/index.js';
import { bearer, randomBase62 } from '../../wire.js';
import type { ClientTerms, DialectLimits, Surface } from '../dialect.js';
import { notSold } from '../refusals.js';

type Body = Record<string, unknown>;

const CLIENT_TOOLS = new Set(['function', 'custom', 'namespace', 'local_shell', 'shell', 'apply_patch']);
const WEB_SEARCH = /^web_search(?:_preview)?(?:_\d{4}_\d{2}_\d{2})?$/;

function clientTerms(body: Body, model: Model, _headers: Record<string, string>, _limits: DialectLimits): ClientTerms {
  let { pricing, officialPricing } = model;
  let feeNano = 0n;
  const outputCap = Math.min(model.maxOutputTokens, typeof body.max_output_tokens === 'number' ? body.max_output_tokens : model.maxOutputTokens);
  const tier = body.service_tier;
  if (tier !== undefined && tier !== null && tier !== 'auto' && tier !== 'default' && tier !== 'flex') {
    const sold = typeof tier === 'string' ? model.serviceTiers.get(tier) : undefined;
    if (!sold) throw notSold('service_tier', `service_tier ${JSON.stringify(tier)}`, model);
    ({ pricing, officialPricing } = sold);
  }
  // Declared in `tools`, or (Codex, on models it knows) in an `additional_tools` input item.
  const tools: [Body | null, string][] = (Array.isArray(body.tools) ? (body.tools as (Body | null)[]) : []).map((t, i) => [t, `tools[${i}]`]);
  if (Array.isArray(body.input)) {
    (body.input as (Body | null)[]).forEach((item, i) => {
      if (item?.type === 'additional_tools' && Array.isArray(item.tools)) (item.tools as (Body | null)[]).forEach((t, j) => tools.push([t, `input[${i}].tools[${j}]`]));
    });
  }
  tools.forEach(([tool, at]) => {
    const type = typeof tool?.type === 'string' ? tool.type : '';
    if (CLIENT_TOOLS.has(type)) return;
    const param = `${at}.type`;
    if (WEB_SEARCH.test(type) && pricing.perWebSearch > 0n) {
      // As the chat surface's web_search_options: its price once per request.
      if (feeNano === 0n) feeNano = pricing.perWebSearch;
      return;
    }
    throw notSold(param, `The hosted tool ${JSON.stringify(type)}`, model);
  });
  return { pricing, officialPricing, outputCap, n: 1, extraOutput: 0, feeNano, holdFees: 0n, audioIn: false, audioOut: false };
}

export const surface: Surface = {
  name: 'responses',
  path: '/v1/responses',
  key: (ex) => bearer(ex.headers.authorization),
  missingKey: 'Missing API key: send it as "Authorization: Bearer ar-…".',
  newId: () => `resp_${randomBase62(40)}`,
  answerHeaders: (): Record<string, string> => ({}),
  clientTerms,
};
