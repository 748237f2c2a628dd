import { GatewayError } from '../errors.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import type { Router } from '../server/router.js';
import { handleCountTokens } from './count-tokens.js';
import { EMBEDDINGS, handleEmbeddings } from './embeddings.js';
import { authenticate, handleInference } from './handle.js';
import { modelsJson } from './models.js';
import { CHAT, MESSAGES, SURFACES, type Surface } from './surfaces.js';

/** GET /v1/models accepts either surface's way of sending the key. */
const eitherKey: Surface = { ...CHAT, key: MESSAGES.key };

export function registerInference(router: Router, gw: Gateway): void {
  for (const surface of SURFACES) {
    router.add({ method: 'post', path: surface.path, name: surface.name, onError: surface.renderError, handler: (ex) => handleInference(gw, ex, surface) });
    surface.state?.register(router, gw, { authenticate: (ex) => authenticate(gw, ex, surface), onError: surface.renderError });
  }
  router.add({ method: 'post', path: EMBEDDINGS.path, name: EMBEDDINGS.name, onError: EMBEDDINGS.renderError, handler: (ex) => handleEmbeddings(gw, ex) });
  router.add({ method: 'post', path: '/v1/messages/count_tokens', name: 'count_tokens', onError: MESSAGES.renderError, handler: (ex) => handleCountTokens(gw, ex) });

  const onModelsError = (ex: Exchange, err: GatewayError) => (ex.headers['anthropic-version'] ? MESSAGES : CHAT).renderError(ex, err);
  router.add({
    method: 'get', path: '/v1/models', name: 'models', onError: onModelsError,
    handler: async (ex) => {
      await authenticate(gw, ex, eitherKey);
      ex.send(200, modelsJson(gw.catalogue.current).list, { 'content-type': 'application/json' });
    },
  });
  router.add({
    method: 'get', path: '/v1/models/:id', name: 'model', onError: onModelsError,
    handler: async (ex) => {
      await authenticate(gw, ex, eitherKey);
      const one = modelsJson(gw.catalogue.current).byId.get(ex.params[0]);
      if (!one) throw new GatewayError('not_found', `The model "${ex.params[0]}" does not exist.`, { code: 'model_not_found' });
      ex.send(200, one, { 'content-type': 'application/json' });
    },
  });
  router.add({
    method: 'any', path: '/v1/*', name: 'v1_unknown', onError: CHAT.renderError,
    handler: (ex) => {
      throw new GatewayError('not_found', `No such endpoint: ${ex.method} ${ex.path}.`, { code: 'unknown_url' });
    },
  });
}
