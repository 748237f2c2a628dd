// The 400s the surfaces' terms share: an option refused, and one that costs more than tokens
// and is not sold on the model. The field is named in the message too: the Anthropic envelope
// has no `param`. And what they do instead of refusing a hosted tool that is only declared:
// coding agents (Codex) declare web search on every turn, on every model, and a 400 for it
// would refuse every turn; the tool is taken out of the request, and the answer says so.

import type { Model } from '../catalogue/index.js';
import { GatewayError } from '../errors.js';

export const refuse = (param: string, message: string) =>
  new GatewayError('invalid_request', message, { param, code: 'unsupported_option' });

export const notSold = (param: string, what: string, model: Model) =>
  refuse(param, `${param}: ${what} costs more than plain tokens and is not offered on "${model.id}" by this gateway.`);

/**
 * Takes out of `list`, in place, the entries `unsold` names (a hosted tool the model does not
 * sell), and returns those names.
 */
export function dropUnsold<T>(list: T[], unsold: (entry: T) => string | undefined): string[] {
  const dropped: string[] = [];
  let kept = 0;
  for (const entry of list) {
    const name = unsold(entry);
    if (name === undefined) list[kept++] = entry;
    else dropped.push(name);
  }
  list.length = kept;
  return dropped;
}

/**
 * A tool list that dropping left empty goes, with the choice among its tools: the vendors refuse
 * an empty list beside a tool_choice.
 */
export function dropEmptyTools(body: Record<string, unknown>, tools: string, choice: string): void {
  const list = body[tools];
  if (!Array.isArray(list) || list.length > 0) return;
  delete body[tools];
  delete body[choice];
}
