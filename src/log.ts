import { pino, type Logger } from 'pino';

export type { Logger };

/** Redaction is a safety net: code never logs secrets on purpose, but headers get logged whole. */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { pid: process.pid, ...bindings },
    redact: {
      paths: [
        '*.authorization',
        '*.["x-api-key"]',
        'headers.authorization',
        'headers["x-api-key"]',
        'apiKey',
        'key',
        'password',
        'token',
      ],
      censor: '[redacted]',
    },
  });
}
