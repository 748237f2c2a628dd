// Compaction on the Responses surface (docs/api.md, "Compaction"): a request whose input ends
// with `{"type":"compaction_trigger"}` (Codex's remote compaction) asks for the conversation
// compacted, and is answered by one output item `{"type":"compaction","encrypted_content"}`
// instead of a message. Any model does it: the gateway asks the model for a summary and wraps
// it. The wrapping is the gateway's own, readable by the gateway alone (not encrypted: what it
// holds is the client's conversation, told back), so that the item sent back in a later input
// becomes the summary again, for every upstream dialect. A vendor's own compaction item (its
// encrypted state) is passed to a provider of this dialect and cannot reach any other.

import { randomBase62 } from '../../wire.js';

/** What marks a compaction item as the gateway's. */
const PREFIX = 'airouter.compaction.v1.';

/** The instruction that turns a conversation into its summary. */
export const COMPACTION_PROMPT = [
  'Context compaction: the conversation above is about to be replaced by a summary, which is all',
  "that will remain of it besides the user's messages. Write that summary now, for yourself to",
  'continue the work from: the task and its goal, what has been done and found (files, commands,',
  'results, decisions and their reasons), what is in progress, and what remains. Be complete but',
  'terse. Do not call tools and do not address the user; write only the summary.',
].join(' ');

/** Heads the summary when a compaction item comes back as input. */
export const SUMMARY_HEADING = 'Summary of the earlier conversation, compacted:';

export const isCompactionTrigger = (item: unknown): boolean =>
  (item as { type?: unknown } | null)?.type === 'compaction_trigger';

/** The output item that carries `summary`. */
export function compactionItem(summary: string): Record<string, unknown> {
  return {
    type: 'compaction',
    id: `cmp_${randomBase62(40)}`,
    encrypted_content: PREFIX + Buffer.from(summary, 'utf8').toString('base64url'),
  };
}

/** The summary in a compaction item of the gateway's, or undefined (a vendor's, or no such item). */
export function compactionSummary(item: unknown): string | undefined {
  const it = item as { type?: unknown; encrypted_content?: unknown } | null;
  if (it === null || typeof it !== 'object' || (it.type !== 'compaction' && it.type !== 'compaction_summary'))
    return undefined;
  const content = it.encrypted_content;
  if (typeof content !== 'string' || !content.startsWith(PREFIX)) return undefined;
  return Buffer.from(content.slice(PREFIX.length), 'base64url').toString('utf8');
}

/** A compaction item of the gateway's as the message it stands for; anything else as it is. */
export function unwrapCompaction(item: unknown): unknown {
  const summary = compactionSummary(item);
  return summary === undefined
    ? item
    : { type: 'message', role: 'user', content: [{ type: 'input_text', text: `${SUMMARY_HEADING}\n\n${summary}` }] };
}
