// /api/admin/catalogue: the catalogue in force, exported and imported as the catalogue file's
// JSON, and edited a model at a time (prices, routes and their order, enabled or not, the
// upstream's cost per route). Every save is a new version in Postgres, in force in every
// gateway process at once (src/catalogue/stored.ts).

import { CatalogueError } from '../catalogue/index.js';
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

  /** Checks, saves a version with its audit entry, puts it in force here and tells the others. */
  async function save(actor: Actor, doc: unknown, action: string, target: string | null): Promise<Reply> {
    let compiled;
    try {
      compiled = compileStored(doc, 'catalogue');
    } catch (err) {
      if (err instanceof CatalogueError) throw badRequest('invalid_catalogue', err.message);
      throw err;
    }
    const id = await sql.begin(async (tx) => {
      const before = await latestVersion(tx);
      const [row] = await tx<{ id: bigint }[]>`INSERT INTO catalogue_versions (doc, actor) VALUES (${tx.json(doc as never)}, ${actor.label}) RETURNING id`;
      await recordAudit(tx, actor, {
        action, target,
        before: { version: before?.id.toString() ?? 'file', ...(target ? { model: modelOf(before?.doc ?? fileDocument(gw.catalogue.configPath), target) } : {}) },
        after: { version: row.id.toString(), ...(target ? { model: modelOf(doc, target) } : { models: compiled.list.length }) },
      });
      return row.id;
    });
    gw.catalogue.useStored(compiled);
    await gw.hot.publish(CATALOGUE_CHANNEL, id.toString());
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

const modelOf = (doc: unknown, id: string) => (doc as Doc).models.find((m) => m.id === id) ?? null;

function decodeURIComponentSafe(s: string | undefined): string {
  try {
    return decodeURIComponent(s ?? '');
  } catch {
    return '';
  }
}
