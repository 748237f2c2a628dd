// /api/admin/providers: the upstream providers and their API keys. A provider is an entry of the
// catalogue (each change a new saved version, src/admin/catalogue.ts); its keys are rows of their
// own, sealed (src/upstream/key-vault.ts), picked per call by weight (src/upstream/provider-keys.ts).
// A key is shown in full only by whoever typed it: the API answers with its last four characters.

import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { compileProvider } from '../catalogue/index.js';
import { ID_PATTERN, ProviderSchema } from '../catalogue/schema.js';
import { DIALECT_NAMES } from '../dialects/names.js';
import { badRequest, conflict, notFound } from '../dashboard/errors.js';
import type { Reply } from '../dashboard/http.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import { keyHint, NO_SECRET } from '../upstream/key-vault.js';
import { isNoKey, keyLabel, PROVIDER_KEYS_CHANNEL } from '../upstream/provider-keys.js';
import { probeProvider } from '../upstream/probe.js';
import { recordAudit } from './audit.js';
import { catalogueDocs } from './catalogue.js';
import type { AdminCall } from './http.js';
import {
  NewProviderBody,
  NewProviderKeyBody,
  ProviderKeyPatchBody,
  ProviderPatchBody,
  ProviderTestBody,
  type AdminProviderListT,
  type AdminProviderT,
  type ProviderKeyInfoT,
  type ProviderTestAnswerT,
} from './shapes.js';

type Entry = {
  id: string;
  dialect: string;
  base_url: string;
  max_tokens_field?: string;
  api_key?: { env: string };
  enabled?: boolean;
  [k: string]: unknown;
};
type Route = { provider: string; model: string };
type Doc = { providers: Entry[]; models: { id: string; kind?: string; routes: Route[] }[] };

interface KeyRow {
  id: string;
  provider_id: string;
  label: string;
  hint: string;
  weight: number;
  enabled: boolean;
  created_by: string;
  created_at: Date;
}

const keyInfo = (r: KeyRow): ProviderKeyInfoT => ({
  id: r.id,
  label: r.label,
  hint: r.hint,
  weight: r.weight,
  enabled: r.enabled,
  created_by: r.created_by,
  created_at: r.created_at.toISOString(),
});

export function providerHandlers(gw: Gateway) {
  const sql = gw.sql;
  const docs = catalogueDocs(gw);
  const keys = gw.routes.keys;

  async function document(): Promise<{ doc: Doc; source: 'postgres' | 'file' }> {
    const { doc, state } = await docs.current();
    return { doc: doc as unknown as Doc, source: state.source };
  }

  function describe(p: Entry, doc: Doc, rows: KeyRow[]): AdminProviderT {
    const env = p.api_key?.env;
    const saved = keys.saved(p.id);
    const picked = keys.pick({ id: p.id, apiKeyEnv: env });
    return {
      id: p.id,
      dialect: p.dialect,
      base_url: p.base_url,
      max_tokens_field: p.max_tokens_field ?? null,
      enabled: p.enabled !== false,
      api_key_env: env ? { name: env, set: Boolean(process.env[env]) } : null,
      keys: rows.filter((r) => r.provider_id === p.id).map(keyInfo),
      unopened_keys: saved.unopened,
      key_source: isNoKey(picked) ? 'missing' : saved.usable > 0 ? 'saved' : env ? 'env' : 'none',
      models: doc.models.filter((m) => m.routes.some((r) => r.provider === p.id)).map((m) => m.id),
    };
  }

  async function list(): Promise<Reply> {
    const { doc, source } = await document();
    const rows = await sql<
      KeyRow[]
    >`SELECT id, provider_id, label, hint, weight, enabled, created_by, created_at FROM provider_keys ORDER BY created_at, id`;
    const body: AdminProviderListT = {
      data: doc.providers.map((p) => describe(p, doc, rows)),
      dialects: [...DIALECT_NAMES],
      can_save_keys: keys.vault !== undefined,
      catalogue_source: source,
    };
    return { status: 200, body };
  }

  async function one(id: string): Promise<AdminProviderT> {
    const { doc } = await document();
    const p = doc.providers.find((x) => x.id === id);
    if (!p) throw notFound(`No provider ${id} in the catalogue.`);
    const rows = await sql<
      KeyRow[]
    >`SELECT id, provider_id, label, hint, weight, enabled, created_by, created_at FROM provider_keys WHERE provider_id = ${id} ORDER BY created_at, id`;
    return describe(p, doc, rows);
  }

  /** The entry with `fields` applied, checked as the catalogue file checks one (its message names the field). */
  function applied(base: Entry, fields: v.InferOutput<typeof ProviderPatchBody>): Entry {
    const next: Entry = { ...base };
    if (fields.dialect !== undefined) next.dialect = fields.dialect;
    if (fields.base_url !== undefined) next.base_url = fields.base_url;
    if (fields.max_tokens_field !== undefined) next.max_tokens_field = fields.max_tokens_field;
    if (fields.enabled !== undefined) next.enabled = fields.enabled;
    if (fields.api_key_env === null) delete next.api_key;
    else if (fields.api_key_env !== undefined) next.api_key = { env: fields.api_key_env };
    const parsed = v.safeParse(ProviderSchema, next);
    if (!parsed.success) {
      const issue = parsed.issues[0];
      const field = String(issue.path?.[0]?.key ?? 'body');
      throw badRequest('invalid_request', `${field === 'api_key' ? 'api_key_env' : field} ${issue.message}.`, {
        param: field,
      });
    }
    return next;
  }

  async function create(_ex: Exchange, call: AdminCall): Promise<Reply> {
    const body = await call.body(NewProviderBody);
    const { doc } = await document();
    if (doc.providers.some((p) => p.id === body.id))
      throw conflict('provider_exists', `There is already a provider "${body.id}".`);
    const entry = applied({ id: body.id, dialect: body.dialect, base_url: body.base_url }, body);
    await docs.save(call.actor, { ...doc, providers: [...doc.providers, entry] }, 'provider.add', body.id);
    return { status: 201, body: await one(body.id) };
  }

  /** /providers/{id}[/keys[/{key}]|/test] */
  async function act(ex: Exchange, call: AdminCall): Promise<Reply> {
    const [rawId, what, keyId, more] = call.rest;
    const id = decode(rawId);
    if (more !== undefined) throw notFound(`No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
    // What no provider can be called (a control character, say) is not looked up anywhere.
    if (!ID_PATTERN.test(id)) throw notFound(`No provider ${JSON.stringify(id.slice(0, 130))} in the catalogue.`);
    if (what === undefined && ex.method === 'GET') return { status: 200, body: await one(id) };
    if (what === undefined && ex.method === 'POST') return patch(id, call);
    if (what === 'keys' && keyId === undefined && ex.method === 'POST') return addKey(id, call);
    if (what === 'keys' && keyId !== undefined && ex.method === 'POST') return patchKey(id, keyId, call);
    if (what === 'keys' && keyId !== undefined && ex.method === 'DELETE') return deleteKey(id, keyId, call);
    if (what === 'test' && keyId === undefined && ex.method === 'POST') return test(id, call);
    throw notFound(`No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
  }

  async function patch(id: string, call: AdminCall): Promise<Reply> {
    const fields = await call.body(ProviderPatchBody);
    const { doc } = await document();
    const i = doc.providers.findIndex((p) => p.id === id);
    if (i < 0) throw notFound(`No provider ${id} in the catalogue.`);
    const providers = doc.providers.slice();
    providers[i] = applied(providers[i]!, fields);
    await docs.save(call.actor, { ...doc, providers }, 'provider.change', id);
    return { status: 200, body: await one(id) };
  }

  async function exists(id: string): Promise<void> {
    const { doc } = await document();
    if (!doc.providers.some((p) => p.id === id)) throw notFound(`No provider ${id} in the catalogue.`);
  }

  /** Every process reads the keys again; this one before it answers. */
  async function keysChanged(): Promise<void> {
    await keys.load();
    await gw.hot.publish(PROVIDER_KEYS_CHANNEL, '1');
  }

  async function addKey(providerId: string, call: AdminCall): Promise<Reply> {
    const body = await call.body(NewProviderKeyBody);
    await exists(providerId);
    if (!keys.vault) throw conflict('provider_key_secret_missing', NO_SECRET);
    const id = randomUUID();
    const sealed = keys.vault.seal(body.key, id);
    const hint = keyHint(body.key);
    const [row] = await sql.begin(async (tx) => {
      const rows = await tx<KeyRow[]>`
        INSERT INTO provider_keys (id, provider_id, label, sealed, hint, weight, created_by)
        VALUES (${id}, ${providerId}, ${body.label ?? ''}, ${sealed}, ${hint}, ${body.weight ?? 1}, ${call.actor.label})
        RETURNING id, provider_id, label, hint, weight, enabled, created_by, created_at`;
      await recordAudit(tx, call.actor, {
        action: 'provider.key_add',
        target: providerId,
        after: { key: hint, label: body.label ?? '', weight: body.weight ?? 1 },
      });
      return rows;
    });
    await keysChanged();
    return { status: 201, body: keyInfo(row!) };
  }

  async function patchKey(providerId: string, keyId: string, call: AdminCall): Promise<Reply> {
    const body = await call.body(ProviderKeyPatchBody);
    const row = await sql.begin(async (tx) => {
      const [before] = await tx<
        KeyRow[]
      >`SELECT id, provider_id, label, hint, weight, enabled, created_by, created_at FROM provider_keys WHERE id = ${uuidOr(keyId)} AND provider_id = ${providerId} FOR UPDATE`;
      if (!before) throw notFound(`No key ${keyId} of provider ${providerId}.`);
      const [after] = await tx<KeyRow[]>`
        UPDATE provider_keys SET label = ${body.label ?? before.label}, weight = ${body.weight ?? before.weight}, enabled = ${body.enabled ?? before.enabled}
        WHERE id = ${before.id} RETURNING id, provider_id, label, hint, weight, enabled, created_by, created_at`;
      await recordAudit(tx, call.actor, {
        action: 'provider.key_change',
        target: providerId,
        before: keyAudit(before),
        after: keyAudit(after!),
      });
      return after!;
    });
    await keysChanged();
    return { status: 200, body: keyInfo(row) };
  }

  async function deleteKey(providerId: string, keyId: string, call: AdminCall): Promise<Reply> {
    await sql.begin(async (tx) => {
      const [gone] = await tx<
        KeyRow[]
      >`DELETE FROM provider_keys WHERE id = ${uuidOr(keyId)} AND provider_id = ${providerId} RETURNING id, provider_id, label, hint, weight, enabled, created_by, created_at`;
      if (!gone) throw notFound(`No key ${keyId} of provider ${providerId}.`);
      await recordAudit(tx, call.actor, { action: 'provider.key_delete', target: providerId, before: keyAudit(gone) });
    });
    await keysChanged();
    return { status: 200, body: await one(providerId) };
  }

  /** One real call per usable key (or with the environment's key): what the vendor says to each. */
  async function test(providerId: string, call: AdminCall): Promise<Reply> {
    const body = await call.body(ProviderTestBody);
    const { doc } = await document();
    const entry = doc.providers.find((p) => p.id === providerId);
    if (!entry) throw notFound(`No provider ${providerId} in the catalogue.`);
    const routed = doc.models.flatMap((m) =>
      m.routes
        .filter((r) => r.provider === providerId)
        .map((r) => ({ model: r.model, embedding: m.kind === 'embedding' })),
    );
    const target =
      body.model !== undefined
        ? { model: body.model, embedding: routed.find((r) => r.model === body.model)?.embedding ?? false }
        : routed[0];
    if (!target)
      throw badRequest(
        'invalid_request',
        `No model is routed to provider "${providerId}": name the upstream model to try in "model".`,
        { param: 'model' },
      );
    const provider = compileProvider(v.parse(ProviderSchema, entry));
    const rows = await sql<{ id: string; label: string; hint: string; sealed: Buffer }[]>`
      SELECT id, label, hint, sealed FROM provider_keys WHERE provider_id = ${providerId} AND enabled ORDER BY created_at, id`;
    const tries: { label: string; value: string | undefined }[] = [];
    for (const r of rows) {
      const label = keyLabel(r.label, r.hint);
      try {
        if (!keys.vault) throw new Error('no PROVIDER_KEY_SECRET');
        tries.push({ label, value: keys.vault.open(r.sealed, r.id) });
      } catch {
        tries.push({ label, value: undefined });
      }
    }
    if (tries.length === 0) {
      const picked = keys.pick(provider);
      if (isNoKey(picked))
        throw badRequest(
          'provider_key_missing',
          `${picked.missing.replace(/^provider "[^"]*"/, `Provider "${providerId}"`)}.`,
        );
      tries.push({ label: picked.label, value: picked.value });
    }
    const results = [];
    for (const t of tries) {
      const r =
        t.value === undefined && rows.length > 0
          ? {
              ok: false,
              status: null,
              latency_ms: 0,
              message: 'This key cannot be opened: PROVIDER_KEY_SECRET is unset or not the one it was saved with.',
            }
          : await probeProvider(gw.routes.client, provider, target.model, target.embedding, t.value, gw.config);
      results.push({ key: t.label, ...r });
    }
    const answer: ProviderTestAnswerT = { provider: providerId, model: target.model, results };
    return { status: 200, body: answer };
  }

  return { list, create, act };
}

const keyAudit = (r: KeyRow) => ({ key: r.hint, label: r.label, weight: r.weight, enabled: r.enabled });

/** A key id that is not a UUID matches no row, rather than failing the query. */
const uuidOr = (s: string) =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)
    ? s
    : '00000000-0000-0000-0000-000000000000';

function decode(s: string | undefined): string {
  try {
    return decodeURIComponent(s ?? '');
  } catch {
    return '';
  }
}
