// The gateway's /v1/responses: the key as a bearer token, `resp_…` ids, and what its options
// cost beyond the prompt. Hosted tools that run at the vendor are sold only where the model's
// catalogue entry prices them (web search), and taken out of the request otherwise (a 400 only
// when tool_choice insists on one); tools the client runs (functions, freeform tools, shell and
// patch tools) are plain tokens.

import type { Model } from '../../catalogue/index.js';
import { bearer, randomBase62 } from '../../wire.js';
import type { ClientSide, ClientTerms, DialectLimits } from '../dialect.js';
import { dropEmptyTools, dropUnsold, notSold, refuse } from '../refusals.js';

type Body = Record<string, unknown>;

const CLIENT_TOOLS = new Set(['function', 'custom', 'namespace', 'local_shell', 'shell', 'apply_patch']);
const WEB_SEARCH = /^web_search(?:_preview)?(?:_\d{4}_\d{2}_\d{2})?$/;

function clientTerms(body: Body, model: Model, _headers: Record<string, string>, _limits: DialectLimits): ClientTerms {
  let { pricing, officialPricing } = model;
  let feeNano = 0n;
  const outputCap = Math.min(
    model.maxOutputTokens,
    typeof body.max_output_tokens === 'number' ? body.max_output_tokens : model.maxOutputTokens,
  );
  const tier = body.service_tier;
  if (tier !== undefined && tier !== null && tier !== 'auto' && tier !== 'default' && tier !== 'flex') {
    const sold = typeof tier === 'string' ? model.serviceTiers.get(tier) : undefined;
    if (!sold) throw notSold('service_tier', `service_tier ${JSON.stringify(tier)}`, model);
    ({ pricing, officialPricing } = sold);
  }
  // Declared in `tools`, or (Codex, on models it knows) in an `additional_tools` input item.
  const lists: unknown[][] = Array.isArray(body.tools) ? [body.tools] : [];
  if (Array.isArray(body.input)) {
    for (const item of body.input as (Body | null)[])
      if (item?.type === 'additional_tools' && Array.isArray(item.tools)) lists.push(item.tools);
  }
  const hosted: string[] = [];
  const dropped = lists.flatMap((list) =>
    dropUnsold(list, (tool) => {
      const type = typeof (tool as Body | null)?.type === 'string' ? ((tool as Body).type as string) : '';
      if (CLIENT_TOOLS.has(type)) return undefined;
      if (WEB_SEARCH.test(type) && pricing.perWebSearch > 0n) {
        // As the chat surface's web_search_options: its price once per request.
        feeNano = pricing.perWebSearch;
        hosted.push(type);
        return undefined;
      }
      if (!type) throw refuse('tools', 'tools: every tool needs a "type".');
      return type;
    }),
  );
  const choice = body.tool_choice as Body | null | undefined;
  if (typeof choice?.type === 'string' && dropped.includes(choice.type))
    throw notSold('tool_choice', `The hosted tool ${JSON.stringify(choice.type)}`, model);
  if (dropped.length > 0) dropEmptyTools(body, 'tools', 'tool_choice');
  return {
    pricing,
    officialPricing,
    outputCap,
    n: 1,
    extraOutput: 0,
    feeNano,
    holdFees: 0n,
    audioIn: false,
    audioOut: false,
    hosted,
    dropped,
  };
}

export const surface: ClientSide = {
  name: 'responses',
  path: '/v1/responses',
  key: (ex) => bearer(ex.headers.authorization),
  missingKey: 'Missing API key: send it as "Authorization: Bearer ar-…".',
  newId: () => `resp_${randomBase62(40)}`,
  answerHeaders: (): Record<string, string> => ({}),
  clientTerms,
};
