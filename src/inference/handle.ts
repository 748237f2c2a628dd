// One inference request of a chat surface, end to end (docs/architecture.md, "One request"):
// the shared stages (./pipeline.ts: auth, balance, body, catalogue, reserve), then this
// surface's own: validate → terms (prices, caps, paid options, hold) → upstream (with fallback,
// through the pool) → answer or stream (pass-through or translated) → settle (charge and usage
// record) → final bytes.

import { countTextTokens } from '../billing/tokens.js';
import { forwardedTokens, sizeOf } from '../billing/prompt-size.js';
import type { Route } from '../catalogue/index.js';
import type { Dialect, DialectLimits, SurfaceCall } from '../dialects/dialect.js';
import { DIALECTS } from '../dialects/index.js';
import { ZERO_USAGE, type IRRequest, type IRUsage } from '../dialects/ir.js';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import { TextLane } from '../stream/text-lane.js';
import { upstreamEvents, Valve } from '../stream/valve.js';
import { streamToClient, type StreamOutcome } from '../stream/to-client.js';
import { passThroughToClient } from '../stream/pass-through.js';
import { Cancel } from '../upstream/cancel.js';
import { BodyTooLargeError, type UpstreamBody } from '../upstream/client.js';
import type { Answer, UpstreamCall } from '../upstream/router.js';
import { addProviderHeaders } from '../upstream/provider-keys.js';
import { errorMessageOf, modelUnavailable } from '../upstream/router.js';
import { billed, findModelOfKind, fundedJson, reserveHold } from './pipeline.js';
import { meterIR, StreamMeter } from './meter.js';
import type { RequestLine } from './request-log.js';
import { AnswerContext, keepAnswer, passesThrough, settleBeforeAnswer, usageRecord, type Job } from './job.js';
import type { Surface } from './surfaces.js';
import { requestTerms, type Terms } from './terms.js';

const MAX_UPSTREAM_BODY = 64 * 1024 * 1024;

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/** The upstream request for one route: pass-through when dialects match, translated otherwise. */
function upstreamCall(
  route: Route,
  key: string | undefined,
  surface: Surface,
  ir: IRRequest,
  clientBody: Record<string, unknown>,
  terms: Terms,
  query: string,
  limits: DialectLimits,
): UpstreamCall {
  const provider = route.provider;
  const dialect = DIALECTS[provider.dialect];
  const same = dialect === surface.dialect && ir.compaction !== true;
  let body: Record<string, unknown>;
  let url = dialect.upstream.endpoint(provider.baseUrl, { model: route.model, stream: ir.stream });
  if (same) {
    // The query string too (Claude Code's `?beta=true`): it is the vendor's to read.
    if (query !== '') url += (url.includes('?') ? '&' : '?') + query;
    // Same dialect: every field the client sent reaches the upstream untouched, bar the model
    // and the output cap, which is exactly the one reserved for.
    body = { ...clientBody, model: route.model };
  } else {
    if (ir.sameDialectOnly) throw untranslatable(ir);
    const reasoningEffort = route.reasoning ? ir.reasoningEffort : undefined;
    // Not `{ ...ir, maxTokens, … }`: see settingsOnly.
    body = dialect.buildRequest(Object.assign({}, ir, { maxTokens: terms.outputCap, reasoningEffort }), route.model);
  }
  // Both paths: the cap reserved for, in the field this provider honours.
  dialect.upstream.setOutputCap(body, terms.outputCap, provider, route.model);
  if (same) dialect.upstream.prepareForward?.(body, ir);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: ir.stream ? 'text/event-stream' : 'application/json',
    // The client's own headers (Anthropic's version and betas) only reach its own dialect.
    ...dialect.upstream.headers(key, same ? terms.forwardHeaders : undefined, limits),
  };
  addProviderHeaders(headers, provider);
  return { url, headers, body: JSON.stringify(body) };
}

const untranslatable = ({ sameDialectOnly: f }: IRRequest) =>
  new GatewayError('invalid_request', f!.message, { param: f!.param, code: 'unsupported_option' });

/** An upstream's own 4xx answer (after fallback was ruled out) as the client's error. */
export function clientErrorFromUpstream(status: number, text: string): GatewayError {
  const detail = errorMessageOf(text);
  if (status === 413)
    return new GatewayError('too_large', detail ?? 'The request is too large for the upstream.', {
      code: 'request_too_large',
    });
  if (status === 400 || status === 422)
    return new GatewayError('invalid_request', detail ?? 'The upstream rejected the request as invalid.');
  if (status === 402)
    return new GatewayError('upstream', 'The upstream account behind this model cannot serve requests right now.');
  return new GatewayError(
    'upstream',
    detail ? `The upstream refused the request: ${detail}` : `The upstream refused the request (status ${status}).`,
  );
}

// The request's parts live on `job`, not in this function's locals: a suspended async function
// keeps every local it had, dead or not, and a stream suspends here for minutes.
export function handleInference(gw: Gateway, ex: Exchange, surface: Surface, call?: SurfaceCall): Promise<void> {
  // The answer goes straight to `respond`, so that no async frame holds it (and with it the
  // upstream's headers) for as long as a stream lasts.
  return billed(
    gw,
    ex,
    surface.name,
    (line) => admit(gw, ex, surface, line, call),
    (job) => sendUpstream(job).then((answer) => answer && respond(job, answer)),
  );
}

/** The upstream's answer, whole or streamed, to the client; its error status as the client's error. */
function respond(job: Job, { route, response, key }: Answer): Promise<void> {
  if (response.status >= 400) {
    return response.body
      .text()
      .catch(() => '')
      .then((text) => {
        // Gemini refuses a bad key with a 400: the gateway's credentials, not the client's request.
        if (DIALECTS[route.provider.dialect].upstream.refusedCredentials?.(response.status, text)) {
          job.gw.routes.keyRefused(route, response.status, key, true);
          throw modelUnavailable(job.model.id);
        }
        throw clientErrorFromUpstream(response.status, text);
      });
  }
  job.route = route;
  job.line.route = route.key;
  const upstreamDialect = DIALECTS[route.provider.dialect];
  const contentType = String(response.headers['content-type'] ?? '');
  if (job.ir.stream && contentType.includes('text/event-stream'))
    return streamAnswer(job, upstreamDialect, response.body);
  return wholeAnswer(job, upstreamDialect, response.body);
}

/** Key, balance, body, model and terms checked; the hold reserved. */
async function admit(
  gw: Gateway,
  ex: Exchange,
  surface: Surface,
  line: RequestLine,
  call: SurfaceCall | undefined,
): Promise<Job> {
  const read = await fundedJson(gw, ex, surface, line);
  const { identity } = read;
  let { body, size } = read;
  // A continuation stands for its whole history: that is what is parsed, held for and sent.
  const conversation =
    surface.state && isObject(body) ? await surface.state.resume(gw, identity.userId, body, size.bytes) : undefined;
  if (conversation && conversation.body !== body)
    ({ body, size } = { body: conversation.body, size: sizeOf(conversation.body) });
  const ir = surface.dialect.parseRequest(body, call);
  line.model = ir.model;
  line.stream = ir.stream;
  const model = findModelOfKind(gw, ir.model, 'chat');
  if (ir.sameDialectOnly && !model.routes.some((r) => DIALECTS[r.provider.dialect] === surface.dialect))
    throw untranslatable(ir);
  const terms = requestTerms(surface, body as Record<string, unknown>, size, model, ex.headers, gw.config);
  const reservation = await reserveHold(gw, identity, terms.hold);
  const job: Job = {
    gw,
    ex,
    surface,
    identity,
    model,
    ir,
    terms,
    reservation,
    sent: false,
    conversation,
    line,
    body: body as Record<string, unknown>,
    ctx: new AnswerContext(model.id, ir.includeUsage, ex.requestId, surface, call),
  };
  if (ir.compaction) (job.ctx as AnswerContext).compaction = true;
  if (conversation) {
    const ctx = job.ctx as AnswerContext;
    ctx.echo = conversation.echo;
    ctx.clientTools = new Map((ir.tools ?? []).map((t) => [t.name, t]));
    ctx.onFinal = (answer) => (job.final = answer);
  }
  return job;
}

/**
 * The model's routes, tried in turn; undefined when the client left before an answer and that
 * was billed. A stream the client left meanwhile is stopped (what it produced is billed); a
 * whole answer is read to its end all the same, since the upstream bills it anyway, and billed
 * as usage says. The cancel lives only as long as this call.
 */
async function sendUpstream(job: Job) {
  const { ex } = job;
  const cancel = job.ir.stream ? new Cancel() : undefined;
  const forgetAbort = cancel ? ex.onAbort(() => cancel.cancel()) : undefined;
  const build = (r: Route, key: string | undefined) => {
    job.sent = true;
    const same = passesThrough(job, DIALECTS[r.provider.dialect]);
    offerHostedTools(job, same);
    // A provider that kept the previous turn itself is sent the client's own request, naming it.
    const own = same ? job.conversation?.forProvider(r.provider.id) : undefined;
    // A surface whose URL says what the call is names the query to forward (never its key).
    const query = job.ctx.call ? job.ctx.call.query : ex.rawQuery;
    const call = upstreamCall(r, key, job.surface, job.ir, own ?? job.body!, job.terms, query, job.gw.config);
    job.forwarded = {
      body: call.body,
      dialect: DIALECTS[r.provider.dialect],
      maxImageTokens: job.model.maxImageTokens,
    };
    return call;
  };
  try {
    return await job.gw.routes.forward(job.model, build, cancel);
  } catch (err) {
    if (ex.aborted && job.sent) {
      await settleBeforeAnswer(job, { ...ZERO_USAGE, input: await forwardedTokens(job.forwarded!) }, 499);
      return undefined;
    }
    throw err;
  } finally {
    // Needed only while routes are tried: an open stream should not hold the client's body
    // (a coding agent's prompt is often hundreds of KB) for minutes.
    job.body = undefined;
    // From here on the stream writer watches for the client leaving.
    forgetAbort?.();
  }
}

/**
 * Hosted tools run only at an upstream of the surface's own dialect: a route of another one is
 * sent none (the translation has no place for them), so their fee is not charged and the answer
 * names them with those the model does not sell.
 */
function offerHostedTools(job: Job, runsThem: boolean): void {
  const { terms, line } = job;
  terms.feeNano = runsThem ? terms.hostedFee : 0n;
  line.droppedTools = runsThem || terms.hosted.length === 0 ? terms.dropped : [...terms.dropped, ...terms.hosted];
}

/** The answer's word on the hosted tools the request declared and the gateway took out (spread into its headers). */
function droppedToolsHeader(line: RequestLine): Record<string, string> | undefined {
  return line.droppedTools?.length
    ? { 'x-airouter-dropped-tools': [...new Set(line.droppedTools)].join(', ') }
    : undefined;
}

async function readUpstreamBody(body: UpstreamBody): Promise<string> {
  try {
    return await body.text(MAX_UPSTREAM_BODY);
  } catch (err) {
    throw err instanceof BodyTooLargeError ? new GatewayError('upstream', 'The upstream answer is too large.') : err;
  }
}

async function wholeAnswer(job: Job, upstreamDialect: Dialect, body: UpstreamBody): Promise<void> {
  const { ex, surface } = job;
  let text: string;
  try {
    text = await readUpstreamBody(body);
  } catch (err) {
    // The upstream had the request: its input is billed whatever became of the answer.
    if (ex.aborted)
      return settleBeforeAnswer(job, { ...ZERO_USAGE, input: await forwardedTokens(job.forwarded!) }, 499);
    throw err instanceof GatewayError
      ? err
      : new GatewayError('upstream', 'The upstream connection failed while answering.');
  }
  let json: Record<string, any>;
  try {
    json = JSON.parse(text);
  } catch {
    throw new GatewayError('upstream', 'The upstream answered with something that is not JSON.');
  }
  let usage: IRUsage | null;
  let out: string;
  if (passesThrough(job, upstreamDialect)) {
    ({ out, usage } = upstreamDialect.upstream.passThroughWhole(text, json, job.ctx));
    if (job.conversation) {
      // Kept as the client got it: naming the catalogue's model.
      if (typeof json.model === 'string') json.model = job.ctx.model;
      job.final = json;
    }
  } else {
    const answer = upstreamDialect.parseResponse(json);
    usage = answer.usage;
    out = JSON.stringify(surface.dialect.renderResponse(answer, job.ctx));
  }
  if (!usage)
    usage = { ...ZERO_USAGE, input: await forwardedTokens(job.forwarded!), output: await countTextTokens([text]) };
  await settleBeforeAnswer(job, usage, ex.aborted ? 499 : 200);
  await keepAnswer(job);
  ex.send(200, out, {
    'content-type': 'application/json',
    ...job.surface.answerHeaders(job.ex.requestId),
    ...droppedToolsHeader(job.line),
  });
}

/** One empty list for every stream's settings rather than two of their own in each. */
const NO_CONTENT = Object.freeze([]) as never[];

/**
 * The request without its content (prompts, messages, tools): what is left is a few settings.
 * Only keys the request has are overwritten: on Node 20's V8 a spread followed by a key its
 * source lacks (`{ ...ir, tools: undefined }`) gives every copy a hidden class of its own, which
 * each open stream then held and every property read of it missed in its inline cache.
 */
export function settingsOnly(ir: IRRequest): IRRequest {
  const settings = { ...ir, system: NO_CONTENT, messages: NO_CONTENT };
  if (settings.tools !== undefined) settings.tools = undefined;
  return settings;
}

/**
 * The stream's head, then its body through the writer; finishStream once the writer is done.
 * Not an async function: one suspended for as long as a stream lasts held its frame, every
 * local and the await's own objects (about 400 bytes an open stream, by heap snapshot), where a
 * reaction on the writer's promise holds two closures.
 */
function streamAnswer(job: Job, upstreamDialect: Dialect, body: UpstreamBody): Promise<void> {
  const { gw, ex, surface, ctx } = job;
  // The meter holds the request only until the upstream reports its input tokens (Anthropic's
  // message_start, at once): a coding agent's prompt is often hundreds of KB, and its stream
  // lasts minutes.
  const meter = new StreamMeter(job.forwarded!);
  job.forwarded = undefined;
  job.ir = settingsOnly(job.ir);
  const type = ctx.call?.streamType ?? 'text/event-stream; charset=utf-8';
  ex.beginStream(200, {
    'content-type': type,
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    ...job.surface.answerHeaders(job.ex.requestId),
    ...droppedToolsHeader(job.line),
  });
  ex.releaseHeaders();
  let streamed: Promise<StreamOutcome>;
  const parts = {
    ex,
    metrics: gw.metrics,
    keepAlive: surface.ping && { intervalMs: gw.config.PING_INTERVAL_MS, ping: surface.ping },
  };
  if (passesThrough(job, upstreamDialect))
    streamed = passThroughToClient(body, upstreamDialect.upstream.passThroughTap(meter, job.ir, ctx), parts);
  else {
    const valve = new Valve();
    // Plain text deltas past the Observable, while the two dialects say they may (stream/text-lane.ts).
    const lane = new TextLane(meter);
    const out = upstreamEvents(body, valve, lane).pipe(
      upstreamDialect.decodeStream(lane),
      meterIR(meter),
      surface.dialect.encodeStream(ctx, lane),
    );
    streamed = streamToClient(out, valve, parts);
  }
  // Counted once the stream is under way: a set-up that threw has nothing to take back.
  gw.metrics.activeStreams.inc();
  return streamed.then(
    (outcome) => {
      gw.metrics.activeStreams.dec();
      return finishStream(job, meter, outcome);
    },
    (err) => {
      gw.metrics.activeStreams.dec();
      throw err;
    },
  );
}

/** The streamed answer's charge, then its final events (or the error event in their place). */
async function finishStream(job: Job, meter: StreamMeter, outcome: StreamOutcome): Promise<void> {
  const { gw, ex, surface, ctx } = job;
  let status = 200;
  let failure: GatewayError | undefined;
  if (outcome.aborted) status = 499;
  else if (outcome.error !== undefined) {
    status = 502;
    gw.log.warn({ err: outcome.error, requestId: ex.requestId }, 'upstream stream failed');
    failure = new GatewayError('upstream', 'The upstream stream failed before the answer was complete.');
  } else if (meter.failed) {
    // An error reported inside the stream (already forwarded or translated to the client)
    // still ends the stream cleanly; the record must say the answer failed all the same.
    status = 502;
  }
  const ttft = outcome.firstAt === undefined ? null : Math.round(outcome.firstAt - ex.startedAt);
  const record = usageRecord(job, await meter.final(), status, ttft);
  // What was streamed is billed even if the store is down right now (retried until it lands);
  // the final event goes out only once the charge is recorded.
  const recorded = await gw.ledger.settleEventually(job.reservation, record.costNano, record);
  if (!recorded && !outcome.aborted)
    failure ??= new GatewayError(
      'unavailable',
      "The gateway could not record this answer's usage; it will be billed when the store recovers.",
    );
  if (failure) return ex.endWith([surface.dialect.errorEvent(failure, ex.requestId, ctx)]);
  if (status === 200) await keepAnswer(job, meter.answer);
  // The held events and the body's end in one send: each write of its own cost a send.
  ex.endWith(outcome.held);
}
