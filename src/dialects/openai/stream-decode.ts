// An OpenAI-dialect upstream's SSE stream → IR events. The IR has content blocks with
// explicit start/stop; OpenAI has flat deltas, so blocks are opened and closed here as the
// kind of content in the deltas changes.

import { Observable, type OperatorFunction } from 'rxjs';
import type { ErrorKind } from '../../errors.js';
import { Envelope } from '../../stream/envelope.js';
import type { SSEEvent } from '../../stream/sse.js';
import type { TextLane } from '../../stream/text-lane.js';
import type { IRStopReason, IRStreamEvent, IRUsage } from '../ir.js';
import { finishReasonToIR, isRecord } from './shared.js';
import { usageFromOpenAI } from './usage.js';

type OpenKind = 'text' | 'thinking' | 'tool';

interface ToolSlot {
  /** IR block index. */
  index: number;
  id: string;
}

export function decodeStream(lane?: TextLane): OperatorFunction<SSEEvent, IRStreamEvent> {
  return (source) =>
    new Observable<IRStreamEvent>((subscriber) => {
      let started = false;
      let finished = false; // stop emitted
      let done = false; // end or error emitted: nothing more goes out
      let blockCount = 0;
      let open: { kind: OpenKind; index: number } | null = null;
      const tools = new Map<number, ToolSlot>();
      let finishReason: IRStopReason | null | undefined; // undefined: no finish chunk yet
      let usage: IRUsage | undefined;
      const envelope = new Envelope();
      if (lane) lane.envelope = envelope;

      const emit = (e: IRStreamEvent) => subscriber.next(e);

      const start = (id: string, model: string) => {
        if (started) return;
        started = true;
        emit({ type: 'start', id, model });
      };

      const closeOpen = () => {
        if (open) emit({ type: 'block_stop', index: open.index });
        open = null;
      };

      const openBlock = (kind: 'text' | 'thinking'): number => {
        if (open?.kind === kind) return open.index;
        closeOpen();
        open = { kind, index: blockCount++ };
        emit({ type: 'block_start', index: open.index, block: { type: kind } });
        return open.index;
      };

      const stop = () => {
        if (finished) return;
        start('', '');
        closeOpen();
        finished = true;
        const stopReason = finishReason ?? null;
        emit(usage ? { type: 'stop', stopReason, usage } : { type: 'stop', stopReason });
      };

      const end = () => {
        stop();
        done = true;
        emit({ type: 'end' });
        subscriber.complete();
      };

      const fail = (kind: ErrorKind, message: string) => {
        done = true;
        emit({ type: 'error', kind, message });
        subscriber.complete();
      };

      const onToolCall = (tc: Record<string, unknown>, position: number) => {
        const key = typeof tc.index === 'number' ? tc.index : position;
        const fn = isRecord(tc.function) ? tc.function : {};
        const id = typeof tc.id === 'string' && tc.id !== '' ? tc.id : undefined;
        let slot = tools.get(key);
        // Some vendors repeat the id on every fragment; a different id under a known index is
        // a vendor numbering every call 0, so it opens a new call.
        if (!slot || (id !== undefined && id !== slot.id)) {
          closeOpen();
          slot = { index: blockCount++, id: id ?? `call_${key}` };
          tools.set(key, slot);
          open = { kind: 'tool', index: slot.index };
          emit({
            type: 'block_start',
            index: slot.index,
            block: { type: 'tool_use', id: slot.id, name: typeof fn.name === 'string' ? fn.name : '' },
          });
        }
        if (typeof fn.arguments === 'string' && fn.arguments !== '') {
          emit({ type: 'delta', index: slot.index, delta: { type: 'input_json', partialJson: fn.arguments } });
        }
      };

      const onDelta = (delta: Record<string, unknown>) => {
        const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : delta.reasoning;
        if (typeof reasoning === 'string' && reasoning !== '') {
          emit({ type: 'delta', index: openBlock('thinking'), delta: { type: 'thinking', thinking: reasoning } });
        }
        // The role chunk carries content "" (or null): no block is opened for nothing.
        for (const text of [delta.content, delta.refusal]) {
          if (typeof text === 'string' && text !== '') {
            emit({ type: 'delta', index: openBlock('text'), delta: { type: 'text', text } });
          }
        }
        if (Array.isArray(delta.tool_calls)) {
          delta.tool_calls.forEach((tc: unknown, i: number) => {
            if (isRecord(tc)) onToolCall(tc, i);
          });
        }
      };

      const onChunk = (chunk: Record<string, unknown>) => {
        if (isRecord(chunk.error)) {
          const err = chunk.error;
          const label = `${String(err.type ?? '')} ${String(err.code ?? '')}`;
          const message =
            typeof err.message === 'string' && err.message !== '' ? err.message : 'The upstream reported an error.';
          fail(/overload/i.test(label) ? 'overloaded' : 'upstream', message);
          return;
        }
        const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
        // Azure's first chunk has id "" and no choices: it says nothing about the answer.
        const id = typeof chunk.id === 'string' ? chunk.id : '';
        if (id !== '' || choices.length > 0) start(id, typeof chunk.model === 'string' ? chunk.model : '');

        if (!finished) {
          const choice = choices.find((c: unknown) => isRecord(c) && (c.index ?? 0) === 0);
          if (isRecord(choice)) {
            if (isRecord(choice.delta)) onDelta(choice.delta);
            if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') {
              finishReason = finishReasonToIR(choice.finish_reason);
              closeOpen();
            }
          }
        }
        // 2026 streams send "usage": null in every chunk; only an object is the usage chunk.
        if (isRecord(chunk.usage)) {
          usage = usageFromOpenAI(chunk.usage) ?? undefined;
          // A vendor that sends running usage on every chunk must not stop the answer early,
          // so the stop waits until the finish reason is known.
          if (finishReason !== undefined) stop();
        }
      };

      const read = (event: SSEEvent) => {
        if (done) return;
        // The last plain text chunk (learned before the answer stopped) with other text: what
        // reading it would do, without the parse.
        const text = envelope.text(event);
        if (text !== undefined) {
          if (text !== '') emit({ type: 'delta', index: openBlock('text'), delta: { type: 'text', text } });
          return;
        }
        const data = event.data.trim();
        if (data === '') return;
        if (data === '[DONE]') return end();
        let chunk: unknown;
        try {
          chunk = JSON.parse(data);
        } catch {
          return fail('upstream', 'The upstream sent an unreadable stream event.');
        }
        if (!isRecord(chunk)) return fail('upstream', 'The upstream sent an unreadable stream event.');
        onChunk(chunk);
        if (plainText(chunk) && !finished) envelope.learn(event);
        else envelope.forget();
      };

      return source.subscribe({
        next(event) {
          read(event);
          // A chunk the envelope fits is a text delta of the open block and nothing else while
          // that block is text: it opens nothing and changes nothing (stream/text-lane.ts).
          if (lane) lane.block = !done && !finished && open?.kind === 'text' && envelope.learned ? open.index : -1;
        },
        error(err) {
          subscriber.error(err);
        },
        complete() {
          if (done) return subscriber.complete();
          // Some OpenAI-compatible servers omit [DONE]; a finish reason is proof enough that
          // the answer is whole. Without one the stream was cut off.
          if (finishReason !== undefined) end();
          else fail('upstream', 'The upstream stream ended before the answer was complete.');
        },
      });
    });
}

/**
 * A chunk whose only effect is its text, learned by the envelope: its first choice is number 0,
 * with a delta whose content is the text the envelope found (stream/delta-text.ts has made sure the
 * delta holds nothing else), and no finish reason. A chunk that differs from it only in that
 * text has that text as its only effect too. Usage and errors need no look: an error ends the
 * stream, and usage in the close is the same usage again, which stops nothing before a finish
 * reason has come, and that comes in a chunk that is not plain.
 */
function plainText(chunk: Record<string, unknown>): boolean {
  // The first choice is the one read (number 0); any other is in the close, the same again.
  const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  if (!isRecord(choice) || (choice.index ?? 0) !== 0) return false;
  if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') return false;
  return isRecord(choice.delta) && typeof choice.delta.content === 'string';
}
