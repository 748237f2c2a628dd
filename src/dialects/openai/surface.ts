// The gateway's /v1/chat/completions: how its clients send the key, how its ids look, and what
// its options cost beyond the prompt (the terms' chat-specific part).

import type { Model } from '../../catalogue/index.js';
import { bearer, randomBase62 } from '../../wire.js';
import type { ClientSide, ClientTerms, DialectLimits } from '../dialect.js';
import { notSold, refuse } from '../refusals.js';

type Body = Record<string, unknown>;

function clientTerms(body: Body, model: Model, _headers: Record<string, string>, limits: DialectLimits): ClientTerms {
  let { pricing, officialPricing } = model;
  let n = 1;
  let feeNano = 0n;
  let extraOutput = 0;
  let audioIn = false;
  let audioOut = false;
  // Every cap the client named binds; none: the model's maximum. The upstream gets exactly this.
  const caps = [body.max_completion_tokens, body.max_tokens].filter((x): x is number => typeof x === 'number');
  const outputCap = Math.min(model.maxOutputTokens, ...caps);
  if (body.n !== undefined && body.n !== null) {
    const allowed = Math.min(limits.MAX_N, model.maxN ?? limits.MAX_N);
    if (typeof body.n !== 'number' || !Number.isInteger(body.n) || body.n < 1)
      throw refuse('n', "Invalid 'n': must be a whole number of at least 1.");
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
  const messages = body.messages;
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
  return {
    pricing,
    officialPricing,
    outputCap,
    n,
    extraOutput,
    feeNano,
    holdFees: 0n,
    audioIn,
    audioOut,
    hosted: feeNano > 0n ? ['web_search_options'] : undefined,
  };
}

const NO_HEADERS = (): Record<string, string> => ({});

export const surface: ClientSide = {
  name: 'chat',
  path: '/v1/chat/completions',
  key: (ex) => bearer(ex.headers.authorization),
  missingKey: 'Missing API key: send it as "Authorization: Bearer ar-…".',
  newId: () => `chatcmpl-${randomBase62(29)}`,
  answerHeaders: NO_HEADERS,
  clientTerms,
};
