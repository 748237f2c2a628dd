// The usage log: newest first, filtered by range and model, one page at a time by cursor.

import { useState } from 'preact/hooks';
import { api, qs, type Key, type Model, type Page, type UsageRow } from '../api.js';
import { dateTime, num, usd } from '../format.js';
import { ErrorText, RangeSelect, Scroll, Section, Select, useApp, useLoad, type Range } from '../ui.js';

const PAGE_SIZE = 50;
const PAGE_MAX = 500;

export function Usage() {
  const { t, lang, query } = useApp();
  // `?limit=` picks the page size (the API's bound applies).
  const limit = Math.min(PAGE_MAX, Math.max(1, Number(query.get('limit')) || PAGE_SIZE));
  const [range, setRange] = useState<Range>('7d');
  const [model, setModel] = useState('');
  // The cursors of the pages before this one, so that "previous" can go back.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1];
  const rows = useLoad(() => api.get<Page<UsageRow>>(`/usage${qs({ range, model, limit, cursor })}`), [range, model, limit, cursor]);
  const models = useLoad(() => api.get<{ data: Model[] }>('/catalog'), []);
  const keys = useLoad(() => api.get<{ data: Key[] }>('/keys'), []);
  const keyName = (id: string | null) => {
    const k = keys.data?.data.find((x) => x.id === id);
    return k ? k.name || `${k.prefix}…` : '—';
  };
  const refilter = (apply: () => void) => {
    apply();
    setCursors([null]);
  };
  return (
    <Section title={t('usage.title')} wide page>
      <div class="filters">
        <RangeSelect value={range} onChange={(r) => refilter(() => setRange(r))} />
        <Select
          label={t('usage.model')}
          id="model"
          value={model}
          onChange={(m) => refilter(() => setModel(m))}
          options={[['', t('usage.allModels')], ...(models.data?.data ?? []).map((m): [string, string] => [m.id, m.id])]}
        />
      </div>
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
                <th scope="col" class="num">{t('usage.in')}</th>
                <th scope="col" class="num">{t('usage.out')}</th>
                <th scope="col" class="num">{t('usage.cost')}</th>
                <th scope="col" class="num">{t('usage.status')}</th>
                <th scope="col" class="num">{t('usage.latency')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.data.data.map((r) => (
                <tr key={r.id} data-id={r.id}>
                  <td>{dateTime(lang, r.created_at)}</td>
                  <td><code>{r.model}</code></td>
                  <td>{keyName(r.key_id)}</td>
                  <td class="num">{num(lang, r.prompt_tokens)}</td>
                  <td class="num">{num(lang, r.completion_tokens)}</td>
                  <td class="num" title={r.cost_usd}>{usd(lang, r.cost_usd)}</td>
                  <td class="num">{r.status}</td>
                  <td class="num">{num(lang, r.latency_ms)} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      <div class="pager">
        <button type="button" class="secondary" disabled={cursors.length < 2} onClick={() => setCursors((c) => c.slice(0, -1))}>{t('common.prev')}</button>
        <button type="button" class="secondary" disabled={!rows.data?.next_cursor} onClick={() => setCursors((c) => [...c, rows.data!.next_cursor])}>{t('common.next')}</button>
      </div>
    </Section>
  );
}
