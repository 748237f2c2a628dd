// The Responses API's WebSocket mode (docs/api.md, "Responses over a WebSocket"), as Codex
// speaks it: `GET /v1/responses` upgraded, then per turn a `response.create` message carrying
// the body of POST /v1/responses at its top level, answered by the same events as the SSE
// stream, one text message each. Every turn runs the POST route itself (Router.serve through
// ../server/inner-request.ts): the key, its share, the hold, the charge and the record are
// the HTTP path's.
//
// What the socket adds is memory: the connection keeps its last answer (input and output), so
// that a turn naming it in `previous_response_id` continues it even with `store: false`, as
// Codex's turns do (it then sends only the new items). `generate: false` is a warm-up: an
// empty response, completed at once, nothing sent upstream and nothing charged, whose id the
// next turn continues.

import { GatewayError } from '../errors.js';
import type { KeyIdentity } from '../accounts/keys.js';
import { Exchange } from '../server/exchange.js';
import type { RouteDef, Router } from '../server/router.js';
import { carriedHeaders, innerRequest, type InnerRequest } from '../server/inner-request.js';
import type { WebSocket } from '../server/uws.js';
import type { Gateway } from '../services.js';
import { randomBase62 } from '../wire.js';
import { history, inputItems } from './store.js';

type Body = Record<string, unknown>;

/** One connection's state (uWS's user data): who it is, and its last answer. */
interface Connection {
  headers: Record<string, string>;
  identity: KeyIdentity;
  /** The turn in progress: one at a time, as the API serves them. */
  turn?: InnerRequest;
  /** The last answer, for the next turn's previous_response_id. */
  last?: { id: string; input: Body[]; response: Body };
  closed: boolean;
}

/** Longest a connection lasts (OpenAI's WebSocket mode closes its sockets after 60 minutes). */
const MAX_LIFETIME_MINUTES = 60;
/** Seconds without a message or a pong before the connection is dropped; uWS pings before then. */
const IDLE_TIMEOUT_S = 120;

const errorMessage = (status: number, error: unknown, headers: Record<string, string> = {}) =>
  JSON.stringify({ type: 'error', status, error, ...(Object.keys(headers).length ? { headers } : {}) });

const clientError = (message: string, code: string, param?: string) => ({
  type: 'invalid_request_error',
  code,
  message,
  param: param ?? null,
});

export interface ResponsesSocket {
  /** The POST /v1/responses route every turn runs. */
  route: RouteDef;
  authenticate(ex: Exchange): Promise<KeyIdentity>;
  onError(ex: Exchange, err: GatewayError): void;
}

export function registerResponsesWebSocket(
  router: Router,
  gw: Gateway,
  { route, authenticate, onError }: ResponsesSocket,
): void {
  router.socket<Connection>('/v1/responses', {
    maxPayloadLength: gw.config.MAX_BODY_BYTES,
    idleTimeout: IDLE_TIMEOUT_S,
    sendPingsAutomatically: true,
    maxLifetime: MAX_LIFETIME_MINUTES,
    // A turn's writer stops at the first send that could not go out at once (backpressure, as
    // HTTP's), so little is ever buffered past this; nothing is dropped below it.
    maxBackpressure: 64 * 1024 * 1024,
    closeOnBackpressureLimit: true,

    upgrade(res, req, context) {
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      // The key is checked before the upgrade, so a bad one is an HTTP 401 in the Responses
      // envelope, which the client reports as such instead of retrying a broken socket.
      const ex = new Exchange(res, req, 0);
      const headers = carriedHeaders(ex.headers);
      authenticate(ex).then(
        (identity) => {
          if (ex.aborted) return;
          res.cork(() =>
            res.upgrade<Connection>({ headers, identity, closed: false }, key, protocol, extensions, context),
          );
          // Counted here, with no `open` handler: uWS runs `open` inside the upgrade, and with
          // these two calls there the first socket of a process was dropped (1006) right after
          // its 101 in four runs of five (test/clients/replay-websocket.test.ts hung in CI).
          gw.metrics.sockets.inc();
          gw.metrics.socketsOpened.inc();
        },
        (err: unknown) => {
          if (!ex.aborted)
            onError(
              ex,
              err instanceof GatewayError
                ? err
                : new GatewayError('upstream', 'Internal error while handling the request.'),
            );
        },
      );
    },

    message(ws, message, isBinary) {
      const conn = ws.getUserData();
      // The message's memory is uWS's only until this returns.
      const raw = Buffer.from(new Uint8Array(message));
      if (isBinary)
        return void send(
          ws,
          errorMessage(400, clientError('Messages are JSON text; a binary message is not one.', 'invalid_message')),
        );
      let msg: unknown;
      try {
        msg = JSON.parse(raw.toString('utf8'));
      } catch {
        return void send(ws, errorMessage(400, clientError('The message is not valid JSON.', 'invalid_json')));
      }
      if (msg === null || typeof msg !== 'object' || Array.isArray(msg))
        return void send(
          ws,
          errorMessage(400, clientError('A message is a JSON object with a "type".', 'invalid_message')),
        );
      const { type, ...body } = msg as Body;
      // Sent by some Codex builds after a turn, for the server's bookkeeping: nothing to do here.
      if (type === 'response.processed') return;
      if (type !== 'response.create') {
        return void send(
          ws,
          errorMessage(
            400,
            clientError(
              `Unknown message type ${JSON.stringify(type)}: this socket takes "response.create".`,
              'unknown_message_type',
              'type',
            ),
          ),
        );
      }
      if (conn.turn) {
        return void send(
          ws,
          errorMessage(
            400,
            clientError(
              'A response is already in progress on this connection: send the next response.create after its response.completed.',
              'response_in_progress',
            ),
          ),
        );
      }
      startTurn(ws, conn, body);
    },

    drain(ws) {
      ws.getUserData().turn?.drained();
    },

    close(ws) {
      gw.metrics.sockets.dec();
      const conn = ws.getUserData();
      conn.closed = true;
      conn.turn?.abort();
      conn.turn = undefined;
      conn.last = undefined;
    },
  });

  function send(ws: WebSocket<Connection>, text: string): boolean {
    if (ws.getUserData().closed) return true;
    // 1: sent; 0: buffered behind backpressure (wait for drain); 2: dropped (the socket closes).
    return ws.send(text, false) === 1;
  }

  function startTurn(ws: WebSocket<Connection>, conn: Connection, body: Body): void {
    const generate = body.generate;
    delete body.generate;
    // The events are the stream's whatever the message says (Codex sends stream: true).
    body.stream = true;
    const continued = conn.last && body.previous_response_id === conn.last.id ? conn.last : undefined;
    if (continued) {
      // This connection's own last answer, kept here even when it was not stored.
      body.input = [
        ...history({ input: continued.input, response: continued.response } as Parameters<typeof history>[0]),
        ...inputItems(body.input),
      ];
      delete body.previous_response_id;
    }
    const input = inputItems(body.input);
    if (generate === false) return warmUp(ws, conn, body, input);

    let answer: Body | undefined;
    const turn = innerRequest(
      {
        send: (text) => {
          // The last event carries the whole answer: kept for the next turn. A Responses
          // provider's events pass as it wrote them, in whatever key order and spacing.
          if (text.includes('"response.completed"') || text.includes('"response.incomplete"')) {
            const event = JSON.parse(text) as { type?: string; response?: Body };
            if (event.type === 'response.completed' || event.type === 'response.incomplete') answer = event.response;
          }
          return send(ws, text);
        },
        answered: (status, headers, text) => {
          let error: unknown;
          try {
            error = (JSON.parse(text) as { error?: unknown }).error;
          } catch {
            error = { type: 'api_error', message: text };
          }
          const carried: Record<string, string> = {};
          for (const h of ['retry-after', 'x-should-retry']) if (headers[h] !== undefined) carried[h] = headers[h]!;
          send(ws, errorMessage(status, error, carried));
        },
        ended: () => {
          conn.turn = undefined;
          conn.last = answer && typeof answer.id === 'string' ? { id: answer.id, input, response: answer } : undefined;
        },
        close: () => {
          if (!conn.closed) ws.end(1011, 'The response could not be completed.');
        },
        cork: (cb) => (conn.closed ? cb() : void ws.cork(cb)),
        remoteAddress: () => ws.getRemoteAddressAsText(),
      },
      'POST',
      route.path,
      conn.headers,
      Buffer.from(JSON.stringify(body)),
    );
    conn.turn = turn;
    router.serve(route, turn.res, turn.req);
  }

  /** `generate: false`: a completed empty response, without an upstream call or a charge. */
  function warmUp(ws: WebSocket<Connection>, conn: Connection, body: Body, input: Body[]): void {
    if (typeof body.model !== 'string' || !gw.catalogue.current.models.has(body.model)) {
      const message = `The model ${JSON.stringify(body.model)} does not exist. GET /v1/models lists the available models.`;
      return void send(
        ws,
        errorMessage(404, { type: 'invalid_request_error', code: 'model_not_found', message, param: 'model' }),
      );
    }
    const response: Body = {
      id: `resp_${randomBase62(40)}`,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'completed',
      model: body.model,
      output: [],
      usage: {
        input_tokens: 0,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 0,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 0,
      },
    };
    ws.cork(() => {
      send(
        ws,
        JSON.stringify({
          type: 'response.created',
          response: { ...response, status: 'in_progress', usage: null },
          sequence_number: 0,
        }),
      );
      send(ws, JSON.stringify({ type: 'response.completed', response, sequence_number: 1 }));
    });
    conn.last = { id: response.id as string, input, response };
  }
}
