// IR events → a Gemini stream for the client: every chunk a whole GenerateContentResponse with
// the new parts and the usage so far (Gemini repeats it in every chunk); the last one carries
// finishReason and the full usage, and is held back by the client writer until the answer's
// charge is recorded. A tool call goes out whole, once its arguments are complete, as Gemini
// sends them. Framed as SSE or as one JSON array (framing.ts).

import { Observable, type OperatorFunction } from 'rxjs';
import { markFinal } from '../../stream/sse.js';
import type { RenderContext } from '../dialect.js';
import type { IRStopReason, IRStreamEvent, IRUsage } from '../ir.js';
import { parseToolArguments } from '../openai/shared.js';
import { errorBody } from './errors.js';
import { closeArray, frame, frameLast, isArrayStream } from './framing.js';
import { functionCallPart, stopReasonFromIR } from './response.js';
import { usageToGemini } from './usage.js';

const INDEX_0 = { index: 0 };

interface OpenCall {
  id: string;
  name: string;
  json: string;
  signature?: string;
}

export function encodeStream(ctx: RenderContext): OperatorFunction<IRStreamEvent, Buffer> {
  return (source) =>
    new Observable<Buffer>((subscriber) => {
      let done = false;
      let stopReason: IRStopReason | null = null;
      const usage: Partial<IRUsage> = {};
      const calls = new Map<number, OpenCall>();

      const addUsage = (u: Partial<IRUsage> | undefined) => {
        if (u) for (const k of Object.keys(u) as (keyof IRUsage)[]) if (typeof u[k] === 'number') usage[k] = u[k];
      };
      const chunk = (candidate: Record<string, unknown>) =>
        JSON.stringify({
          // Not `{ ...candidate, index: 0 }`: on Node 20 each such copy gets a hidden class of its own.
          candidates: [Object.assign({}, candidate, INDEX_0)],
          // Until the upstream has said anything of usage (OpenAI says it last), there is none to repeat.
          ...(usage.input !== undefined || usage.output !== undefined ? { usageMetadata: usageToGemini(usage) } : {}),
          modelVersion: ctx.model,
          responseId: ctx.id,
        });
      const send = (parts: Record<string, unknown>[]) =>
        subscriber.next(frame(ctx, chunk({ content: { parts, role: 'model' } })));

      const handle = (e: IRStreamEvent) => {
        switch (e.type) {
          case 'start':
            addUsage(e.usage ? { ...e.usage, output: undefined } : undefined);
            return;
          case 'block_start':
            if (e.block.type === 'tool_use')
              calls.set(e.index, { id: e.block.id, name: e.block.name, json: '', signature: e.block.signature });
            return;
          case 'delta': {
            const d = e.delta;
            if (d.type === 'text' && d.text !== '') send([{ text: d.text }]);
            else if (d.type === 'thinking' && d.thinking !== '') send([{ text: d.thinking, thought: true }]);
            // A thought's signature comes at its end; the client keeps it on a part of its own,
            // which a follow-up request joins back to the thought (request.ts).
            else if (d.type === 'signature' && d.signature !== '')
              send([{ text: '', thought: true, thoughtSignature: d.signature }]);
            else if (d.type === 'input_json') {
              const call = calls.get(e.index);
              if (call) call.json += d.partialJson;
            }
            return;
          }
          case 'block_stop': {
            const call = calls.get(e.index);
            if (!call) return;
            calls.delete(e.index);
            send([functionCallPart(call.id, call.name, parseToolArguments(call.json), call.signature)]);
            return;
          }
          case 'stop':
            addUsage(e.usage);
            stopReason = e.stopReason;
            return;
          case 'end':
            done = true;
            // An empty text part, as Gemini 3 ends: the SDK's chat drops a turn any chunk of which has no parts.
            subscriber.next(
              markFinal(
                frameLast(
                  ctx,
                  chunk({
                    content: { parts: [{ text: '' }], role: 'model' },
                    finishReason: stopReasonFromIR(stopReason),
                  }),
                ),
              ),
            );
            subscriber.complete();
            return;
          case 'error': {
            done = true;
            const json = JSON.stringify(errorBody(e.kind, e.message));
            subscriber.next(markFinal(isArrayStream(ctx) ? closeArray(ctx, json) : frame(ctx, json)));
            subscriber.complete();
            return;
          }
          case 'ping':
            return;
        }
      };

      return source.subscribe({
        next(e) {
          if (!done) handle(e);
        },
        error(err) {
          subscriber.error(err);
        },
        complete() {
          subscriber.complete();
        },
      });
    });
}
