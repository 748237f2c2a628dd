// /api/admin/catalogue: the catalogue in force, exported and imported as the catalogue file's
// JSON, and edited a model at a time (prices, routes and their order, enabled or not, the
// upstream's cost per route). Every save is a new version in Postgres, in force in every
// gateway process at once (src/catalogue/stored.ts).

import { CatalogueError, type CatalogueHolder } from '../catalogue/index.js';
import type { HotStore } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { CATALOGUE_CHANNEL, compileStored, fileDocument, latestVersion } from '../catalogue/stored.js';
import { badRequest, notFound } from '../dashboard/errors.js';
import type { Reply } from '../dashboard/http.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import { recordAudit, type Actor } from './audit.js';
import type { AdminCall } from './http.js';
import { ModelPatchBody, type CatalogueStateT } from './shapes.js';
import * as v from 'valibot';

export const CATALOGUE_BODY_LIMIT = 4 * 1024 * 1024;

type Doc = { providers: unknown[]; models: Record<string, unknown>[] };

export function catalogueHandlers(gw: Gateway) {
  const sql = gw.sql;

  async function current(): Promise<{ doc: Doc; state: CatalogueStateT }> {
    const latest = await latestVersion(sql);
    const doc = (latest?.doc ?? fileDocument(gw.catalogue.configPath)) as Doc;
    return {
      doc,
      state: {
        version: latest ? latest.id.toString() : null,
        source: latest ? 'postgres' : 'file',
        saved_by: latest?.actor ?? null,
        saved_at: latest?.created_at.toISOString() ?? null,
        in_service: gw.catalogue.current.list.map((m) => ({ id: m.id, routes: m.routes.map((r) => r.key) })),
        document: doc,
      },
    };
  }

  async function save(actor: Actor, doc: unknown, action: string, target: string | null): Promise<Reply> {
    try {
      await saveCatalogue(sql, gw.hot, actor, doc, { action, target, configPath: gw.catalogue.configPath, holder: gw.catalogue });
    } catch (err) {
      if (err instanceof CatalogueError) throw badRequest('invalid_catalogue', err.message);
      throw err;
    }
    return { status: 200, body: (await current()).state };
  }

  async function get(): Promise<Reply> {
    return { status: 200, body: (await current()).state };
  }

  async function exportFile(): Promise<Reply> {
    const { doc } = await current();
    return { status: 200, json: JSON.stringify(doc, null, 2), headers: { 'content-disposition': 'attachment; filename="gateway.config.json"' } };
  }

  /** POST /catalogue: the whole file, as exported (or written for GATEWAY_CONFIG). */
  async function importFile(_ex: Exchange, call: AdminCall): Promise<Reply> {
    const doc = await call.body(v.unknown());
    return save(call.actor, doc, 'catalogue.import', null);
  }

  /** POST /catalogue/models/{id}: change one model; what is left out stays. */
  async function patchModel(ex: Exchange, call: AdminCall): Promise<Reply> {
    if (ex.method !== 'POST' || call.rest.length !== 2 || call.rest[0] !== 'models') throw notFound(`No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
    const modelId = decodeURIComponentSafe(call.rest[1]);
    const patch = await call.body(ModelPatchBody);
    const { doc } = await current();
    const next: Doc = structuredClone(doc);
    const m = next.models.find((x) => x.id === modelId);
    if (!m) throw notFound(`No model ${modelId} in the catalogue.`);
    for (const [k, value] of Object.entries(patch)) if (value !== undefined) m[k] = value;
    return save(call.actor, next, 'catalogue.model', modelId);
  }

  return { get, exportFile, importFile, patchModel };
}

/**
 * Checks a document, saves it as a version with its audit entry, puts it in force in `holder`
 * (this process) and tells every other gateway process. Throws CatalogueError for a document
 * that does not compile; nothing is saved then. Shared by the API and the command line.
 */
export async function saveCatalogue(
  sql: Sql,
  hot: HotStore,
  actor: Actor,
  doc: unknown,
  o: { action: string; target: string | null; configPath: string | undefined; holder?: CatalogueHolder },
): Promise<bigint> {
  const compiled = compileStored(doc, 'catalogue');
  const id = await sql.begin(async (tx) => {
    const before = await latestVersion(tx);
    const [row] = await tx<{ id: bigint }[]>`INSERT INTO catalogue_versions (doc, actor) VALUES (${tx.json(doc as never)}, ${actor.label}) RETURNING id`;
    await recordAudit(tx, actor, {
      action: o.action, target: o.target,
      before: { version: before?.id.toString() ?? 'file', ...(o.target ? { model: modelOf(before?.doc ?? fileDocument(o.configPath), o.target) } : {}) },
      after: { version: row.id.toString(), ...(o.target ? { model: modelOf(doc, o.target) } : { models: compiled.list.length }) },
    });
    return row.id;
  });
  o.holder?.useStored(compiled);
  await hot.publish(CATALOGUE_CHANNEL, id.toString());
  return id as bigint;
}

const modelOf = (doc: unknown, id: string) => (doc as Doc).models.find((m) => m.id === id) ?? null;

function decodeURIComponentSafe(s: string | undefined): string {
  try {
    return decodeURIComponent(s ?? '');
  } catch {
    return '';
  }
}
