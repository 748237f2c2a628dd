import type { Dialect, DialectName } from './dialect.js';
import { anthropicMessages } from './anthropic-messages/index.js';
import { openaiChat } from './openai-chat/index.js';

export const DIALECTS: Record<DialectName, Dialect> = {
  openai: openaiChat,
  anthropic: anthropicMessages,
};
