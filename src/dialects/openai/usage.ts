import type { IRUsage } from '../ir.js';

interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: {
    cached_tokens?: number | null;
    cache_write_tokens?: number | null;
    audio_tokens?: number | null;
  } | null;
  completion_tokens_details?: { audio_tokens?: number | null } | null;
  /** DeepSeek's name for the cached part of prompt_tokens. */
  prompt_cache_hit_tokens?: number | null;
}

/** OpenAI usage → IR. OpenAI's prompt_tokens include the cached ones; the IR's input does not. */
export function usageFromOpenAI(u: unknown): IRUsage | null {
  if (u === null || typeof u !== 'object') return null;
  const usage = u as OpenAIUsage;
  const prompt = num(usage.prompt_tokens);
  const cacheRead = num(usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens);
  const cacheWrite = num(usage.prompt_tokens_details?.cache_write_tokens);
  const out: IRUsage = {
    input: Math.max(0, prompt - cacheRead - cacheWrite),
    output: num(usage.completion_tokens),
    cacheRead,
    cacheWrite,
  };
  const audioIn = num(usage.prompt_tokens_details?.audio_tokens);
  const audioOut = num(usage.completion_tokens_details?.audio_tokens);
  if (audioIn > 0) out.audioIn = audioIn;
  if (audioOut > 0) out.audioOut = audioOut;
  return out;
}

/** IR → the chat surface's usage object (with `cached_tokens` at top level too, per API.md §1). */
export function usageToOpenAI(u: IRUsage) {
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    cached_tokens: u.cacheRead,
    prompt_tokens_details: { cached_tokens: u.cacheRead },
  };
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}
