// GET /v1/models: one list both SDKs parse (API.md §1), rebuilt only when the catalogue changes.
// Each model says its kind: `chat` ones serve the chat surfaces, `embedding` ones /v1/embeddings.

import type { Catalogue, Model } from '../catalogue/index.js';

function entry(m: Model) {
  return {
    id: m.id,
    object: 'model',
    type: 'model',
    display_name: m.displayName,
    created: m.created,
    created_at: new Date(m.created * 1000).toISOString().replace('.000Z', 'Z'),
    owned_by: m.ownedBy,
    context_window: m.contextWindow,
    // An embedding model produces no output tokens.
    max_output_tokens: m.kind === 'embedding' ? 0 : m.maxOutputTokens,
    kind: m.kind,
    ...(m.dimensions !== undefined ? { dimensions: m.dimensions } : {}),
    pricing: m.pricingJson,
    official_pricing: m.officialPricingJson,
  };
}

const rendered = new WeakMap<Catalogue, { list: string; byId: Map<string, string> }>();

export function modelsJson(c: Catalogue) {
  let r = rendered.get(c);
  if (!r) {
    const data = c.list.map(entry);
    r = {
      list: JSON.stringify({
        object: 'list',
        has_more: false,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        data,
      }),
      byId: new Map(data.map((d) => [d.id, JSON.stringify(d)])),
    };
    rendered.set(c, r);
  }
  return r;
}
