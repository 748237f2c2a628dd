// Gemini's usageMetadata ↔ the IR's usage. Gemini counts like OpenAI on input and unlike anyone
// on output: `promptTokenCount` includes `cachedContentTokenCount`, while `candidatesTokenCount`
// leaves out `thoughtsTokenCount`, which is billed as output all the same. A stream repeats the
// counts so far in every chunk; the last chunk's are the answer's.

import type { IRUsage } from '../ir.js';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

/** usageMetadata → IR usage; null when there is none. Output is known only once it is counted. */
export function usageFromGemini(u: unknown): IRUsage | null {
  if (u === null || typeof u !== 'object') return null;
  const m = u as Record<string, unknown>;
  const cacheRead = num(m.cachedContentTokenCount);
  // Tool-use prompts (grounding results fed back to the model) are input the vendor bills.
  const prompt = num(m.promptTokenCount) + num(m.toolUsePromptTokenCount);
  return {
    input: Math.max(0, prompt - cacheRead),
    output: num(m.candidatesTokenCount) + num(m.thoughtsTokenCount),
    cacheRead,
    cacheWrite: 0,
  };
}

/** Whether the counts include the output so far (intermediate chunks of some models carry only the prompt). */
export const reportsOutput = (u: unknown): boolean =>
  u !== null &&
  typeof u === 'object' &&
  ((u as GeminiUsage).candidatesTokenCount !== undefined || (u as GeminiUsage).thoughtsTokenCount !== undefined);

/** IR usage → usageMetadata. The IR does not keep reasoning apart from output: it all goes in candidates. */
export function usageToGemini(u: Partial<IRUsage>): GeminiUsage {
  const prompt = (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
  const out: GeminiUsage = { promptTokenCount: prompt };
  if (u.output !== undefined) out.candidatesTokenCount = u.output;
  if (u.cacheRead) out.cachedContentTokenCount = u.cacheRead;
  out.totalTokenCount = prompt + (u.output ?? 0);
  return out;
}
