// The usage log: newest first, filtered by range, key, model and status, one page at a time by
// cursor; each request to the second in the browser's time zone, with its surface, tokens
// (cached among the input), exact cost, latency and request id; the filtered log as CSV.
// Requests refused before any answer are listed too, at $0 with their error code; past the
// gateway's cap a key's refusals in a minute are one row that counts them.

import { useState } from 'preact/hooks';
import { api, qs, type CatalogT, type KeyListT, type UsagePageT } from '../api.js';
import { dateTime, num } from '../format.js';
import { codeWord, surfaceWord } from '../i18n.js';
import {
  DEFAULT_RANGE,
  ErrorText,
  Money,
  RangeSelect,
  Scroll,
  Section,
  Select,
  useApp,
  useLoad,
  useSubmit,
  type Range,
} from '../ui.js';

const PAGE_SIZE = 50;
const PAGE_MAX = 500;
const STATUSES = ['', 'ok', 'error', 'refused'] as const;

export function Usage() {
  const { t, lang, query } = useApp();
  // `?limit=` picks the page size (the API's bound applies).
  const limit = Math.min(PAGE_MAX, Math.max(1, Number(query.get('limit')) || PAGE_SIZE));
  const [range, setRange] = useState<Range>(DEFAULT_RANGE);
  const [model, setModel] = useState('');
  const [keyId, setKeyId] = useState('');
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('');
  // The cursors of the pages before this one, so that "previous" can go back.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1];
  const filters = { range, model, key_id: keyId, status };
  const rows = useLoad(
    () => api.get<UsagePageT>(`/usage${qs({ ...filters, limit, cursor })}`),
    [range, model, keyId, status, limit, cursor],
  );
  const models = useLoad(() => api.get<CatalogT>('/catalog'), []);
  const keys = useLoad(() => api.get<KeyListT>('/keys'), []);
  const keyName = (id: string | null) => {
    const k = keys.data?.data.find((x) => x.id === id);
    if (k) return k.name || `${k.prefix}…`;
    if (!id) return '—';
    // Listed keys are every key of the account but the playground's own, made per request; until
    // the list is in, a key is not named at all rather than named wrongly.
    return keys.data ? t('nav.playground') : '';
  };
  const refilter = (apply: () => void) => {
    apply();
    setCursors([null]);
  };
  const exportCsv = useSubmit(() =>
    api.download(`/usage.csv${qs(filters)}`, `usage-${new Date().toISOString().slice(0, 10)}.csv`),
  );
  return (
    <Section title={t('usage.title')} wide page>
      <div class="filters">
        <RangeSelect value={range} onChange={(r) => refilter(() => setRange(r))} />
        <Select
          label={t('usage.key')}
          id="key"
          value={keyId}
          onChange={(k) => refilter(() => setKeyId(k))}
          options={[
            ['', t('usage.allKeys')],
            ...(keys.data?.data ?? []).map((k): [string, string] => [k.id, k.name || `${k.prefix}…`]),
          ]}
        />
        <Select
          label={t('usage.model')}
          id="model"
          value={model}
          onChange={(m) => refilter(() => setModel(m))}
          options={[
            ['', t('usage.allModels')],
            ...(models.data?.data ?? []).map((m): [string, string] => [m.id, m.id]),
          ]}
        />
        <Select
          label={t('usage.status')}
          id="status"
          value={status}
          onChange={(v) => refilter(() => setStatus(v as (typeof STATUSES)[number]))}
          options={STATUSES.map((x): [string, string] => [x, t(`usage.status.${x || 'all'}`)])}
        />
      </div>
      <div class="actions">
        <button type="button" class="secondary" disabled={exportCsv.busy} onClick={() => exportCsv.run()}>
          {t('usage.csv')}
        </button>
      </div>
      <ErrorText error={exportCsv.error} />
      <ErrorText error={rows.error} />
      {rows.data && rows.data.data.length === 0 && <p class="muted">{t('common.none')}</p>}
      {rows.data && rows.data.data.length > 0 && (
        <Scroll label={t('usage.title')}>
          <table data-testid="usage-table">
            <thead>
              <tr>
                <th scope="col">{t('usage.time')}</th>
                <th scope="col">{t('usage.model')}</th>
                <th scope="col">{t('usage.key')}</th>
                <th scope="col">{t('usage.surface')}</th>
                <th scope="col" class="num">
                  {t('usage.status')}
                </th>
                <th scope="col" class="num">
                  {t('usage.in')}
                </th>
                <th scope="col" class="num">
                  {t('usage.cached')}
                </th>
                <th scope="col" class="num">
                  {t('usage.out')}
                </th>
                <th scope="col" class="num">
                  {t('usage.cost')}
                </th>
                <th scope="col" class="num">
                  {t('usage.latency')}
                </th>
                <th scope="col">{t('usage.requestId')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.data.data.map((r) => (
                <tr key={r.id} data-id={r.id}>
                  <td>
                    <time dateTime={r.created_at}>{dateTime(lang, r.created_at)}</time>
                  </td>
                  <td>{r.model ? <code>{r.model}</code> : '—'}</td>
                  <td>{keyName(r.key_id)}</td>
                  <td>
                    {surfaceWord(lang, r.surface)}
                    {r.stream ? ` · ${t('usage.stream')}` : ''}
                  </td>
                  <td class="num">
                    <span class={`badge ${r.status >= 200 && r.status < 300 ? 'paid' : 'failed'}`}>{r.status}</span>
                    {/* The code itself (what the API answered the client) stays in the title, for support. */}
                    {r.error_code && (
                      <small class="muted" data-testid="error-code" data-code={r.error_code} title={r.error_code}>
                        {' '}
                        {codeWord(lang, 'refusal', r.error_code)}
                      </small>
                    )}
                  </td>
                  <td class="num">{num(lang, r.prompt_tokens)}</td>
                  <td class="num">{num(lang, r.cached_tokens)}</td>
                  <td class="num">{num(lang, r.completion_tokens)}</td>
                  <td class="num">
                    <Money value={r.cost_usd} />
                  </td>
                  <td class="num">
                    {num(lang, r.latency_ms)} ms
                    {r.ttft_ms !== null ? (
                      <small class="muted"> ({t('usage.ttft', { ms: num(lang, r.ttft_ms) })})</small>
                    ) : null}
                  </td>
                  <td>
                    {r.request_id ? (
                      <code class="reqid">{r.request_id}</code>
                    ) : (
                      <small class="muted">{t('usage.refusedMore', { n: num(lang, r.requests) })}</small>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      <div class="pager">
        <button
          type="button"
          class="secondary"
          disabled={cursors.length < 2}
          onClick={() => setCursors((c) => c.slice(0, -1))}
        >
          {t('common.prev')}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!rows.data?.next_cursor}
          onClick={() => setCursors((c) => [...c, rows.data!.next_cursor])}
        >
          {t('common.next')}
        </button>
      </div>
    </Section>
  );
}
