// The catalogue saved in Postgres by admins (sql/013_catalogue.sql): compiled like the file, put
// in force in every gateway process at once (a hot-store message names the new version, which
// each process reads and swaps in), and at start.

import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import type { Logger } from 'pino';
import type { Bus } from '../store/hot.js';
import type { Sql, Tx } from '../store/sql.js';
import { EXAMPLE_CATALOGUE } from './example.js';
import { catalogueFile, CatalogueError, compileCatalogue, type Catalogue, type CatalogueHolder } from './index.js';
import { issuePath } from './schema.js';

export const CATALOGUE_CHANNEL = 'catalogue-saved';

const Usd = v.pipe(v.number('must be a number'), v.minValue(0, 'must not be negative'));
/** What the upstream charges per million tokens on a route: the gateway's cost, for margins. */
// `output` may be left out: an embedding route's upstream bills input only.
export const UpstreamPricing = v.object({
  input: Usd,
  output: v.optional(Usd),
  cache_read: v.optional(Usd),
  cache_write: v.optional(Usd),
});

/** The operator's fields, which the catalogue file's schema does not know (and would drop). */
const OperatorFields = v.object({
  providers: v.array(v.object({ enabled: v.optional(v.boolean('must be true or false')) })),
  models: v.array(
    v.object({
      enabled: v.optional(v.boolean('must be true or false')),
      routes: v.array(
        v.object({
          enabled: v.optional(v.boolean('must be true or false')),
          upstream_pricing: v.optional(UpstreamPricing),
        }),
      ),
    }),
  ),
});

type Doc = {
  providers: { id: string; enabled?: boolean }[];
  models: { id: string; enabled?: boolean; routes: { provider: string; enabled?: boolean }[] }[];
};

/**
 * The document without what is switched off: a disabled provider's routes are out, and a model
 * with no route left in service is out too.
 */
export function inService(doc: unknown): unknown {
  const d = doc as Doc;
  const off = new Set(d.providers.filter((p) => p.enabled === false).map((p) => p.id));
  return {
    ...d,
    models: d.models
      .filter((m) => m.enabled !== false)
      .map((m) => ({ ...m, routes: m.routes.filter((r) => r.enabled !== false && !off.has(r.provider)) }))
      .filter((m) => m.routes.length > 0),
  };
}

/** Checks a document as a whole (the file's rules and the operator's fields) and compiles it. */
export function compileStored(doc: unknown, source: string): Catalogue {
  if (
    doc === null ||
    typeof doc !== 'object' ||
    !Array.isArray((doc as Doc).models) ||
    !Array.isArray((doc as Doc).providers)
  ) {
    // The file's schema words this one.
    return compileCatalogue(doc, source);
  }
  const extra = v.safeParse(OperatorFields, doc);
  if (!extra.success) throw new CatalogueError(`${source}: ${issuePath(extra.issues[0])} ${extra.issues[0].message}`);
  // Every entry must be valid, switched off or not: switching it on later must not fail.
  compileCatalogue(doc, source);
  return compileCatalogue(inService(doc), source);
}

export interface StoredVersion {
  id: bigint;
  doc: unknown;
  actor: string;
  created_at: Date;
}

export async function latestVersion(sql: Sql | Tx): Promise<StoredVersion | undefined> {
  const [row] = await sql<
    StoredVersion[]
  >`SELECT id, doc, actor, created_at FROM catalogue_versions ORDER BY id DESC LIMIT 1`;
  return row;
}

/** The file's document as written (GATEWAY_CONFIG, ./gateway.config.json, else the example). */
export function fileDocument(configPath: string | undefined, cwd = process.cwd()): unknown {
  const file = catalogueFile(configPath, cwd);
  return file ? JSON.parse(readFileSync(file, 'utf8')) : EXAMPLE_CATALOGUE;
}

/**
 * Puts the newest saved catalogue in force now and whenever one is saved, in this process.
 * A saved document that no longer compiles (it did when saved) is logged and the catalogue in
 * force stays.
 */
export async function startCatalogueSync(sql: Sql, hot: Bus, holder: CatalogueHolder, log: Logger): Promise<void> {
  let applied = 0n;
  const apply = async () => {
    const latest = await latestVersion(sql);
    if (!latest || latest.id <= applied) return;
    try {
      holder.useStored(compileStored(latest.doc, `catalogue version ${latest.id} (saved by ${latest.actor})`));
      applied = latest.id;
      log.info({ version: latest.id.toString(), models: holder.current.list.length }, 'catalogue version in force');
    } catch (err) {
      log.error(
        { err, version: latest.id.toString() },
        'saved catalogue does not compile; keeping the catalogue in force',
      );
    }
  };
  await hot.subscribe(CATALOGUE_CHANNEL, () => {
    apply().catch((err: unknown) => log.error({ err }, 'could not read the saved catalogue'));
  });
  await apply();
}
