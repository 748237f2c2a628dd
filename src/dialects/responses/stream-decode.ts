// A Responses upstream's event stream → IR events. Each output item (message, reasoning, tool
// call) is one IR block; hosted tools' items run at the vendor and are not shown. Only the
// terminal event (completed, incomplete, failed) carries usage, and a stream that closes
// without one was cut off.

import { Observable, type OperatorFunction } from 'rxjs';
import type { ErrorKind } from '../../errors.js';
import type { SSEEvent } from '../../stream/sse.js';
import type { IRStreamEvent } from '../ir.js';
import { isRecord } from '../openai/shared.js';
import { NAMESPACE_JOIN } from './request.js';
import { contentFromOutput, stopReasonOf } from './response.js';
import { usageFromResponses } from './usage.js';

interface Slot {
  index: number;
  kind: 'text' | 'thinking' | 'tool' | 'custom';
  /** A freeform call's text, sent whole when the item is done (the IR carries JSON). */
  input: string;
}

export function decodeStream(): OperatorFunction<SSEEvent, IRStreamEvent> {
  return (source) =>
    new Observable<IRStreamEvent>((subscriber) => {
      let started = false;
      let done = false;
      let blocks = 0;
      const slots = new Map<number, Slot>();
      const emit = (e: IRStreamEvent) => subscriber.next(e);

      const start = (response: unknown) => {
        if (started) return;
        started = true;
        const r = isRecord(response) ? response : {};
        emit({
          type: 'start',
          id: typeof r.id === 'string' ? r.id : '',
          model: typeof r.model === 'string' ? r.model : '',
        });
      };
      const fail = (kind: ErrorKind, message: string) => {
        done = true;
        emit({ type: 'error', kind, message });
        subscriber.complete();
      };
      const closeSlot = (outputIndex: number) => {
        const slot = slots.get(outputIndex);
        if (!slot) return;
        slots.delete(outputIndex);
        if (slot.kind === 'custom')
          emit({
            type: 'delta',
            index: slot.index,
            delta: { type: 'input_json', partialJson: JSON.stringify({ input: slot.input }) },
          });
        emit({ type: 'block_stop', index: slot.index });
      };

      const onItemAdded = (outputIndex: number, item: Record<string, unknown>) => {
        const index = blocks++;
        if (item.type === 'message') {
          slots.set(outputIndex, { index, kind: 'text', input: '' });
          emit({ type: 'block_start', index, block: { type: 'text' } });
        } else if (item.type === 'reasoning') {
          slots.set(outputIndex, { index, kind: 'thinking', input: '' });
          emit({ type: 'block_start', index, block: { type: 'thinking' } });
        } else if (item.type === 'function_call' || item.type === 'custom_tool_call') {
          const name =
            typeof item.namespace === 'string' && item.namespace !== ''
              ? `${item.namespace}${NAMESPACE_JOIN}${item.name}`
              : String(item.name ?? '');
          slots.set(outputIndex, { index, kind: item.type === 'function_call' ? 'tool' : 'custom', input: '' });
          emit({
            type: 'block_start',
            index,
            block: { type: 'tool_use', id: String(item.call_id ?? item.id ?? ''), name },
          });
        } else blocks--;
      };

      const onEvent = (e: Record<string, unknown>) => {
        const type = String(e.type ?? '');
        const slot = typeof e.output_index === 'number' ? slots.get(e.output_index) : undefined;
        switch (type) {
          case 'response.created':
          case 'response.in_progress':
            return start(e.response);
          case 'response.output_item.added':
            start(undefined);
            if (typeof e.output_index === 'number' && isRecord(e.item)) onItemAdded(e.output_index, e.item);
            return;
          case 'response.output_text.delta':
          case 'response.refusal.delta':
            if (slot?.kind === 'text' && typeof e.delta === 'string' && e.delta !== '')
              emit({ type: 'delta', index: slot.index, delta: { type: 'text', text: e.delta } });
            return;
          case 'response.reasoning_summary_text.delta':
            if (slot?.kind === 'thinking' && typeof e.delta === 'string' && e.delta !== '')
              emit({ type: 'delta', index: slot.index, delta: { type: 'thinking', thinking: e.delta } });
            return;
          case 'response.reasoning_summary_part.added':
            // Summaries come in parts; the IR's one thinking block keeps them apart by a blank line.
            if (slot?.kind === 'thinking' && typeof e.summary_index === 'number' && e.summary_index > 0)
              emit({ type: 'delta', index: slot.index, delta: { type: 'thinking', thinking: '\n\n' } });
            return;
          case 'response.function_call_arguments.delta':
            if (slot?.kind === 'tool' && typeof e.delta === 'string' && e.delta !== '')
              emit({ type: 'delta', index: slot.index, delta: { type: 'input_json', partialJson: e.delta } });
            return;
          case 'response.custom_tool_call_input.delta':
            if (slot?.kind === 'custom' && typeof e.delta === 'string') slot.input += e.delta;
            return;
          case 'response.output_item.done':
            if (typeof e.output_index === 'number') closeSlot(e.output_index);
            return;
          case 'response.completed':
          case 'response.incomplete': {
            start(e.response);
            for (const k of [...slots.keys()]) closeSlot(k);
            const r = isRecord(e.response) ? e.response : {};
            const usage = usageFromResponses(r.usage);
            const stopReason = stopReasonOf(r, contentFromOutput(r.output));
            emit(usage ? { type: 'stop', stopReason, usage } : { type: 'stop', stopReason });
            done = true;
            emit({ type: 'end' });
            subscriber.complete();
            return;
          }
          case 'response.failed':
          case 'error': {
            const err = isRecord(e.response) && isRecord(e.response.error) ? e.response.error : e;
            const message =
              typeof err.message === 'string' && err.message !== '' ? err.message : 'The upstream reported an error.';
            fail(
              /overload|capacity/i.test(`${String(err.code ?? '')} ${message}`) ? 'overloaded' : 'upstream',
              message,
            );
            return;
          }
          default:
            // Hosted tools' progress, annotations, obfuscation padding: nothing for the IR.
            return;
        }
      };

      return source.subscribe({
        next(event) {
          if (done) return;
          const data = event.data.trim();
          if (data === '' || data === '[DONE]') return;
          let parsed: unknown;
          try {
            parsed = JSON.parse(data);
          } catch {
            return fail('upstream', 'The upstream sent an unreadable stream event.');
          }
          if (isRecord(parsed)) onEvent(parsed);
        },
        error(err) {
          subscriber.error(err);
        },
        complete() {
          if (!done) fail('upstream', 'The upstream stream ended before the answer was complete.');
          else subscriber.complete();
        },
      });
    });
}
