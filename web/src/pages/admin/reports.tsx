// Admin: upstream health per route, revenue and margin, and the audit log.

import { dateTime, num, utcDay } from '../../format.js';
import { codeWord } from '../../i18n.js';
import { ErrorText, Money, Scroll, Section, useApp, useLoad } from '../../ui.js';
import { admin, type AuditListT, type HealthT, type RevenueT } from './client.js';
import { useAdminT, useAdminWord } from './i18n.js';
import { AdminShell } from './shell.js';

export function AdminHealth() {
  return (
    <AdminShell>
      <Health />
    </AdminShell>
  );
}
export function AdminRevenue() {
  return (
    <AdminShell>
      <Revenue />
    </AdminShell>
  );
}
export function AdminAudit() {
  return (
    <AdminShell>
      <Audit />
    </AdminShell>
  );
}

function Health() {
  const { lang } = useApp();
  const t = useAdminT();
  const h = useLoad(() => admin.get<HealthT>('/health'), []);
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  const causes = (c: HealthT['routes'][number]['day']['causes']) =>
    (Object.entries(c) as [keyof typeof c, number][])
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${t(`cause.${k}`)} ${num(lang, n)}`)
      .join(' · ');
  return (
    <Section title={t('admin.health')} wide page>
      <ErrorText error={h.error} />
      {h.data && (
        <Scroll label={t('admin.health')}>
          <table data-testid="admin-health">
            <thead>
              <tr>
                <th scope="col">{t('admin.route')}</th>
                <th scope="col" class="num">
                  {t('admin.now5')}
                </th>
                <th scope="col" class="num">
                  {t('admin.day')}
                </th>
                <th scope="col" class="num">
                  {t('admin.latency')}
                </th>
                <th scope="col">{t('health.causes')}</th>
                <th scope="col">{t('admin.cooling')}</th>
              </tr>
            </thead>
            <tbody>
              {h.data.routes.map((r) => (
                <tr key={r.route}>
                  <td>{r.route}</td>
                  <td class="num">
                    {num(lang, r.now.attempts)} · {t('admin.errors')} {pct(r.now.error_rate)}
                  </td>
                  <td class="num">
                    {num(lang, r.day.attempts)} · {t('admin.errors')} {pct(r.day.error_rate)}
                  </td>
                  <td class="num">{r.day.avg_latency_ms === null ? '—' : `${num(lang, r.day.avg_latency_ms)} ms`}</td>
                  <td data-testid="health-causes">{causes(r.day.causes) || '—'}</td>
                  <td>{dateTime(lang, r.cooling_until)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
    </Section>
  );
}

type MarginRow = Omit<RevenueT['per_day'][number], 'day'> & { key: string; label: string };

/** Revenue against the upstream's cost, one row a day or a model; a cost unpriced says so. */
function MarginTable(props: { title: string; first: string; rows: MarginRow[]; testid?: string }) {
  const { lang } = useApp();
  const t = useAdminT();
  const money = (v: string | null) => (v === null ? t('admin.unpriced') : <Money value={v} />);
  return (
    <>
      <h2>{props.title}</h2>
      <Scroll label={props.title}>
        <table data-testid={props.testid}>
          <thead>
            <tr>
              <th scope="col">{props.first}</th>
              <th scope="col" class="num">
                {t('admin.requests')}
              </th>
              <th scope="col" class="num">
                {t('admin.income')}
              </th>
              <th scope="col" class="num">
                {t('admin.upstreamCost')}
              </th>
              <th scope="col" class="num">
                {t('admin.margin')}
              </th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((row) => (
              <tr key={row.key}>
                <td>{row.label}</td>
                <td class="num">{num(lang, row.requests)}</td>
                <td class="num">
                  <Money value={row.income_usd} />
                </td>
                <td class="num">{money(row.upstream_cost_usd)}</td>
                <td class="num">{money(row.margin_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>
    </>
  );
}

function Revenue() {
  const { lang } = useApp();
  const t = useAdminT();
  const r = useLoad(() => admin.get<RevenueT>('/revenue?days=30'), []);
  return (
    <Section title={t('admin.revenue')} wide page>
      <ErrorText error={r.error} />
      {r.data && (
        <>
          <MarginTable
            title={t('admin.perDay')}
            first={t('admin.day1')}
            testid="admin-revenue"
            rows={r.data.per_day.map((d) => ({ ...d, key: d.day, label: utcDay(lang, d.day) }))}
          />
          <MarginTable
            title={t('admin.perModel')}
            first={t('admin.model')}
            rows={r.data.per_model.map((m) => ({ ...m, key: m.model, label: m.model }))}
          />
          <h2>{t('admin.depositsPerDay')}</h2>
          <Scroll label={t('admin.depositsPerDay')}>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('admin.day1')}</th>
                  <th scope="col">{t('admin.method')}</th>
                  <th scope="col" class="num">
                    {t('admin.count')}
                  </th>
                  <th scope="col" class="num">
                    {t('admin.credited')}
                  </th>
                </tr>
              </thead>
              <tbody>
                {r.data.deposits.map((d) => (
                  <tr key={`${d.day}/${d.method}`}>
                    <td>{utcDay(lang, d.day)}</td>
                    <td>{codeWord(lang, 'method', d.method)}</td>
                    <td class="num">{num(lang, d.count)}</td>
                    <td class="num">
                      <Money value={d.credited_usd} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
        </>
      )}
    </Section>
  );
}

function Audit() {
  const { lang } = useApp();
  const t = useAdminT();
  const a = useLoad(() => admin.get<AuditListT>('/audit?limit=200'), []);
  const word = useAdminWord();
  return (
    <Section title={t('admin.audit')} wide page>
      <ErrorText error={a.error} />
      {a.data && (
        <Scroll label={t('admin.audit')}>
          <table data-testid="admin-audit">
            <thead>
              <tr>
                <th scope="col">{t('admin.when')}</th>
                <th scope="col">{t('admin.who')}</th>
                <th scope="col">{t('admin.what')}</th>
                <th scope="col">{t('admin.target')}</th>
                <th scope="col">{t('admin.reason')}</th>
                <th scope="col">{t('admin.change')}</th>
              </tr>
            </thead>
            <tbody>
              {a.data.data.map((e) => (
                <tr key={e.id}>
                  <td>{dateTime(lang, e.created_at)}</td>
                  <td>{e.actor}</td>
                  <td title={e.action}>{word('audit', e.action)}</td>
                  <td>{e.target ?? ''}</td>
                  <td>{e.reason ?? ''}</td>
                  <td>
                    <Change v={e.before} /> → <Change v={e.after} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
    </Section>
  );
}

const STATES = ['pending', 'paid', 'expired', 'failed'];

/**
 * An audit entry's before or after in words: each field named, amounts and times in format.ts's
 * form, states and yes/no worded. What has no words (a model's catalogue entry) stays JSON, as code.
 */
function Change({ v }: { v: unknown }) {
  const { lang, t } = useApp();
  const at = useAdminT();
  const word = useAdminWord();
  if (v === null || v === undefined) return <>—</>;
  if (typeof v !== 'object' || Array.isArray(v)) return <code>{JSON.stringify(v)}</code>;
  const value = (k: string, x: unknown) => {
    if (typeof x === 'boolean') return at(x ? 'admin.yes' : 'admin.no');
    if (typeof x === 'number') return num(lang, x);
    if (typeof x === 'string' && k.endsWith('_usd')) return <Money value={x} />;
    if (typeof x === 'string' && k.endsWith('_at')) return dateTime(lang, x);
    if (typeof x === 'string' && k === 'status' && STATES.includes(x)) return t(`status.${x as 'paid'}`);
    if (typeof x === 'string') return x;
    return <code>{JSON.stringify(x)}</code>;
  };
  return (
    <span class="change">
      {Object.entries(v as Record<string, unknown>).map(([k, x], i) => (
        <span key={k}>
          {i > 0 && ', '}
          {word('field', k)}: {value(k, x)}
        </span>
      ))}
    </span>
  );
}
