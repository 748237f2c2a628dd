// The report: one JSON document (the record), rendered as text tables for the terminal and as
// Markdown, and checked for shape before the run is called a success.

import type { Summary } from './stats.js';

export const REPORT_SCHEMA = 'airouter-bench/1';

export type Status = 'ok' | 'failed' | 'skipped';

export interface TargetCheck {
  name: string;
  target: string;
  value: number | null;
  unit: string;
  met: boolean | null;
  note?: string;
}

export interface ScenarioReport {
  id: string;
  title: string;
  status: Status;
  error?: string;
  notes: string[];
  gateway_crashes: number;
  wall_s: number;
  results: Record<string, unknown>;
}

export interface Report {
  schema: typeof REPORT_SCHEMA;
  mode: 'quick' | 'full';
  ok: boolean;
  started_at: string;
  finished_at: string;
  wall_s: number;
  command: string;
  machine: Record<string, unknown>;
  setup: Record<string, unknown>;
  options: Record<string, unknown>;
  scenarios: ScenarioReport[];
  summary: { ratios: Record<string, number | null>; targets: TargetCheck[] };
  problems: string[];
}

// ---------------------------------------------------------------- tables

type Cell = string | number | null | undefined;

export interface Table {
  title: string;
  head: string[];
  rows: Cell[][];
  notes?: string[];
}

const fmt = (c: Cell): string => {
  if (c === null || c === undefined) return '–';
  if (typeof c === 'number') {
    if (!Number.isFinite(c)) return '–';
    if (Number.isInteger(c)) return c.toLocaleString('en-US');
    return Math.abs(c) >= 100 ? c.toFixed(0) : Math.abs(c) >= 10 ? c.toFixed(1) : c.toFixed(2);
  }
  return c;
};

export function renderText(t: Table): string {
  const cells = [t.head, ...t.rows.map((r) => r.map(fmt))];
  const widths = t.head.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const out = [t.title, line(t.head), widths.map((w) => '─'.repeat(w)).join('  '), ...cells.slice(1).map(line)];
  for (const n of t.notes ?? []) out.push(`  ${n}`);
  return out.join('\n');
}

export function renderMarkdown(t: Table): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const out = [
    `### ${t.title}`,
    '',
    `| ${t.head.map(esc).join(' | ')} |`,
    `|${t.head.map((_, i) => (i === 0 ? ':---' : '---:')).join('|')}|`,
  ];
  for (const r of t.rows) out.push(`| ${r.map((c) => esc(fmt(c))).join(' | ')} |`);
  if (t.notes?.length) out.push('', ...t.notes.map((n) => `- ${n}`));
  return out.join('\n');
}

// ---------------------------------------------------------------- shape check

const isNum = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const isNumOrNull = (v: unknown) => v === null || isNum(v);

function checkSummary(s: unknown, where: string, problems: string[]): void {
  const o = s as Summary | undefined;
  if (!o || typeof o !== 'object') return void problems.push(`${where}: missing latency summary`);
  if (!isNum(o.count)) problems.push(`${where}.count is not a number`);
  for (const k of ['p50', 'p99', 'p999', 'max'] as const)
    if (!isNumOrNull(o[k])) problems.push(`${where}.${k} is not a number`);
  if (o.count > 0 && !isNum(o.p50)) problems.push(`${where}: samples but no p50`);
}

/** Problems with the report's shape (empty when well-formed). */
export function validateReport(r: Report): string[] {
  const problems: string[] = [];
  if (r.schema !== REPORT_SCHEMA) problems.push('schema tag missing');
  if (!['quick', 'full'].includes(r.mode)) problems.push('mode is neither quick nor full');
  for (const k of ['started_at', 'finished_at', 'command'] as const)
    if (typeof r[k] !== 'string' || r[k] === '') problems.push(`${k} missing`);
  if (!isNum(r.wall_s)) problems.push('wall_s missing');
  if (!isNum(r.machine?.cores)) problems.push('machine.cores missing');
  const rt = r.machine?.runtime as { node?: unknown; abi?: unknown } | undefined;
  if (typeof rt?.node !== 'string' || typeof rt.abi !== 'string')
    problems.push('machine.runtime (the Node the figures were taken on) missing');
  if (!isNum((r.setup?.gateway as { workers?: number } | undefined)?.workers))
    problems.push('setup.gateway.workers missing');
  if (typeof r.setup?.shared_cores !== 'boolean') problems.push('setup.shared_cores missing');
  if (!Array.isArray(r.scenarios) || r.scenarios.length === 0) problems.push('no scenarios');
  for (const s of r.scenarios ?? []) {
    const where = `scenario ${s.id}`;
    if (!['ok', 'failed', 'skipped'].includes(s.status)) problems.push(`${where}: bad status`);
    if (s.status === 'failed' && !s.error) problems.push(`${where}: failed without an error`);
    if (s.status !== 'ok') continue;
    const res = s.results as Record<string, any>;
    if (s.id === 'throughput' || s.id === 'latency') {
      const targets = res.targets as Record<string, any> | undefined;
      if (!targets?.gateway || targets.gateway.status !== 'ok') problems.push(`${where}: no gateway result`);
      for (const [name, t] of Object.entries(targets ?? {})) {
        if (t.status !== 'ok') continue;
        if (s.id === 'throughput') {
          if (!(t.rps > 0)) problems.push(`${where}/${name}: rps not positive`);
          for (const k of ['p50', 'p99', 'p999'])
            if (!isNumOrNull(t.latency_ms?.[k])) problems.push(`${where}/${name}: latency_ms.${k} not a number`);
        } else checkSummary(t.latency_ms, `${where}/${name}.latency_ms`, problems);
      }
    } else if (s.id === 'streams' || s.id === 'cross') {
      const levels = res.levels as any[] | undefined;
      if (!Array.isArray(levels) || levels.length === 0) problems.push(`${where}: no levels`);
      for (const l of levels ?? []) {
        if (!l.targets?.gateway || l.targets.gateway.status !== 'ok')
          problems.push(`${where}/${l.streams}: no gateway result`);
        for (const [name, t] of Object.entries(l.targets ?? {}) as [string, any][]) {
          if (t.status !== 'ok') continue;
          checkSummary(t.ttft_ms, `${where}/${l.streams}/${name}.ttft_ms`, problems);
          checkSummary(t.inter_token_ms, `${where}/${l.streams}/${name}.inter_token_ms`, problems);
          if (!(t.completed > 0)) problems.push(`${where}/${l.streams}/${name}: no completed streams`);
        }
        const gw = l.targets?.gateway;
        if (gw?.status === 'ok' && !isNum(gw.proxy?.rss_peak_mb))
          problems.push(`${where}/${l.streams}: gateway RSS missing`);
      }
    } else if (s.id === 'slow') {
      if (!isNum(res.upstream?.backpressure_events)) problems.push(`${where}: upstream backpressure events missing`);
      if (!isNum(res.gateway?.rss_growth_mb)) problems.push(`${where}: gateway RSS growth missing`);
    }
  }
  if (!Array.isArray(r.summary?.targets)) problems.push('summary.targets missing');
  return problems;
}
