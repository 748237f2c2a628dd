// IR events → the chat surface's `chat.completion.chunk` stream.

import { Observable, type OperatorFunction } from 'rxjs';
import { encodeSSE, markFinal } from '../../stream/sse.js';
import { ANY_BLOCK, frameOf, type TextLane } from '../../stream/text-lane.js';
import type { RenderContext } from '../dialect.js';
import type { IRStopReason, IRStreamEvent, IRUsage } from '../ir.js';
import { ZERO_USAGE } from '../ir.js';
import { errorBody } from './errors.js';
import { finishReasonFromIR } from './shared.js';
import { usageToOpenAI } from './usage.js';

const DONE = markFinal(Buffer.from('data: [DONE]\n\n'));

function chunkBytes(ctx: RenderContext, delta: Record<string, unknown>, finishReason: string | null): Buffer {
  const body: Record<string, unknown> = {
    id: ctx.id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
  // As OpenAI does: with include_usage, every chunk but the last carries usage: null.
  if (ctx.includeUsage) body.usage = null;
  return encodeSSE(JSON.stringify(body));
}

export function encodeStream(ctx: RenderContext, lane?: TextLane): OperatorFunction<IRStreamEvent, Buffer> {
  return (source) =>
    new Observable<Buffer>((subscriber) => {
      let roleSent = false;
      let stopped = false;
      let done = false;
      const usage: Partial<IRUsage> = {};
      // IR indices count every content block; OpenAI's tool-call index counts tool calls only.
      const toolOrdinal = new Map<number, number>();
      /**
       * Tool calls (by ordinal) that got no argument text yet. Anthropic streams a call without
       * parameters as `input: {}` plus one empty input_json_delta, which would leave the client
       * with arguments "" (not JSON; OpenAI sends "{}", as the non-streamed answer here does).
       */
      const noArguments = new Set<number>();
      const closeArguments = (ordinal: number) => {
        if (!noArguments.delete(ordinal)) return;
        chunk({ tool_calls: [{ index: ordinal, function: { arguments: '{}' } }] });
      };

      const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
        subscriber.next(chunkBytes(ctx, delta, finishReason));
      // Every block's text is written the same way, in a chunk that names the answer.
      const frame = lane ? frameOf(ANY_BLOCK, false, (text) => chunkBytes(ctx, { content: text }, null)) : undefined;

      const ensureRole = () => {
        if (roleSent) return;
        roleSent = true;
        chunk({ role: 'assistant', content: '' });
      };

      const onStop = (reason: IRStopReason | null) => {
        ensureRole();
        stopped = true;
        chunk({}, finishReasonFromIR(reason));
        if (ctx.includeUsage) {
          const body = {
            id: ctx.id,
            object: 'chat.completion.chunk',
            created: ctx.created,
            model: ctx.model,
            choices: [],
            usage: usageToOpenAI({ ...ZERO_USAGE, ...usage }),
          };
          subscriber.next(encodeSSE(JSON.stringify(body)));
        }
      };

      const addUsage = (u: Partial<IRUsage> | undefined) => {
        if (!u) return;
        for (const key of Object.keys(u) as Array<keyof IRUsage>) {
          if (typeof u[key] === 'number') usage[key] = u[key];
        }
      };

      const handle = (e: IRStreamEvent) => {
        switch (e.type) {
          case 'start':
            addUsage(e.usage);
            ensureRole();
            return;
          case 'block_start': {
            if (e.block.type !== 'tool_use') return;
            ensureRole();
            const index = toolOrdinal.size;
            toolOrdinal.set(e.index, index);
            noArguments.add(index);
            const fn = { name: e.block.name, arguments: '' };
            chunk({ tool_calls: [{ index, id: e.block.id, type: 'function', function: fn }] });
            return;
          }
          case 'delta': {
            const d = e.delta;
            ensureRole();
            if (d.type === 'text' && d.text !== '') chunk({ content: d.text });
            else if (d.type === 'thinking' && d.thinking !== '') chunk({ reasoning_content: d.thinking });
            else if (d.type === 'input_json' && d.partialJson !== '') {
              const index = toolOrdinal.get(e.index);
              if (index !== undefined) {
                noArguments.delete(index);
                chunk({ tool_calls: [{ index, function: { arguments: d.partialJson } }] });
              }
            }
            // Signatures have no place in OpenAI's wire form.
            return;
          }
          case 'stop':
            if (stopped) return;
            for (const ordinal of [...noArguments]) closeArguments(ordinal);
            addUsage(e.usage);
            onStop(e.stopReason);
            return;
          case 'end':
            for (const ordinal of [...noArguments]) closeArguments(ordinal);
            if (!stopped) onStop(null);
            done = true;
            subscriber.next(DONE);
            subscriber.complete();
            return;
          case 'error':
            done = true;
            subscriber.next(encodeSSE(JSON.stringify(errorBody(e.kind, e.message))));
            subscriber.complete();
            return;
          case 'block_stop': {
            const ordinal = toolOrdinal.get(e.index);
            if (ordinal !== undefined) closeArguments(ordinal);
            return;
          }
          case 'ping':
            return;
        }
      };

      return source.subscribe({
        next(e) {
          if (!done) handle(e);
          // A text delta is one chunk of its own once the role went out, until the answer stops.
          if (lane) lane.frame = roleSent && !stopped && !done ? frame : undefined;
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
