import { GatewayError } from '../errors.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import type { RouteDef, Router } from '../server/router.js';
import { handleCountTokens } from './count-tokens.js';
import { EMBEDDINGS, handleEmbeddings } from './embeddings.js';
import { decodeSegment } from '../wire.js';
import { handleInference } from './handle.js';
import { authenticate, authenticatedJson } from './pipeline.js';
import { modelsJson } from './models.js';
import { CHAT, MESSAGES, SURFACES, type Surface } from './surfaces.js';

/** GET /v1/models accepts either surface's way of sending the key. */
const eitherKey: Surface = { ...CHAT, key: MESSAGES.key };

/** A surface whose URL names the call (Gemini's `models/{model}:{method}`): an answer or a count. */
function byUrl(gw: Gateway, surface: Surface, readCall: NonNullable<Surface['call']>) {
  return (ex: Exchange) => {
    const call = readCall(ex);
    return call.method === 'count_tokens'
      ? handleCountTokens(gw, ex, surface, call)
      : handleInference(gw, ex, surface, call);
  };
}

export function registerInference(router: Router, gw: Gateway): void {
  for (const surface of SURFACES) {
    const handler = surface.call
      ? byUrl(gw, surface, surface.call)
      : (ex: Exchange) => handleInference(gw, ex, surface);
    const route: RouteDef = {
      method: 'post',
      path: surface.path,
      name: surface.name,
      onError: surface.renderError,
      handler,
    };
    for (const path of [surface.path, ...(surface.paths ?? [])]) router.add({ ...route, path });
    surface.state?.register(router, gw, {
      route,
      authenticate: (ex) => authenticate(gw, ex, surface),
      readJson: (ex) => authenticatedJson(gw, ex, surface, async () => {}),
      onError: surface.renderError,
    });
    if (surface.models) registerSurfaceModels(router, gw, surface, surface.models);
  }
  router.add({
    method: 'post',
    path: EMBEDDINGS.path,
    name: EMBEDDINGS.name,
    onError: EMBEDDINGS.renderError,
    handler: (ex) => handleEmbeddings(gw, ex),
  });
  router.add({
    method: 'post',
    path: '/v1/messages/count_tokens',
    name: 'count_tokens',
    onError: MESSAGES.renderError,
    handler: (ex) => handleCountTokens(gw, ex),
  });

  /** A surface with its own list whose client this is (Gemini's SDK lists at /v1/models). */
  const own = (ex: Exchange) => SURFACES.find((s) => s.models?.asks(ex));
  const onModelsError = (ex: Exchange, err: GatewayError) =>
    (own(ex) ?? (ex.headers['anthropic-version'] ? MESSAGES : CHAT)).renderError(ex, err);
  router.add({
    method: 'get',
    path: '/v1/models',
    name: 'models',
    onError: onModelsError,
    handler: async (ex) => {
      const surface = own(ex);
      if (surface) return surfaceList(gw, ex, surface);
      await authenticate(gw, ex, eitherKey);
      ex.send(200, modelsJson(gw.catalogue.current).list, { 'content-type': 'application/json' });
    },
  });
  router.add({
    method: 'get',
    path: '/v1/models/:id',
    name: 'model',
    onError: onModelsError,
    handler: async (ex) => {
      const surface = own(ex);
      if (surface) return surfaceModel(gw, ex, surface, ex.params[0]!);
      await authenticate(gw, ex, eitherKey);
      const one = modelsJson(gw.catalogue.current).byId.get(ex.params[0]);
      if (!one)
        throw new GatewayError('not_found', `The model "${ex.params[0]}" does not exist.`, { code: 'model_not_found' });
      ex.send(200, one, { 'content-type': 'application/json' });
    },
  });
  for (const surface of SURFACES) {
    if (!surface.models || surface.models.path.startsWith('/v1/')) continue;
    // The rest of the surface's own prefix (`/v1beta/…`) answers 404 in its envelope.
    const prefix = surface.models.path.slice(0, surface.models.path.indexOf('/', 1));
    router.add({
      method: 'any',
      path: `${prefix}/*`,
      name: `${surface.name}_unknown`,
      onError: surface.renderError,
      handler: unknownUrl,
    });
  }
  router.add({ method: 'any', path: '/v1/*', name: 'v1_unknown', onError: CHAT.renderError, handler: unknownUrl });
}

function unknownUrl(ex: Exchange): never {
  throw new GatewayError('not_found', `No such endpoint: ${ex.method} ${ex.path}.`, { code: 'unknown_url' });
}

/** A surface's own catalogue list and entries (Gemini's `GET /v1beta/models`, `…/models/{model}`). */
function registerSurfaceModels(
  router: Router,
  gw: Gateway,
  surface: Surface,
  models: NonNullable<Surface['models']>,
): void {
  router.add({
    method: 'get',
    path: models.path,
    name: `${surface.name}_models`,
    onError: surface.renderError,
    handler: (ex) => surfaceList(gw, ex, surface),
  });
  router.add({
    method: 'get',
    path: `${models.path}/*`,
    name: `${surface.name}_model`,
    onError: surface.renderError,
    handler: (ex) => surfaceModel(gw, ex, surface, decodeSegment(ex.path.slice(models.path.length + 1))),
  });
}

async function surfaceList(gw: Gateway, ex: Exchange, surface: Surface): Promise<void> {
  await authenticate(gw, ex, surface);
  ex.json(200, surface.models!.list(gw.catalogue.current.list, ex.query), {
    'content-type': 'application/json',
    ...surface.answerHeaders(ex.requestId),
  });
}

async function surfaceModel(gw: Gateway, ex: Exchange, surface: Surface, name: string): Promise<void> {
  await authenticate(gw, ex, surface);
  const id = name.replace(/^models\//, '');
  const model = gw.catalogue.current.models.get(id);
  if (!model)
    throw new GatewayError(
      'not_found',
      `The model "${id}" does not exist. GET ${surface.models!.path} lists the available models.`,
      { code: 'model_not_found' },
    );
  ex.json(200, surface.models!.one(model), {
    'content-type': 'application/json',
    ...surface.answerHeaders(ex.requestId),
  });
}
