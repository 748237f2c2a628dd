// What a surface with server-side conversation state (the Responses API's `store` and
// `previous_response_id`) adds to the request path: before parsing, the body the request
// really stands for (its history spliced in); after the answer, and before its last byte, the
// answer kept. Other surfaces have none, and the request path does nothing extra for them.

import type { KeyIdentity } from '../accounts/keys.js';
import type { Route } from '../catalogue/index.js';
import type { GatewayError } from '../errors.js';
import type { Exchange } from '../server/exchange.js';
import type { RouteDef, Router } from '../server/router.js';
import type { Gateway } from '../services.js';

type Body = Record<string, unknown>;

export interface Conversation {
  /** What the IR, the hold and translated routes see: the client's body, its history spliced in. */
  body: Body;
  /**
   * The body for a route that speaks the client's dialect, when that provider keeps the history
   * itself (the client's own, naming it); undefined: send `body`.
   */
  forProvider(providerId: string): Body | undefined;
  /** Request fields the answer repeats. */
  echo: Record<string, unknown>;
  /** The client asked for the answer to be kept. */
  store: boolean;
}

export interface SurfaceState {
  /**
   * 404 when the history named is unknown, gone or another user's; 400 when what the answer
   * would keep is past what may be kept. `bodyBytes`: the client's body as it came.
   */
  resume(gw: Gateway, userId: string, body: Body, bodyBytes: number): Promise<Conversation>;
  /** The answer as the client got it, kept before its last byte leaves. */
  keep(
    gw: Gateway,
    userId: string,
    conversation: Conversation,
    answer: Body,
    route: Route,
    sameDialect: boolean,
  ): Promise<void>;
  /**
   * The surface's other endpoints (reading and deleting what was kept, another transport,
   * compaction), with its key, its errors, and its own POST route (`route`).
   */
  register(
    router: Router,
    gw: Gateway,
    surface: {
      route: RouteDef;
      authenticate(ex: Exchange): Promise<KeyIdentity>;
      /** The key checked (before the body is read), then the body's JSON, checked for depth and size. */
      readJson(ex: Exchange): Promise<{ identity: KeyIdentity; body: unknown }>;
      onError(ex: Exchange, err: GatewayError): void;
    },
  ): void;
}
