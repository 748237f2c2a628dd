// What a model's tokens cost, as the compiled catalogue (index.ts) holds it: apart from the
// catalogue's loading, so that the money arithmetic (src/billing/money.ts) and what reads it
// without Node (the payments' light halves, in the web app's type check) need only this.

/** Nano-USD per million tokens, so that prices like $0.0375/M stay integers. */
export interface Prices {
  input: bigint;
  output: bigint;
  cacheRead: bigint;
  cacheWrite: bigint;
  /** Cache writes with a one-hour lifetime (Anthropic charges them 2× input by default). */
  cacheWrite1h: bigint;
  /** Audio tokens in and out; absent: audio is not sold on this model. */
  audioIn?: bigint;
  audioOut?: bigint;
  /** Nano-USD per web search (not per million). */
  perWebSearch: bigint;
  /** Past `threshold` input tokens, the whole request is priced at `prices`. */
  longContext?: { threshold: number; prices: Prices };
}
