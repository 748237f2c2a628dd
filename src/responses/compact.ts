// POST /v1/responses/compact (docs/api.md, "Compaction"): the conversation in `input` compacted
// into a shorter one that carries on from it, on any model. It is one call of the POST
// /v1/responses route (Router.serve, ../server/inner-request.ts) with a `compaction_trigger`
// after the input, so the key's limits, the hold, the charge and the record are that call's;
// its one compaction item follows the user's latest messages in the answer's `output`, which the
// client sends as the input of its next turn.

import { GatewayError } from '../errors.js';
import type { KeyIdentity } from '../accounts/keys.js';
import type { Exchange } from '../server/exchange.js';
import { carriedHeaders, innerRequest } from '../server/inner-request.js';
import type { RouteDef, Router } from '../server/router.js';
import { inputItems } from './store.js';

type Body = Record<string, unknown>;

/** The fields of a compact request that the call carries on (the rest of a Responses body has no say in a summary). */
const CARRIED = [
  'model',
  'instructions',
  'previous_response_id',
  'tools',
  'parallel_tool_calls',
  'reasoning',
  'text',
  'prompt_cache_key',
  'service_tier',
  'metadata',
  'user',
];
/** The user's latest messages kept beside the summary, at most this much of their JSON. */
const RETAINED_BYTES = 256 * 1024;

export interface Compaction {
  route: RouteDef;
  /** The key checked (before the body is read) and the body's JSON. */
  readJson(ex: Exchange): Promise<{ identity: KeyIdentity; body: unknown }>;
}

export function registerCompact(router: Router, { route, readJson }: Compaction, onError: RouteDef['onError']): void {
  router.add({
    method: 'post',
    path: '/v1/responses/compact',
    name: 'responses_compact',
    onError,
    handler: async (ex) => {
      const { body } = await readJson(ex);
      if (body === null || typeof body !== 'object' || Array.isArray(body))
        throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
      const req = body as Body;
      if (req.input !== undefined && req.input !== null && typeof req.input !== 'string' && !Array.isArray(req.input)) {
        throw new GatewayError(
          'invalid_request',
          "Invalid type for 'input': expected a string or an array of input items.",
          { param: 'input' },
        );
      }
      const input = inputItems(req.input);
      const call: Body = { store: false, stream: false };
      for (const f of CARRIED) if (req[f] !== undefined) call[f] = req[f];
      call.input = [...input, { type: 'compaction_trigger' }];
      const answer = await callRoute(router, route, ex, call);
      if (answer === undefined) return;
      if (answer.status !== 200) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        for (const h of ['retry-after', 'x-should-retry'])
          if (answer.headers[h] !== undefined) headers[h] = answer.headers[h]!;
        return ex.send(answer.status, answer.body, headers);
      }
      const response = JSON.parse(answer.body) as Body;
      const item = (response.output as Body[]).find((o) => o.type === 'compaction');
      ex.json(200, {
        id: response.id,
        object: 'response.compaction',
        created_at: response.created_at,
        model: response.model,
        output: [...latestUserMessages(input), item],
        usage: response.usage,
      });
    },
  });
}

/** The user's messages from the end of `input`, as many as fit in RETAINED_BYTES, in order. */
function latestUserMessages(input: Body[]): Body[] {
  const kept: Body[] = [];
  let bytes = 0;
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i]!;
    if (item.role !== 'user' || (item.type !== undefined && item.type !== 'message')) continue;
    bytes += Buffer.byteLength(JSON.stringify(item));
    if (bytes > RETAINED_BYTES) break;
    kept.push(item);
  }
  return kept.reverse();
}

/** `body` through `route` as `ex`'s client's request: its answer, or undefined when the client left. */
function callRoute(
  router: Router,
  route: RouteDef,
  ex: Exchange,
  body: Body,
): Promise<{ status: number; headers: Record<string, string>; body: string } | undefined> {
  return new Promise((resolve) => {
    let answer: { status: number; headers: Record<string, string>; body: string } | undefined;
    const address = new TextEncoder().encode(ex.peerAddress).buffer as ArrayBuffer;
    const inner = innerRequest(
      {
        send: () => true,
        answered: (status, headers, text) => (answer = { status, headers, body: text }),
        ended: () => {
          forget();
          resolve(answer);
        },
        close: () => {},
        cork: (cb) => cb(),
        remoteAddress: () => address,
      },
      'POST',
      route.path,
      carriedHeaders(ex.headers),
      Buffer.from(JSON.stringify(body)),
    );
    // The client gone, the call is aborted as its own request would be (what ran is billed).
    const forget = ex.onAbort(() => inner.abort());
    router.serve(route, inner.res, inner.req);
  });
}
