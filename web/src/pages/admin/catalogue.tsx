// Admin: the catalogue in force; switch models and routes on or off; export and import the file.

import { useState } from 'preact/hooks';
import { dateTime } from '../../format.js';
import { ErrorText, Field, Scroll, Section, useApp, useLoad, useSubmit } from '../../ui.js';
import { admin, type CatalogueStateT } from './client.js';
import { useAdminT } from './i18n.js';
import { AdminShell } from './shell.js';

type Doc = { models: { id: string; enabled?: boolean; kind?: 'chat' | 'embedding'; pricing: { input: number; output?: number }; routes: { provider: string; model: string; enabled?: boolean; upstream_pricing?: { input: number; output?: number } }[] }[] };

export function AdminCatalogue() {
  return (
    <AdminShell>
      <Catalogue />
    </AdminShell>
  );
}

function Catalogue() {
  const { lang } = useApp();
  const t = useAdminT();
  const state = useLoad(() => admin.get<CatalogueStateT>('/catalogue'), []);
  const [file, setFile] = useState<File | null>(null);
  const save = useSubmit(async (path: string, body: unknown) => {
    await admin.post(path, body);
    state.reload();
  });
  const doc = state.data?.document as Doc | undefined;
  const exportFile = () => {
    const blob = new Blob([JSON.stringify(state.data?.document, null, 2)], { type: 'application/json' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'gateway.config.json';
    a.click();
    URL.revokeObjectURL(a.href);
  };
  return (
    <Section title={t('admin.catalogue')} wide page>
      <ErrorText error={state.error} />
      <ErrorText error={save.error} />
      {state.data && (
        <p class="muted" data-testid="catalogue-version">
          {t('admin.source')}: {state.data.source}{state.data.version && ` · ${t('admin.version')} ${state.data.version} · ${state.data.saved_by} · ${dateTime(lang, state.data.saved_at)}`}
        </p>
      )}
      <div class="actions">
        <button type="button" class="secondary" onClick={exportFile}>{t('admin.export')}</button>
        <label class="file">
          {t('admin.import')}{' '}
          <input type="file" accept="application/json" onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
        </label>
        {file && <button type="button" disabled={save.busy} onClick={() => void file.text().then((text) => save.run('/catalogue', JSON.parse(text)))}>{t('admin.import')}</button>}
      </div>
      {doc && (
        <Scroll label={t('admin.catalogue')}>
          <table data-testid="admin-catalogue">
            <thead><tr><th scope="col">{t('admin.model')}</th><th scope="col">{t('admin.routes')}</th><th scope="col">{t('admin.status')}</th></tr></thead>
            <tbody>
              {doc.models.map((m) => (
                <tr key={m.id}>
                  <td>
                    {m.id}<br /><small>${m.pricing.input} / ${m.pricing.output ?? 0}</small>
                    <Prices model={m} busy={save.busy} save={(body) => save.run(`/catalogue/models/${encodeURIComponent(m.id)}`, body)} />
                  </td>
                  <td>
                    <ol>
                      {m.routes.map((r, i) => (
                        <li key={`${r.provider}/${r.model}`}>
                          {r.provider}/{r.model}{r.upstream_pricing && <small> (${r.upstream_pricing.input} / ${r.upstream_pricing.output ?? 0})</small>}{' '}
                          <button type="button" class="link" disabled={save.busy} onClick={() => save.run(`/catalogue/models/${encodeURIComponent(m.id)}`, { routes: m.routes.map((x, j) => (j === i ? { ...x, enabled: x.enabled === false } : x)) })}>
                            {r.enabled === false ? t('admin.switchOn') : t('admin.switchOff')}
                          </button>
                          {i > 0 && (
                            <button type="button" class="link" disabled={save.busy} onClick={() => save.run(`/catalogue/models/${encodeURIComponent(m.id)}`, { routes: [...m.routes.slice(0, i - 1), r, m.routes[i - 1], ...m.routes.slice(i + 1)] })}>
                              {t('admin.moveUp')}
                            </button>
                          )}
                        </li>
                      ))}
                    </ol>
                  </td>
                  <td>
                    {m.enabled === false ? t('admin.disabled') : t('admin.enabled')}{' '}
                    <button type="button" class="secondary" disabled={save.busy} onClick={() => save.run(`/catalogue/models/${encodeURIComponent(m.id)}`, { enabled: m.enabled === false })}>
                      {m.enabled === false ? t('admin.switchOn') : t('admin.switchOff')}
                    </button>
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

type Model = Doc['models'][number];

/** A model's prices and its first route's upstream prices, edited in place. */
function Prices({ model, busy, save }: { model: Model; busy: boolean; save(body: unknown): void }) {
  const t = useAdminT();
  const first = model.routes[0];
  const [v, setV] = useState({
    // An embedding model has no output price: 0, which its rules allow.
    input: String(model.pricing.input), output: String(model.pricing.output ?? 0),
    upIn: String(first?.upstream_pricing?.input ?? ''), upOut: String(first?.upstream_pricing?.output ?? ''),
  });
  const id = (k: string) => `price-${model.id.replace(/[^A-Za-z0-9_-]/g, '_')}-${k}`;
  const field = (k: keyof typeof v, label: string) => (
    <Field label={label} id={id(k)} inputMode="decimal" value={v[k]} onInput={(e) => setV({ ...v, [k]: (e.target as HTMLInputElement).value })} />
  );
  const submit = () => {
    const routes = v.upIn !== '' && v.upOut !== '' ? model.routes.map((r, i) => (i === 0 ? { ...r, upstream_pricing: { input: Number(v.upIn), output: Number(v.upOut) } } : r)) : undefined;
    save({ pricing: { ...model.pricing, input: Number(v.input), output: Number(v.output) }, ...(routes ? { routes } : {}) });
  };
  return (
    <details>
      <summary>{t('admin.prices')}</summary>
      <form onSubmit={(e) => { e.preventDefault(); submit(); }}>
        {field('input', t('admin.priceIn'))}
        {field('output', t('admin.priceOut'))}
        {field('upIn', t('admin.upstreamIn'))}
        {field('upOut', t('admin.upstreamOut'))}
        <button type="submit" disabled={busy}>{t('admin.savePrices')}</button>
      </form>
    </details>
  );
}
