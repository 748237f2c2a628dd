// The Responses surface's server-side state (docs/api.md, "Responses"): `store` (default true)
// keeps each answer, `previous_response_id` continues from one on any model and any upstream
// dialect, and GET / DELETE /v1/responses/{id} read and remove what was kept.
//
// A continuation is the stored input and output replayed before the new input, so every
// upstream, stateless or not, sees the whole conversation; the hold covers all of it. A
// Responses upstream that answered the previous turn and kept it itself gets the client's own
// request instead, naming the turn, so that its cached state (and hidden reasoning) is used.

import { GatewayError } from '../errors.js';
import type { Conversation, SurfaceState } from '../inference/state.js';
import { deleteResponse, history, inputItems, listedInput, loadResponse, saveResponse } from './store.js';

type Body = Record<string, unknown>;

interface ResponsesConversation extends Conversation {
  /** Every input item the answer sees, history included: what is stored with it. */
  input: Body[];
}

/** Request fields a response object repeats. */
const ECHOED = ['instructions', 'max_output_tokens', 'metadata', 'parallel_tool_calls', 'previous_response_id', 'reasoning', 'store', 'temperature', 'text', 'tool_choice', 'tools', 'top_p', 'truncation', 'user'];

const notFound = (what: string, id: string, param?: string) =>
  new GatewayError('not_found', `${what} with id '${id}' not found.`, { code: 'not_found', ...(param ? { param } : {}) });

export const responsesState: SurfaceState = {
  async resume(gw, userId, body): Promise<ResponsesConversation> {
    const echo: Body = {};
    for (const k of ECHOED) if (body[k] !== undefined) echo[k] = body[k];
    const store = body.store !== false;
    const own = inputItems(body.input);
    const prevId = body.previous_response_id;
    if (typeof prevId !== 'string' || prevId === '') return { body, forProvider: () => undefined, echo, store, input: own };
    const prev = await loadResponse(gw.sql, userId, prevId);
    if (!prev) throw notFound('Previous response', prevId, 'previous_response_id');
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
    await saveResponse(gw.sql, {
      id: answer.id,
      userId,
      model: typeof answer.model === 'string' ? answer.model : '',
      provider: route.provider.id,
      // The client's own request went to a Responses upstream, which keeps answers unless told not to.
      upstreamStored: sameDialect,
      input: c.input,
      response: answer,
    }, gw.config.RESPONSES_TTL_DAYS);
  },

  register(router, gw, { authenticate, onError }) {
    const owned = async (ex: Parameters<typeof authenticate>[0]) => {
      const identity = await authenticate(ex);
      const stored = await loadResponse(gw.sql, identity.userId, ex.params[0]!);
      if (!stored) throw notFound('Response', ex.params[0]!);
      return stored;
    };
    router.add({
      method: 'get', path: '/v1/responses/:id', name: 'response_get', onError,
      handler: async (ex) => ex.json(200, (await owned(ex)).response),
    });
    router.add({
      method: 'get', path: '/v1/responses/:id/input_items', name: 'response_input_items', onError,
      handler: async (ex) => {
        const items = listedInput(await owned(ex));
        // The API lists newest first unless asked otherwise.
        const data = ex.query.get('order') === 'asc' ? items : [...items].reverse();
        ex.json(200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false });
      },
    });
    router.add({
      method: 'delete', path: '/v1/responses/:id', name: 'response_delete', onError,
      handler: async (ex) => {
        const identity = await authenticate(ex);
        if (!(await deleteResponse(gw.sql, identity.userId, ex.params[0]!))) throw notFound('Response', ex.params[0]!);
        ex.json(200, { id: ex.params[0], object: 'response', deleted: true });
      },
    });
  },
};
