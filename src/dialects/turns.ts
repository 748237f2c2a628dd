// The conversation as the IR keeps it, whichever dialect it came from: Anthropic needs strict
// user/assistant alternation, and tool results at the head of the user turn that follows the
// call. OpenAI-style dialects send one item per tool result, often followed by a user message;
// all of them become one user turn, tool results first.

import type { IRMessage } from './ir.js';

/** Consecutive turns of one role merged (a mid-conversation system turn stays on its own); empty turns dropped. */
export function mergeTurns(turns: IRMessage[]): IRMessage[] {
  const out: IRMessage[] = [];
  for (const turn of turns) {
    // A turn with no content (an assistant message with neither text nor calls) carries nothing.
    if (turn.content.length === 0) continue;
    const last = out.at(-1);
    if (last && last.role === turn.role && turn.role !== 'system') last.content.push(...turn.content);
    else out.push({ role: turn.role, content: [...turn.content] });
  }
  for (const msg of out) {
    if (msg.role !== 'user') continue;
    const results = msg.content.filter((c) => c.type === 'tool_result');
    if (results.length > 0) msg.content = [...results, ...msg.content.filter((c) => c.type !== 'tool_result')];
  }
  return out;
}
