// Numbered migrations from sql/, each applied once and recorded. The whole run holds a
// transaction-scoped advisory lock, so processes starting together queue instead of racing.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../paths.js';
import type { Sql } from './sql.js';

export const SQL_DIR = path.join(ROOT, 'sql');
const LOCK_ID = 0x6169_726f; // "airo"

export interface Migration {
  version: number;
  name: string;
  text: string;
}

export function listMigrations(dir = SQL_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .map((f) => ({ version: Number(f.split('_')[0]), name: f, text: readFileSync(path.join(dir, f), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/** Applies what is missing; returns the names applied by this call. */
export async function migrate(sql: Sql, dir = SQL_DIR): Promise<string[]> {
  const migrations = listMigrations(dir);
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${LOCK_ID})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set(
      (await tx<{ version: number }[]>`SELECT version FROM schema_migrations`).map((r) => r.version),
    );
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.text);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      applied.push(m.name);
    }
    return applied;
  }) as Promise<string[]>;
}
