// The names of the wire dialects, as the catalogue's providers give them. A leaf module, so that
// the catalogue can validate a provider's dialect without loading the dialects; the registry
// (index.ts) is checked against this list by the type system.

export const DIALECT_NAMES = ['openai', 'anthropic', 'responses', 'gemini'] as const;

export type DialectName = (typeof DIALECT_NAMES)[number];
