// Responses usage: `input_tokens` includes the cached ones and `output_tokens` the reasoning ones.
// Both detail objects are always written, zeros included: Codex reads
// `output_tokens_details.reasoning_tokens` as a required field and fails without it.

import type { IRUsage } from '../ir.js';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

export function usageFromResponses(u: unknown): IRUsage | null {
  if (u === null || typeof u !== 'object') return null;
  const usage = u as {
    input_tokens?: unknown;
    output_tokens?: unknown;
    input_tokens_details?: { cached_tokens?: unknown; cache_write_tokens?: unknown } | null;
  };
  const cacheRead = num(usage.input_tokens_details?.cached_tokens);
  const cacheWrite = num(usage.input_tokens_details?.cache_write_tokens);
  return {
    input: Math.max(0, num(usage.input_tokens) - cacheRead - cacheWrite),
    output: num(usage.output_tokens),
    cacheRead,
    cacheWrite,
  };
}

export function usageToResponses(u: IRUsage, reasoningTokens = 0) {
  const input = u.input + u.cacheRead + u.cacheWrite;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cacheRead },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: input + u.output,
  };
}
