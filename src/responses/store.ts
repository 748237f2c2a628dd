// The Responses surface's stored answers (sql/020_responses.sql): saved once an answer is
// complete unless the client sent `store: false`, read back by `previous_response_id` and by
// GET /v1/responses/{id}, owned by the key's user (another user's id is not found).

import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.js';
import type { Sql } from '../store/sql.js';

export interface StoredResponse {
  id: string;
  userId: string;
  model: string;
  /** The provider that answered. */
  provider: string;
  /** The vendor kept the answer too (a Responses provider asked with `store`). */
  upstreamStored: boolean;
  /** Every input item the answer saw, its history included. */
  input: Record<string, unknown>[];
  /** The response object as the client got it. */
  response: Record<string, unknown>;
  /** What it takes stored, as JSON (set when read back). */
  bytes?: number;
}

/** Keeps `r` for `ttlDays`; false, keeping nothing, when it is larger than `maxBytes` as JSON. */
export async function saveResponse(sql: Sql, r: StoredResponse, ttlDays: number, maxBytes: number): Promise<boolean> {
  const input = JSON.stringify(r.input);
  const response = JSON.stringify(r.response);
  const inputBytes = Buffer.byteLength(input);
  const responseBytes = Buffer.byteLength(response);
  if (inputBytes + responseBytes > maxBytes) return false;
  // Passed as text, then cast: a parameter cast to jsonb straight is JSON-encoded again (a string).
  await sql`
    INSERT INTO responses (id, user_id, model, provider, upstream_stored, input, response, input_bytes, response_bytes, expires_at)
    VALUES (${r.id}, ${r.userId}, ${r.model}, ${r.provider}, ${r.upstreamStored}, ${input}::text::jsonb, ${response}::text::jsonb, ${inputBytes}, ${responseBytes},
            now() + make_interval(days => ${ttlDays}))
    ON CONFLICT (id) DO NOTHING`;
  return true;
}

/** What the user's live stored answers take, in bytes of JSON. */
export async function storedBytes(sql: Sql, userId: string): Promise<number> {
  const [row] = await sql<{ n: string }[]>`
    SELECT coalesce(sum(input_bytes + response_bytes), 0)::text AS n FROM responses WHERE user_id = ${userId} AND expires_at > now()`;
  return Number(row!.n);
}

/** The size of one of the user's stored answers (its response object, or its input), before it is read; undefined when there is none. */
export async function storedSize(
  sql: Sql,
  userId: string,
  id: string,
  part: 'response' | 'input',
): Promise<number | undefined> {
  const [row] = await sql<{ n: string }[]>`
    SELECT (CASE WHEN ${part} = 'input' THEN input_bytes ELSE response_bytes END)::text AS n
    FROM responses WHERE id = ${id} AND user_id = ${userId} AND expires_at > now()`;
  return row ? Number(row.n) : undefined;
}

/** The stored response object as the JSON text Postgres keeps: sent on as it is, never parsed here. */
export async function responseText(sql: Sql, userId: string, id: string): Promise<string | undefined> {
  const [row] = await sql<{ response: string }[]>`
    SELECT response::text AS response FROM responses WHERE id = ${id} AND user_id = ${userId} AND expires_at > now()`;
  return row?.response;
}

export async function loadResponse(sql: Sql, userId: string, id: string): Promise<StoredResponse | undefined> {
  const [row] = await sql<
    {
      id: string;
      user_id: string;
      model: string;
      provider: string;
      upstream_stored: boolean;
      input: Record<string, unknown>[];
      response: Record<string, unknown>;
      bytes: string;
    }[]
  >`
    SELECT id, user_id, model, provider, upstream_stored, input, response, (input_bytes + response_bytes)::text AS bytes FROM responses
    WHERE id = ${id} AND user_id = ${userId} AND expires_at > now()`;
  if (!row) return undefined;
  return {
    id: row.id,
    userId: row.user_id,
    model: row.model,
    provider: row.provider,
    upstreamStored: row.upstream_stored,
    input: row.input,
    response: row.response,
    bytes: Number(row.bytes),
  };
}

export async function deleteResponse(sql: Sql, userId: string, id: string): Promise<boolean> {
  const rows =
    await sql`DELETE FROM responses WHERE id = ${id} AND user_id = ${userId} AND expires_at > now() RETURNING id`;
  return rows.length > 0;
}

/** Deletes the rows past their time (every gateway process, now and then: see startResponsesSweeper). */
export async function sweepResponses(sql: Sql): Promise<number> {
  const rows = await sql`DELETE FROM responses WHERE expires_at <= now() RETURNING id`;
  return rows.length;
}

const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * Expired answers leave the table (and their bytes their user's quota) every ten minutes; reads
 * never see them meanwhile. Every process runs it: the DELETE is idempotent. Returns its stop.
 */
export function startResponsesSweeper(sql: Sql, log: Logger, clock: Clock = systemClock): () => void {
  return clock.every(SWEEP_EVERY_MS, () =>
    sweepResponses(sql).then(
      (n) => {
        if (n > 0) log.info({ deleted: n }, 'expired responses deleted');
      },
      (err: unknown) => log.warn({ err }, 'responses sweeper: could not delete expired responses'),
    ),
  );
}

/** A request's `input` as items (a string is one user message). */
export function inputItems(input: unknown): Record<string, unknown>[] {
  if (typeof input === 'string')
    return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return Array.isArray(input) ? (input as Record<string, unknown>[]) : [];
}

/**
 * What a continuation of `prev` sends before its own input: `prev`'s input and its output. A
 * reasoning item is replayed only with its encrypted content: without it the item names state
 * only its vendor has, and no other upstream (nor that one, unstored) can read it.
 */
export function history(prev: StoredResponse): Record<string, unknown>[] {
  const output = Array.isArray(prev.response.output) ? (prev.response.output as Record<string, unknown>[]) : [];
  return [...prev.input, ...output].filter(
    (item) => item?.type !== 'reasoning' || typeof item.encrypted_content === 'string',
  );
}

/** The items of GET /v1/responses/{id}/input_items: each with an id, as the API lists them. */
export function listedInput(r: StoredResponse): Record<string, unknown>[] {
  return r.input.map((item, i) => {
    if (typeof item.id === 'string') return item;
    const id = `msg_${createHash('sha256').update(`${r.id}:${i}`).digest('hex').slice(0, 40)}`;
    return { id, ...(item.type === undefined ? { type: 'message' } : {}), ...item };
  });
}
