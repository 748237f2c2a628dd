// The shape of a dialect's light half (each folder's meta.ts), apart from the leaf registry
// (names.ts) that lists them, so that neither imports the other.

/** A dialect's light half, in its folder's `meta.ts`. */
export interface DialectMeta {
  /** The catalogue's `dialect` value: the dialect's one name (registry key, folder, `Dialect.name`). */
  name: string;
  /** Its providers serve POST /v1/embeddings: the dialect's `index.ts` has an `embeddings` adapter. */
  embeddings: boolean;
  /**
   * The vendor's models that take reasoning controls, for a route whose catalogue entry does not
   * say (catalogue/index.ts REASONING_MODEL). Matched case-insensitively at the start of the
   * upstream model name or after a `/` (`vendor/model` on aggregators); no flags, no anchors.
   */
  reasoningModels?: RegExp;
}
