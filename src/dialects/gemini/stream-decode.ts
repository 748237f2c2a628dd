// A Gemini upstream's stream (`alt=sse`) → IR events. Each chunk is a whole
// GenerateContentResponse holding the new parts; usageMetadata is cumulative, so the last seen
// is the answer's. The stream ends when the connection closes after a chunk with finishReason;
// closing before one is a cut. Thought parts open a thinking block, text parts a text block, and
// each functionCall is a tool_use block of its own, whole (Vertex may stream its arguments as
// `partialArgs`, gathered until the empty functionCall that ends them).

import { Observable, type OperatorFunction } from 'rxjs';
import type { ErrorKind } from '../../errors.js';
import type { SSEEvent } from '../../stream/sse.js';
import type { IRStreamEvent, IRUsage } from '../ir.js';
import { isRecord } from '../openai/shared.js';
import { kindOfStatus } from './errors.js';
import { newCallId, stopReasonToIR } from './response.js';
import { usageFromGemini } from './usage.js';

interface PartialCall {
  name: string;
  args: Record<string, unknown>;
  signature?: string;
}

/** `$.a.b` → sets args.a.b. */
function setPath(args: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path
    .replace(/^\$\.?/, '')
    .split('.')
    .filter((k) => k !== '');
  let at = args;
  keys.forEach((k, i) => {
    if (i === keys.length - 1) {
      at[k] = typeof value === 'string' && typeof at[k] === 'string' ? (at[k] as string) + value : value;
    } else {
      if (!isRecord(at[k])) at[k] = {};
      at = at[k] as Record<string, unknown>;
    }
  });
}

export function decodeStream(): OperatorFunction<SSEEvent, IRStreamEvent> {
  return (source) =>
    new Observable<IRStreamEvent>((subscriber) => {
      let started = false;
      let done = false;
      let blocks = 0;
      let open: { index: number; kind: 'text' | 'thinking' } | undefined;
      let calledTools = false;
      let usage: IRUsage | null = null;
      let partial: PartialCall | undefined;
      const emit = (e: IRStreamEvent) => subscriber.next(e);

      const close = () => {
        if (open) emit({ type: 'block_stop', index: open.index });
        open = undefined;
      };
      const fail = (kind: ErrorKind, message: string) => {
        done = true;
        close();
        emit({ type: 'error', kind, message });
        subscriber.complete();
      };
      const toolCall = (id: string, name: string, args: unknown, signature: string | undefined) => {
        close();
        calledTools = true;
        const index = blocks++;
        emit({
          type: 'block_start',
          index,
          block: signature ? { type: 'tool_use', id, name, signature } : { type: 'tool_use', id, name },
        });
        emit({
          type: 'delta',
          index,
          delta: { type: 'input_json', partialJson: JSON.stringify(isRecord(args) ? args : {}) },
        });
        emit({ type: 'block_stop', index });
      };
      const text = (kind: 'text' | 'thinking', t: string) => {
        if (open?.kind !== kind) {
          close();
          open = { index: blocks++, kind };
          emit({ type: 'block_start', index: open.index, block: { type: kind } });
        }
        emit({
          type: 'delta',
          index: open.index,
          delta: kind === 'text' ? { type: 'text', text: t } : { type: 'thinking', thinking: t },
        });
      };

      const onPart = (p: Record<string, unknown>) => {
        const signature =
          typeof p.thoughtSignature === 'string' && p.thoughtSignature !== '' ? p.thoughtSignature : undefined;
        const fc = p.functionCall;
        if (isRecord(fc)) {
          if (typeof fc.name === 'string' && fc.willContinue === true) {
            partial = { name: fc.name, args: {}, signature };
          } else if (partial && Array.isArray(fc.partialArgs)) {
            for (const a of fc.partialArgs) {
              if (!isRecord(a) || typeof a.jsonPath !== 'string') continue;
              const value =
                a.stringValue ?? a.numberValue ?? a.boolValue ?? (a.nullValue !== undefined ? null : undefined);
              if (value !== undefined) setPath(partial.args, a.jsonPath, value);
            }
          } else if (partial && fc.name === undefined) {
            const { name, args, signature: s } = partial;
            partial = undefined;
            toolCall(newCallId(), name, args, s);
          } else {
            toolCall(
              typeof fc.id === 'string' && fc.id !== '' ? fc.id : newCallId(),
              String(fc.name ?? ''),
              fc.args,
              signature,
            );
          }
        } else if (typeof p.text === 'string') {
          if (p.thought === true) {
            if (p.text !== '') text('thinking', p.text);
            if (signature && open?.kind === 'thinking')
              emit({ type: 'delta', index: open.index, delta: { type: 'signature', signature } });
          } else if (p.text !== '') text('text', p.text);
        }
      };

      const onChunk = (c: Record<string, unknown>) => {
        if (isRecord(c.error)) {
          const message =
            typeof c.error.message === 'string' && c.error.message !== ''
              ? c.error.message
              : 'The upstream reported an error.';
          return fail(kindOfStatus(c.error.status), message);
        }
        usage = usageFromGemini(c.usageMetadata) ?? usage;
        if (!started) {
          started = true;
          emit({
            type: 'start',
            id: typeof c.responseId === 'string' ? c.responseId : '',
            model: typeof c.modelVersion === 'string' ? c.modelVersion : '',
            ...(usage ? { usage: { input: usage.input, cacheRead: usage.cacheRead } } : {}),
          });
        }
        const candidate = Array.isArray(c.candidates) && isRecord(c.candidates[0]) ? c.candidates[0] : undefined;
        const parts =
          isRecord(candidate?.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
        for (const p of parts) if (isRecord(p)) onPart(p);
        const blocked = !candidate && isRecord(c.promptFeedback) && c.promptFeedback.blockReason !== undefined;
        if (candidate?.finishReason !== undefined || blocked) {
          close();
          const stopReason = blocked ? 'refusal' : stopReasonToIR(candidate!.finishReason, calledTools);
          emit(usage ? { type: 'stop', stopReason, usage } : { type: 'stop', stopReason });
          done = true;
          emit({ type: 'end' });
          subscriber.complete();
        }
      };

      return source.subscribe({
        next(event) {
          if (done) return;
          const data = event.data.trim();
          if (data === '') return;
          let parsed: unknown;
          try {
            parsed = JSON.parse(data);
          } catch {
            return fail('upstream', 'The upstream sent an unreadable stream event.');
          }
          if (isRecord(parsed)) onChunk(parsed);
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
