// Small pieces both directions of the dialect need: finish-reason mapping and the handling
// of tool-call arguments, which OpenAI carries as a JSON string and the IR as a value.

import type { IRStopReason } from '../ir.js';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export function finishReasonFromIR(reason: IRStopReason | null): FinishReason {
  switch (reason) {
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    // pause_turn keeps its content and simply ends the turn; OpenAI has nothing closer than stop.
    default:
      return 'stop';
  }
}

export function finishReasonToIR(reason: unknown): IRStopReason | null {
  switch (reason) {
    case 'stop':
      return 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return null;
  }
}

/**
 * Tool-call arguments that are not a JSON object (truncated by max_tokens, or a model that
 * emitted garbage) are kept verbatim under this key. Anthropic only takes an object as
 * `input`, so a wrapper object keeps the text visible to any dialect, and lets the OpenAI
 * side give the exact original string back.
 */
export const RAW_ARGUMENTS_KEY = '_raw_arguments';

export function parseToolArguments(args: string): unknown {
  // Some models send "" for a function without parameters.
  if (args.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(args);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {
    // fall through to the wrapper
  }
  return { [RAW_ARGUMENTS_KEY]: args };
}

export function stringifyToolArguments(input: unknown): string {
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const keys = Object.keys(input);
    const raw = (input as Record<string, unknown>)[RAW_ARGUMENTS_KEY];
    if (keys.length === 1 && typeof raw === 'string') return raw;
  }
  return JSON.stringify(input ?? {});
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
