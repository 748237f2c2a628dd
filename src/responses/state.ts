// The Responses surface's server-side state (docs/api.md, "Responses"): `store` (default true)
// keeps each answer, `previous_response_id` continues from one on any model and any upstream
// dialect, and GET / DELETE /v1/responses/{id} read and remove what was kept.
//
// A continuation is the stored input and output replayed before the new input, so every
// upstream, stateless or not, sees the whole conversation; the hold covers all of it. A
// Responses upstream that answered the previous turn and kept it itself gets the client's own
// request instead, naming the turn, so that its cached state (and hidden reasoning) is used.

import { GatewayError } from '../errors.js';
import type { Admitted } from '../inference/admission.js';
import type { Conversation, SurfaceState } from '../inference/state.js';
import { registerCompact } from './compact.js';
import { registerResponsesWebSocket } from './websocket.js';
import {
  deleteResponse,
  history,
  inputItems,
  listedInput,
  loadResponse,
  responseText,
  saveResponse,
  storedBytes,
  storedSize,
} from './store.js';

type Body = Record<string, unknown>;

interface ResponsesConversation extends Conversation {
  /** Every input item the answer sees, history included: what is stored with it. */
  input: Body[];
}

/** Request fields a response object repeats. */
const ECHOED = [
  'instructions',
  'max_output_tokens',
  'metadata',
  'parallel_tool_calls',
  'previous_response_id',
  'reasoning',
  'store',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_p',
  'truncation',
  'user',
];

const notFound = (what: string, id: string, param?: string) =>
  new GatewayError('not_found', `${what} with id '${id}' not found.`, {
    code: 'not_found',
    ...(param ? { param } : {}),
  });

/** A response id as the vendors and this gateway make them: visible ASCII, at most 256 characters. */
const RESPONSE_ID = /^[\x21-\x7e]{1,256}$/;

/** `id`, or a 400 naming `param` when it cannot be an id (a NUL, a control character, a megabyte). */
function responseId(id: unknown, param: string): string {
  if (typeof id === 'string' && RESPONSE_ID.test(id)) return id;
  throw new GatewayError('invalid_request', `Invalid '${param}': an id is 1 to 256 visible ASCII characters.`, {
    param,
    code: 'invalid_id',
  });
}

/**
 * What a kept answer may take (docs/api.md, "Responses"): each one at most
 * RESPONSES_STORE_MAX_BYTES, a user's together at most RESPONSES_STORE_QUOTA_BYTES. Checked before
 * the request goes out, from what it will keep at least (its body, and the history it continues);
 * the answer's own output is checked when it is kept.
 */
async function checkStorable(gw: Parameters<SurfaceState['resume']>[0], userId: string, bytes: number): Promise<void> {
  const { RESPONSES_STORE_MAX_BYTES: max, RESPONSES_STORE_QUOTA_BYTES: quota } = gw.config;
  if (bytes > max) {
    throw new GatewayError(
      'invalid_request',
      `With store: true this response would keep about ${bytes} bytes, over the ${max} one response may keep; send store: false, or less.`,
      {
        param: 'store',
        code: 'store_too_large',
      },
    );
  }
  const used = await storedBytes(gw.sql, userId);
  if (used + bytes > quota) {
    throw new GatewayError(
      'invalid_request',
      `Your stored responses take ${used} bytes of your ${quota}; this one would pass it. Delete some (DELETE /v1/responses/{id}), wait for them to expire, or send store: false.`,
      {
        param: 'store',
        code: 'store_quota_exceeded',
      },
    );
  }
}

/** A read of stored state is unbilled: the key's share admits it, its size counted before it is read. */
async function admittedRead<T>(
  gw: Parameters<SurfaceState['resume']>[0],
  keyId: string,
  read: (admitted: Admitted) => Promise<T>,
): Promise<T> {
  const admitted = await gw.admission.enter(keyId, 0);
  try {
    return await read(admitted);
  } finally {
    admitted.leave();
  }
}

export const responsesState: SurfaceState = {
  async resume(gw, userId, body, bodyBytes): Promise<ResponsesConversation> {
    const echo: Body = {};
    for (const k of ECHOED) if (body[k] !== undefined) echo[k] = body[k];
    const store = body.store !== false;
    const own = inputItems(body.input);
    const prevId = body.previous_response_id;
    if (typeof prevId !== 'string' || prevId === '') {
      if (store) await checkStorable(gw, userId, bodyBytes);
      return { body, forProvider: () => undefined, echo, store, input: own };
    }
    const prev = await loadResponse(gw.sql, userId, responseId(prevId, 'previous_response_id'));
    if (!prev) throw notFound('Previous response', prevId, 'previous_response_id');
    if (store) await checkStorable(gw, userId, bodyBytes + (prev.bytes ?? 0));
    const { previous_response_id: _named, ...rest } = body;
    const input = [...history(prev), ...own];
    return {
      body: { ...rest, input },
      forProvider: (providerId) => (prev.upstreamStored && prev.provider === providerId ? body : undefined),
      echo,
      store,
      input,
    };
  },

  async keep(gw, userId, conversation, answer, route, sameDialect) {
    const c = conversation as ResponsesConversation;
    if (!c.store || typeof answer.id !== 'string') return;
    const kept = await saveResponse(
      gw.sql,
      {
        id: answer.id,
        userId,
        model: typeof answer.model === 'string' ? answer.model : '',
        provider: route.provider.id,
        // The client's own request went to a Responses upstream, which keeps answers unless told not to.
        upstreamStored: sameDialect,
        input: c.input,
        response: answer,
      },
      gw.config.RESPONSES_TTL_DAYS,
      gw.config.RESPONSES_STORE_MAX_BYTES,
    );
    if (!kept)
      gw.log.info(
        { id: answer.id },
        `response not kept: larger than RESPONSES_STORE_MAX_BYTES (${gw.config.RESPONSES_STORE_MAX_BYTES})`,
      );
  },

  register(router, gw, { route, authenticate, readJson, onError }) {
    /** One of the key's stored answers, part by part: its size counted against the key's share before it is read. */
    const readStored = async <T>(
      ex: Parameters<typeof authenticate>[0],
      part: 'response' | 'input',
      load: (userId: string, id: string) => Promise<T | undefined>,
    ): Promise<T> => {
      const { userId, keyId } = await authenticate(ex);
      const id = responseId(ex.params[0], 'response_id');
      const found = await admittedRead(gw, keyId, async (admitted) => {
        const bytes = await storedSize(gw.sql, userId, id, part);
        if (bytes === undefined) return undefined;
        await admitted.take(bytes);
        return load(userId, id);
      });
      if (found === undefined) throw notFound('Response', id);
      return found;
    };
    // The WebSocket mode (./websocket.ts) takes the upgrades; a plain GET here lists nothing.
    registerResponsesWebSocket(router, gw, { route, authenticate, onError });
    registerCompact(router, { route, readJson }, onError);
    router.add({
      method: 'get',
      path: '/v1/responses',
      name: 'responses_list',
      onError,
      handler: async () => {
        throw new GatewayError(
          'not_found',
          'GET /v1/responses lists nothing: GET /v1/responses/{id} reads one stored response, and a WebSocket upgrade here opens the WebSocket mode.',
          { code: 'unknown_url' },
        );
      },
    });
    router.add({
      method: 'get',
      path: '/v1/responses/:id',
      name: 'response_get',
      onError,
      handler: async (ex) =>
        ex.send(200, await readStored(ex, 'response', (userId, id) => responseText(gw.sql, userId, id)), {
          'content-type': 'application/json',
        }),
    });
    router.add({
      method: 'get',
      path: '/v1/responses/:id/input_items',
      name: 'response_input_items',
      onError,
      handler: async (ex) => {
        const stored = await readStored(ex, 'input', (userId, id) => loadResponse(gw.sql, userId, id));
        const items = listedInput(stored);
        // The API lists newest first unless asked otherwise.
        const data = ex.query.get('order') === 'asc' ? items : [...items].reverse();
        ex.json(200, {
          object: 'list',
          data,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
          has_more: false,
        });
      },
    });
    router.add({
      method: 'delete',
      path: '/v1/responses/:id',
      name: 'response_delete',
      onError,
      handler: async (ex) => {
        const identity = await authenticate(ex);
        const id = responseId(ex.params[0], 'response_id');
        const deleted = await admittedRead(gw, identity.keyId, () => deleteResponse(gw.sql, identity.userId, id));
        if (!deleted) throw notFound('Response', id);
        ex.json(200, { id, object: 'response', deleted: true });
      },
    });
  },
};
