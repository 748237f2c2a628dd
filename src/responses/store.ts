// The Responses surface's stored answers (sql/020_responses.sql): saved once an answer is
// complete unless the client sent `store: false`, read back by `previous_response_id` and by
// GET /v1/responses/{id}, owned by the key's user (another user's id is not found).

import { createHash } from 'node:crypto';
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
}

export async function saveResponse(sql: Sql, r: StoredResponse, ttlDays: number): Promise<void> {
  await sql`
    INSERT INTO responses (id, user_id, model, provider, upstream_stored, input, response, expires_at)
    VALUES (${r.id}, ${r.userId}, ${r.model}, ${r.provider}, ${r.upstreamStored}, ${sql.json(r.input as never)}, ${sql.json(r.response as never)},
            now() + make_interval(days => ${ttlDays}))
    ON CONFLICT (id) DO NOTHING`;
}

export async function loadResponse(sql: Sql, userId: string, id: string): Promise<StoredResponse | undefined> {
  const [row] = await sql<{ id: string; user_id: string; model: string; provider: string; upstream_stored: boolean; input: Record<string, unknown>[]; response: Record<string, unknown> }[]>`
    SELECT id, user_id, model, provider, upstream_stored, input, response FROM responses
    WHERE id = ${id} AND user_id = ${userId} AND expires_at > now()`;
  if (!row) return undefined;
  return { id: row.id, userId: row.user_id, model: row.model, provider: row.provider, upstreamStored: row.upstream_stored, input: row.input, response: row.response };
}

export async function deleteResponse(sql: Sql, userId: string, id: string): Promise<boolean> {
  const rows = await sql`DELETE FROM responses WHERE id = ${id} AND user_id = ${userId} AND expires_at > now() RETURNING id`;
  return rows.length > 0;
}

/** Rows past their time; run now and then by the primary. */
export async function sweepResponses(sql: Sql): Promise<number> {
  const rows = await sql`DELETE FROM responses WHERE expires_at <= now() RETURNING id`;
  return rows.length;
}

/** A request's `input` as items (a string is one user message). */
export function inputItems(input: unknown): Record<string, unknown>[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return Array.isArray(input) ? (input as Record<string, unknown>[]) : [];
}

/**
 * What a continuation of `prev` sends before its own input: `prev`'s input and its output. A
 * reasoning item is replayed only with its encrypted content: without it the item names state
 * only its vendor has, and no other upstream (nor that one, unstored) can read it.
 */
export function history(prev: StoredResponse): Record<string, unknown>[] {
  const output = Array.isArray(prev.response.output) ? (prev.response.output as Record<string, unknown>[]) : [];
  return [...prev.input, ...output].filter((item) => item?.type !== 'reasoning' || typeof item.encrypted_content === 'string');
}

/** The items of GET /v1/responses/{id}/input_items: each with an id, as the API lists them. */
export function listedInput(r: StoredResponse): Record<string, unknown>[] {
  return r.input.map((item, i) => {
    if (typeof item.id === 'string') return item;
    const id = `msg_${createHash('sha256').update(`${r.id}:${i}`).digest('hex').slice(0, 40)}`;
    return { id, ...(item.type === undefined ? { type: 'message' } : {}), ...item };
  });
}
