// /api/admin/catalogue: the catalogue in force, exported and imported as the catalogue file's
// JSON, and edited a model at a time (prices, routes and their order, enabled or not, the
// upstream's cost per route). Every save is a new version in Postgres, in force in every
// gateway process at once (src/catalogue/stored.ts).

import { catalogueFile, CatalogueError, type CatalogueHolder } from '../catalogue/index.js';
import type { Bus } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { CATALOGUE_CHANNEL, compileStored, fileDocument, latestVersion } from '../catalogue/stored.js';
import { isDeepStrictEqual } from 'node:util';
import { badRequest, conflict, notFound } from '../dashboard/errors.js';
import type { Reply } from '../dashboard/http.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import { recordAudit, type Actor } from './audit.js';
import type { AdminCall } from './http.js';
import { ModelPatchBody, NewModelBody, type CatalogueStateT } from './shapes.js';
import * as v from 'valibot';

export const CATALOGUE_BODY_LIMIT = 4 * 1024 * 1024;

type Doc = { providers: Record<string, unknown>[]; models: Record<string, unknown>[] };

/** The document in force for the console (the newest saved version, else the file's), and saving a new one. */
export function catalogueDocs(gw: Gateway) {
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
        file: fileState(gw, latest?.doc),
        in_service: gw.catalogue.current.list.map((m) => ({ id: m.id, routes: m.routes.map((r) => r.key) })),
        document: doc,
      },
    };
  }

  /** Saves `doc` as a new version in force everywhere; a document that does not compile is the caller's 400. */
  async function save(actor: Actor, doc: unknown, action: string, target: string | null): Promise<Reply> {
    try {
      await saveCatalogue(sql, gw.hot, actor, doc, {
        action,
        target,
        configPath: gw.catalogue.configPath,
        holder: gw.catalogue,
      });
    } catch (err) {
      if (err instanceof CatalogueError) throw badRequest('invalid_catalogue', err.message);
      throw err;
    }
    return { status: 200, body: (await current()).state };
  }

  return { current, save };
}

/** Which file the gateway reads, and whether it says something else than the saved version in force. */
function fileState(gw: Gateway, saved: unknown): CatalogueStateT['file'] {
  const name = gw.catalogue.configPath ?? (catalogueFile(undefined) ? 'gateway.config.json' : null);
  let doc: unknown;
  try {
    doc = fileDocument(gw.catalogue.configPath);
  } catch (err) {
    return { path: name, readable: false, differs: saved !== undefined, error: (err as Error).message.slice(0, 500) };
  }
  return {
    path: name,
    readable: true,
    differs: saved !== undefined && !isDeepStrictEqual(stripOperator(saved), stripOperator(doc)),
    error: null,
  };
}

/** A document without the fields only the console writes, to tell whether the file was edited since. */
function stripOperator(doc: unknown): unknown {
  const d = doc as Doc;
  if (!d || !Array.isArray(d.models) || !Array.isArray(d.providers)) return doc;
  return {
    providers: d.providers.map((p) => omit(p, 'enabled')),
    models: d.models.map((m) => ({
      ...omit(m, 'enabled'),
      routes: (m.routes as Record<string, unknown>[]).map((r) => omit(r, 'enabled', 'upstream_pricing')),
    })),
  };
}

const omit = (o: Record<string, unknown>, ...keys: string[]) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

export function catalogueHandlers(gw: Gateway) {
  const { current, save } = catalogueDocs(gw);

  async function get(): Promise<Reply> {
    return { status: 200, body: (await current()).state };
  }

  async function exportFile(): Promise<Reply> {
    const { doc } = await current();
    return {
      status: 200,
      json: JSON.stringify(doc, null, 2),
      headers: { 'content-disposition': 'attachment; filename="gateway.config.json"' },
    };
  }

  /** POST /catalogue: the whole file, as exported (or written for GATEWAY_CONFIG). */
  async function importFile(_ex: Exchange, call: AdminCall): Promise<Reply> {
    const doc = await call.body(v.unknown());
    return save(call.actor, doc, 'catalogue.import', null);
  }

  /**
   * POST /catalogue/models/{id}: change one model, what is left out stays. POST
   * /catalogue/models: add one. POST /catalogue/load-file: the file in force again.
   */
  async function act(ex: Exchange, call: AdminCall): Promise<Reply> {
    const [what, id, more] = call.rest;
    if (ex.method === 'POST' && what === 'models' && id === undefined) return addModel(call);
    if (ex.method === 'POST' && what === 'load-file' && id === undefined) return loadFile(call);
    if (ex.method !== 'POST' || what !== 'models' || id === undefined || more !== undefined)
      throw notFound(`No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
    const modelId = decodeURIComponentSafe(id);
    const patch = await call.body(ModelPatchBody);
    const { doc } = await current();
    const next: Doc = structuredClone(doc);
    const m = next.models.find((x) => x.id === modelId);
    if (!m) throw notFound(`No model ${modelId} in the catalogue.`);
    for (const [k, value] of Object.entries(patch)) if (value !== undefined) m[k] = value;
    return save(call.actor, next, 'catalogue.model', modelId);
  }

  async function addModel(call: AdminCall): Promise<Reply> {
    const model = await call.body(NewModelBody);
    const { doc } = await current();
    if (doc.models.some((m) => m.id === model.id))
      throw conflict(
        'model_exists',
        `The catalogue already has a model "${model.id}": change it with POST /api/admin/catalogue/models/${encodeURIComponent(model.id)}.`,
      );
    const next: Doc = { ...doc, models: [...doc.models, model] };
    return save(call.actor, next, 'catalogue.model_add', model.id);
  }

  async function loadFile(call: AdminCall): Promise<Reply> {
    await call.body(v.object({}, 'must be a JSON object'));
    let doc: unknown;
    try {
      doc = fileDocument(gw.catalogue.configPath);
    } catch (err) {
      throw badRequest('invalid_catalogue', `The catalogue file cannot be read: ${(err as Error).message}`);
    }
    return save(call.actor, doc, 'catalogue.load_file', null);
  }

  return { get, exportFile, importFile, act };
}

/**
 * Checks a document, saves it as a version with its audit entry, puts it in force in `holder`
 * (this process) and tells every other gateway process. Throws CatalogueError for a document
 * that does not compile; nothing is saved then. Shared by the API and the command line.
 */
export async function saveCatalogue(
  sql: Sql,
  hot: Bus,
  actor: Actor,
  doc: unknown,
  o: { action: string; target: string | null; configPath: string | undefined; holder?: CatalogueHolder },
): Promise<bigint> {
  const compiled = compileStored(doc, 'catalogue');
  const id = await sql.begin(async (tx) => {
    const before = await latestVersion(tx);
    const [row] = await tx<
      { id: bigint }[]
    >`INSERT INTO catalogue_versions (doc, actor) VALUES (${tx.json(doc as never)}, ${actor.label}) RETURNING id`;
    await recordAudit(tx, actor, {
      action: o.action,
      target: o.target,
      before: {
        version: before?.id.toString() ?? 'file',
        ...(o.target ? { model: modelOf(before?.doc ?? fileDocument(o.configPath), o.target) } : {}),
      },
      after: {
        version: row.id.toString(),
        ...(o.target ? { model: modelOf(doc, o.target) } : { models: compiled.list.length }),
      },
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
