// IR events → the Responses surface's event stream, in the vendor's order: response.created and
// .in_progress; per item output_item.added, its parts and deltas, output_item.done; then one
// terminal event (response.completed or .incomplete) with the whole response and its usage.
// Every event has an `event:` line equal to its type and a sequence_number; there is no [DONE].

import { Observable, type OperatorFunction } from 'rxjs';
import { encodeSSE, markFinal } from '../../stream/sse.js';
import type { RenderContext } from '../dialect.js';
import { ZERO_USAGE, type IRStopReason, type IRStreamEvent, type IRUsage } from '../ir.js';
import { compactionItem } from './compaction.js';
import { failureEvents } from './errors.js';
import { itemId, messageItem, reasoningItem, responseObject, statusOf, toolCallItem, type Item } from './response.js';

interface OpenItem {
  kind: 'text' | 'thinking' | 'tool';
  outputIndex: number;
  id: string;
  text: string;
  /** Tool calls: the call id and the IR tool name. */
  callId?: string;
  name?: string;
}

export function encodeStream(ctx: RenderContext): OperatorFunction<IRStreamEvent, Buffer> {
  return (source) =>
    new Observable<Buffer>((subscriber) => {
      let seq = 0;
      let done = false;
      let started = false;
      let stopReason: IRStopReason | null = null;
      const usage: Partial<IRUsage> = {};
      const output: Item[] = [];
      const open = new Map<number, OpenItem>();
      let summary = '';

      const send = (type: string, payload: Record<string, unknown>) => {
        subscriber.next(encodeSSE(JSON.stringify({ type, ...payload, sequence_number: seq++ }), type));
      };
      const addUsage = (u: Partial<IRUsage> | undefined) => {
        if (u) for (const k of Object.keys(u) as (keyof IRUsage)[]) if (typeof u[k] === 'number') usage[k] = u[k];
      };
      const start = () => {
        if (started) return;
        started = true;
        const response = responseObject(ctx, 'in_progress', [], null, null);
        send('response.created', { response });
        send('response.in_progress', { response });
      };

      const openItem = (
        index: number,
        kind: OpenItem['kind'],
        prefix: string,
        extra: Partial<OpenItem> = {},
      ): OpenItem => {
        const item: OpenItem = { kind, outputIndex: output.length, id: itemId(prefix), text: '', ...extra };
        output.push({});
        open.set(index, item);
        return item;
      };

      const itemOf = (o: OpenItem, status: string): Item => {
        if (o.kind === 'text') return messageItem(o.id, o.text, status);
        if (o.kind === 'thinking') return reasoningItem(o.id, o.text);
        let input: unknown = {};
        try {
          input = o.text.trim() === '' ? {} : JSON.parse(o.text);
        } catch {
          input = { _raw_arguments: o.text };
        }
        return toolCallItem(o.id, o.callId!, o.name!, input, ctx.clientTools, status);
      };

      const closeItem = (index: number) => {
        const o = open.get(index);
        if (!o) return;
        open.delete(index);
        const item = itemOf(o, 'completed');
        if (o.kind === 'text') {
          send('response.output_text.done', {
            item_id: o.id,
            output_index: o.outputIndex,
            content_index: 0,
            text: o.text,
            logprobs: [],
          });
          send('response.content_part.done', {
            item_id: o.id,
            output_index: o.outputIndex,
            content_index: 0,
            part: { type: 'output_text', text: o.text, annotations: [], logprobs: [] },
          });
        } else if (o.kind === 'thinking') {
          send('response.reasoning_summary_text.done', {
            item_id: o.id,
            output_index: o.outputIndex,
            summary_index: 0,
            text: o.text,
          });
          send('response.reasoning_summary_part.done', {
            item_id: o.id,
            output_index: o.outputIndex,
            summary_index: 0,
            part: { type: 'summary_text', text: o.text },
          });
        } else if (item.type === 'custom_tool_call') {
          // The IR streams a freeform call as JSON ({"input": "…"}); its text is known only whole.
          send('response.custom_tool_call_input.delta', {
            item_id: o.id,
            output_index: o.outputIndex,
            delta: item.input,
          });
          send('response.custom_tool_call_input.done', {
            item_id: o.id,
            output_index: o.outputIndex,
            input: item.input,
          });
        } else {
          send('response.function_call_arguments.done', {
            item_id: o.id,
            output_index: o.outputIndex,
            arguments: item.arguments,
          });
        }
        output[o.outputIndex] = item;
        send('response.output_item.done', { output_index: o.outputIndex, item });
      };

      const finish = () => {
        for (const index of [...open.keys()]) closeItem(index);
        if (ctx.compaction) {
          // The one item of a compaction, whole: its content is known only at the end.
          const item = compactionItem(summary);
          send('response.output_item.added', { output_index: 0, item });
          send('response.output_item.done', { output_index: 0, item });
          output.push(item);
        }
        const status = statusOf(stopReason);
        const response = responseObject(
          ctx,
          status,
          output.filter((i) => i.type !== undefined),
          { ...ZERO_USAGE, ...usage },
          stopReason,
        );
        ctx.onFinal?.(response);
        subscriber.next(
          markFinal(
            encodeSSE(
              JSON.stringify({ type: `response.${status}`, response, sequence_number: seq++ }),
              `response.${status}`,
            ),
          ),
        );
      };

      const handle = (e: IRStreamEvent) => {
        if (ctx.compaction && (e.type === 'block_start' || e.type === 'delta' || e.type === 'block_stop')) {
          // A compaction's text is its summary, sent as one item at the end; nothing else shows.
          start();
          if (e.type === 'delta' && e.delta.type === 'text') summary += e.delta.text;
          return;
        }
        switch (e.type) {
          case 'start':
            addUsage(e.usage);
            start();
            return;
          case 'block_start': {
            start();
            const b = e.block;
            if (b.type === 'text') {
              const o = openItem(e.index, 'text', 'msg');
              send('response.output_item.added', {
                output_index: o.outputIndex,
                item: messageItem(o.id, '', 'in_progress'),
              });
              send('response.content_part.added', {
                item_id: o.id,
                output_index: o.outputIndex,
                content_index: 0,
                part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
              });
            } else if (b.type === 'thinking') {
              const o = openItem(e.index, 'thinking', 'rs');
              send('response.output_item.added', { output_index: o.outputIndex, item: reasoningItem(o.id, '') });
              send('response.reasoning_summary_part.added', {
                item_id: o.id,
                output_index: o.outputIndex,
                summary_index: 0,
                part: { type: 'summary_text', text: '' },
              });
            } else if (b.type === 'tool_use') {
              const freeform = ctx.clientTools?.get(b.name)?.freeform === true;
              const o = openItem(e.index, 'tool', freeform ? 'ctc' : 'fc', { callId: b.id, name: b.name });
              const item = toolCallItem(
                o.id,
                b.id,
                b.name,
                freeform ? { input: '' } : {},
                ctx.clientTools,
                'in_progress',
              );
              if (item.type === 'function_call') item.arguments = '';
              send('response.output_item.added', { output_index: o.outputIndex, item });
            }
            // Redacted thinking has nothing a Responses client can read.
            return;
          }
          case 'delta': {
            const o = open.get(e.index);
            if (!o) return;
            const d = e.delta;
            // Each event a literal of its own, not `{ ...base, … }`: on Node 20 every such copy got
            // a hidden class of its own, which JSON.stringify and each property read paid for.
            if (d.type === 'text' && o.kind === 'text') {
              o.text += d.text;
              if (d.text !== '')
                send('response.output_text.delta', {
                  item_id: o.id,
                  output_index: o.outputIndex,
                  content_index: 0,
                  delta: d.text,
                  logprobs: [],
                });
            } else if (d.type === 'thinking' && o.kind === 'thinking') {
              o.text += d.thinking;
              if (d.thinking !== '')
                send('response.reasoning_summary_text.delta', {
                  item_id: o.id,
                  output_index: o.outputIndex,
                  summary_index: 0,
                  delta: d.thinking,
                });
            } else if (d.type === 'input_json' && o.kind === 'tool') {
              o.text += d.partialJson;
              if (d.partialJson !== '' && ctx.clientTools?.get(o.name!)?.freeform !== true)
                send('response.function_call_arguments.delta', {
                  item_id: o.id,
                  output_index: o.outputIndex,
                  delta: d.partialJson,
                });
            }
            return;
          }
          case 'block_stop':
            closeItem(e.index);
            return;
          case 'stop':
            addUsage(e.usage);
            stopReason = e.stopReason;
            return;
          case 'end':
            start();
            done = true;
            finish();
            subscriber.complete();
            return;
          case 'error':
            start();
            done = true;
            subscriber.next(failureEvents(ctx.id, { kind: e.kind, message: e.message }, seq));
            subscriber.complete();
            return;
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
