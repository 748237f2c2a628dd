import type { IRUsage } from '../ir.js';

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_creation?: { ephemeral_1h_input_tokens?: number | null } | null;
  server_tool_use?: { web_search_requests?: number | null } | null;
}

/** Anthropic usage → partial IR: only the fields present, because message_delta repeats some. */
export function usageFromAnthropic(u: unknown): Partial<IRUsage> | null {
  if (u === null || typeof u !== 'object') return null;
  const usage = u as AnthropicUsage;
  const out: Partial<IRUsage> = {};
  if (typeof usage.input_tokens === 'number') out.input = usage.input_tokens;
  if (typeof usage.output_tokens === 'number') out.output = usage.output_tokens;
  if (typeof usage.cache_read_input_tokens === 'number') out.cacheRead = usage.cache_read_input_tokens;
  if (typeof usage.cache_creation_input_tokens === 'number') out.cacheWrite = usage.cache_creation_input_tokens;
  const hour = usage.cache_creation?.ephemeral_1h_input_tokens;
  if (typeof hour === 'number' && hour > 0) out.cacheWrite1h = hour;
  const searches = usage.server_tool_use?.web_search_requests;
  if (typeof searches === 'number' && searches > 0) out.webSearches = searches;
  return out;
}

export function usageToAnthropic(u: IRUsage) {
  return {
    input_tokens: u.input,
    output_tokens: u.output,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
  };
}
