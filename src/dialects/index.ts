// The registry: every wire dialect the gateway speaks, by the name the catalogue's providers
// give as `dialect`. A dialect with a surface is also served to clients (its route is
// registered from here); adding one is its folder plus one line below.

import type { Dialect } from './dialect.js';
import { anthropicMessages } from './anthropic-messages/index.js';
import { openaiChat } from './openai-chat/index.js';
import { openaiResponses } from './openai-responses/index.js';

export const DIALECTS = {
  openai: openaiChat,
  anthropic: anthropicMessages,
  responses: openaiResponses,
} satisfies Record<string, Dialect>;

export type DialectName = keyof typeof DIALECTS;

export const DIALECT_NAMES = Object.keys(DIALECTS) as [DialectName, ...DialectName[]];

/** The usage record's `surface` values: one per dialect served to clients. */
export const SURFACE_NAMES = Object.values(DIALECTS).flatMap((d: Dialect) => (d.surface ? [d.surface.name] : []));
