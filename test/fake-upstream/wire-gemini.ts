// The Gemini API's wire form of a Plan, whole and streamed (`alt=sse`), after the recordings in
// test/fixtures/gemini: each chunk a whole GenerateContentResponse framed `data: …\r\n\r\n`,
// usageMetadata in every chunk with the counts so far, no [DONE]; the last chunk carries
// finishReason, and the connection closes after it. Thoughts are counted apart from the answer
// (thoughtsTokenCount), as Gemini bills them; a function call arrives whole, its thoughtSignature
// on the first call of the turn.

import { FAKE_SIGNATURE, randomId, runText, type Plan } from './scenarios.js';
import type { ErrorResponse, Segment, WireContext } from './wire.js';

const json = JSON.stringify;

const FINISH: Record<Plan['stopReason'], string> = {
  end_turn: 'STOP',
  tool_use: 'STOP',
  stop_sequence: 'STOP',
  max_tokens: 'MAX_TOKENS',
};

/** Usage after `answered` answer tokens and `thought` thought tokens. */
function usage(plan: Plan, answered: number, thought: number): Record<string, number> {
  const u: Record<string, number> = { promptTokenCount: plan.promptTokens, candidatesTokenCount: answered };
  if (plan.cacheRead > 0) u.cachedContentTokenCount = plan.cacheRead;
  if (thought > 0) u.thoughtsTokenCount = thought;
  u.totalTokenCount = plan.promptTokens + answered + thought;
  return u;
}

function chunk(
  plan: Plan,
  ctx: WireContext,
  parts: object[] | undefined,
  answered: number,
  thought: number,
  finishReason?: string,
): string {
  const candidate: Record<string, unknown> = { content: parts ? { parts, role: 'model' } : { role: 'model' } };
  if (finishReason) candidate.finishReason = finishReason;
  candidate.index = 0;
  const body: Record<string, unknown> = { candidates: [candidate] };
  if (plan.reportUsage) body.usageMetadata = usage(plan, answered, thought);
  body.modelVersion = ctx.model;
  body.responseId = ctx.id;
  return json(body);
}

const callPart = (name: string, args: string, first: boolean) => ({
  functionCall: { name, args: JSON.parse(args) },
  ...(first ? { thoughtSignature: FAKE_SIGNATURE } : {}),
});

export function geminiResponse(plan: Plan, ctx: WireContext): object {
  const parts: object[] = [];
  let calls = 0;
  for (const b of plan.blocks) {
    if (b.kind === 'tool') parts.push(callPart(b.name, b.args.join(''), calls++ === 0));
    else if (b.kind === 'thinking') parts.push({ text: runText(b), thought: true });
    else parts.push({ text: runText(b) });
  }
  const candidate: Record<string, unknown> = {
    content: { parts, role: 'model' },
    finishReason: FINISH[plan.stopReason],
    index: 0,
  };
  if (calls > 0) candidate.finishMessage = 'Model generated function call(s).';
  const body: Record<string, unknown> = { candidates: [candidate] };
  if (plan.reportUsage)
    body.usageMetadata = usage(plan, plan.outputTokens - plan.reasoningTokens, plan.reasoningTokens);
  return { ...body, modelVersion: ctx.model, responseId: ctx.id };
}

export function geminiStream(plan: Plan, ctx: WireContext): Segment[] {
  const segs: Segment[] = [];
  const event = (data: string) => `data: ${data}\r\n\r\n`;
  let answered = 0;
  let thought = 0;
  let calls = 0;
  for (const b of plan.blocks) {
    if (b.kind === 'tool') {
      // Tokens of a call: its argument pieces, as the other wires count them.
      answered += b.args.length;
      segs.push(event(chunk(plan, ctx, [callPart(b.name, b.args.join(''), calls++ === 0)], answered, thought)));
    } else if (b.kind === 'thinking') {
      const before = thought;
      thought += b.count;
      segs.push({
        count: b.count,
        frame: (i) => event(chunk(plan, ctx, [{ text: b.piece(i), thought: true }], answered, before + i + 1)),
      });
    } else {
      const before = answered;
      const thoughts = thought;
      answered += b.count;
      segs.push({
        count: b.count,
        frame: (i) => event(chunk(plan, ctx, [{ text: b.piece(i) }], before + i + 1, thoughts)),
      });
    }
  }
  if (plan.ending === 'drop') return segs;
  if (plan.ending === 'midstream_error') {
    segs.push(
      event(
        json({
          error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' },
        }),
      ),
    );
    return segs;
  }
  segs.push(event(chunk(plan, ctx, [{ text: '' }], answered, thought, FINISH[plan.stopReason])));
  return segs;
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const MESSAGES: Record<number, string> = {
  400: 'Request contains an invalid argument.',
  401: 'API key not valid. Please pass a valid API key.',
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
};

/** google.rpc's envelope, pretty-printed with a trailing newline as the API sends it. */
export function geminiError(status: number, message?: string): ErrorResponse {
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=UTF-8',
    'x-request-id': randomId('', 16),
  };
  if (status === 429) headers['retry-after'] = '1';
  // The API answers a bad key with 400 INVALID_ARGUMENT (reason API_KEY_INVALID); 401 is kept for the fake's `bad-key`.
  const error = {
    code: status,
    message: message ?? MESSAGES[status] ?? `Fake upstream error ${status}`,
    status: STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT'),
  };
  return { status, headers, body: `${JSON.stringify({ error }, null, 2)}\n` };
}
