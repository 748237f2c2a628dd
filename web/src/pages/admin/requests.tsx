// Admin: the request log across users (GET /api/admin/requests), filtered by user (id or email),
// key, model, route, status and time to the second; newest first, one page at a time by cursor;
// the same filters as a CSV file (GET /api/admin/requests/export).

import { useState } from 'preact/hooks';
import { qs } from '../../api.js';
import { dateTime, num } from '../../format.js';
import { codeWord, surfaceWord } from '../../i18n.js';
import { ErrorText, Field, Money, Scroll, Section, Select, useApp, useLoad, useSubmit } from '../../ui.js';
import { admin, type AdminRequestListT } from './client.js';
import { useAdminT } from './i18n.js';
import { AdminShell } from './shell.js';

const PAGE_SIZE = 100;
/** The status filter: the user log's groups, then the codes an operator looks for most. */
const STATUS_CHOICES = [
  '',
  'ok',
  'error',
  'refused',
  '400',
  '401',
  '402',
  '403',
  '404',
  '413',
  '429',
  '499',
  '500',
  '502',
  '503',
  '504',
];

interface Filters {
  user: string;
  key: string;
  model: string;
  route: string;
  status: string;
  from: string;
  to: string;
}
const NONE: Filters = { user: '', key: '', model: '', route: '', status: '', from: '', to: '' };

/** A datetime-local value (the browser's time zone, to the second) as the API's instant. */
function instantOf(local: string): string {
  if (!local) return '';
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? local : d.toISOString();
}

export function AdminRequests() {
  return (
    <AdminShell>
      <RequestLog />
    </AdminShell>
  );
}

function RequestLog() {
  const { lang, t: tu } = useApp();
  const t = useAdminT();
  const [draft, setDraft] = useState<Filters>(NONE);
  const [applied, setApplied] = useState<Filters>(NONE);
  // The cursors of the pages before this one: "first page" goes back to the start.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1];
  const params = { ...applied, from: instantOf(applied.from), to: instantOf(applied.to) };
  const list = useLoad(
    () => admin.get<AdminRequestListT>(`/requests${qs({ ...params, limit: PAGE_SIZE, cursor })}`),
    [JSON.stringify(params), cursor],
  );
  const csv = useSubmit(() =>
    admin.download(`/requests/export${qs(params)}`, `requests-${new Date().toISOString().slice(0, 10)}.csv`),
  );
  const field = (name: keyof Filters) => (e: Event) =>
    setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value });
  const time = (name: 'from' | 'to', label: string) => (
    <div class="field">
      <label for={`req-${name}`}>{label}</label>
      <input
        id={`req-${name}`}
        name={`req-${name}`}
        type="datetime-local"
        step="1"
        value={draft[name]}
        onInput={field(name)}
      />
    </div>
  );
  return (
    <Section title={t('admin.requests')} wide page>
      <form
        class="filters"
        data-testid="request-filters"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(draft);
          setCursors([null]);
        }}
      >
        <Field label={t('admin.req.user')} id="req-user" value={draft.user} maxLength={254} onInput={field('user')} />
        <Field label={t('admin.req.key')} id="req-key" value={draft.key} maxLength={36} onInput={field('key')} />
        <Field label={t('admin.model')} id="req-model" value={draft.model} maxLength={200} onInput={field('model')} />
        <Field label={t('admin.route')} id="req-route" value={draft.route} maxLength={265} onInput={field('route')} />
        <Select
          label={t('admin.status')}
          id="req-status"
          value={draft.status}
          onChange={(x) => setDraft({ ...draft, status: x })}
          options={STATUS_CHOICES.map((x): [string, string] => [
            x,
            /^\d+$/.test(x) ? x : tu(`usage.status.${(x || 'all') as 'all' | 'ok' | 'error' | 'refused'}`),
          ])}
        />
        {time('from', t('admin.req.from'))}
        {time('to', t('admin.req.to'))}
        <button type="submit">{t('admin.req.apply')}</button>
      </form>
      <div class="actions">
        <button type="button" class="secondary" disabled={csv.busy} onClick={() => csv.run()} data-testid="request-csv">
          {t('admin.req.csv')}
        </button>
      </div>
      <ErrorText error={csv.error} />
      <ErrorText error={list.error} />
      {list.data && list.data.data.length === 0 && <p class="muted">{t('admin.req.none')}</p>}
      {list.data && list.data.data.length > 0 && (
        <Scroll label={t('admin.requests')}>
          <table data-testid="admin-requests">
            <thead>
              <tr>
                <th scope="col">{t('admin.req.time')}</th>
                <th scope="col">{t('admin.email')}</th>
                <th scope="col">{t('admin.req.keyCol')}</th>
                <th scope="col">{t('admin.model')}</th>
                <th scope="col">{t('admin.route')}</th>
                <th scope="col">{t('admin.req.surface')}</th>
                <th scope="col" class="num">
                  {t('admin.status')}
                </th>
                <th scope="col" class="num">
                  {t('admin.req.tokens')}
                </th>
                <th scope="col" class="num">
                  {t('admin.req.cost')}
                </th>
                <th scope="col" class="num">
                  {t('admin.req.latency')}
                </th>
                <th scope="col">{t('admin.req.requestId')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((r) => (
                <tr key={r.id} data-id={r.id}>
                  <td>
                    <time dateTime={r.created_at}>{dateTime(lang, r.created_at)}</time>
                  </td>
                  <td title={r.user_id}>{r.email ?? r.user_id}</td>
                  <td title={r.key_id ?? undefined}>{r.key_name || (r.key_prefix ? `${r.key_prefix}…` : '—')}</td>
                  <td>{r.model ? <code>{r.model}</code> : '—'}</td>
                  <td>{r.route ? <code>{r.route}</code> : '—'}</td>
                  <td>
                    {surfaceWord(lang, r.surface)}
                    {r.stream ? ` · ${t('admin.req.stream')}` : ''}
                  </td>
                  <td class="num nowrap">
                    <span class={`badge ${r.status >= 200 && r.status < 300 ? 'paid' : 'failed'}`}>{r.status}</span>
                    {r.error_code && (
                      <small class="muted" title={r.error_code}>
                        {' '}
                        {codeWord(lang, 'refusal', r.error_code)}
                      </small>
                    )}
                    {r.requests > 1 && <small class="muted"> ×{num(lang, r.requests)}</small>}
                  </td>
                  <td class="num">
                    {num(lang, r.prompt_tokens)} / {num(lang, r.completion_tokens)}
                  </td>
                  <td class="num">
                    <Money value={r.cost_usd} />
                  </td>
                  <td class="num">{num(lang, r.latency_ms)} ms</td>
                  <td>{r.request_id ? <code class="reqid">{r.request_id}</code> : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      <div class="actions">
        {cursors.length > 1 && (
          <button type="button" class="secondary" onClick={() => setCursors([null])}>
            {t('admin.req.first')}
          </button>
        )}
        {list.data?.next_cursor && (
          <button
            type="button"
            data-testid="request-next"
            onClick={() => setCursors([...cursors, list.data!.next_cursor])}
          >
            {t('admin.req.next')}
          </button>
        )}
      </div>
    </Section>
  );
}
