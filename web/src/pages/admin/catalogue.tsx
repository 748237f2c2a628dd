// Admin: the catalogue in force and which source it comes from (the saved catalogue or the file);
// add a model, edit its prices and routes (provider, upstream name, weight, upstream cost),
// switch models and routes on or off; export, import, or load the file again.

import { useState } from 'preact/hooks';
import { saveFile } from '../../api.js';
import { dateTime, price } from '../../format.js';
import { Field, prevented, Scroll, Section, useApp, useLoad, useSubmit } from '../../ui.js';
import { admin, type AdminProviderListT, type CatalogueStateT } from './client.js';
import { RoutesEditor, type RouteDraft } from './catalogue-routes.js';
import { AdminError } from './errors.js';
import { useAdminT } from './i18n.js';
import { AdminShell } from './shell.js';

type Doc = {
  models: {
    id: string;
    enabled?: boolean;
    kind?: 'chat' | 'embedding';
    pricing: { input: number; output?: number };
    routes: RouteDraft[];
  }[];
};

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
  const providers = useLoad(() => admin.get<AdminProviderListT>('/providers'), []);
  const [file, setFile] = useState<File | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const save = useSubmit(async (path: string, body: unknown) => {
    setDone(null);
    const after = await admin.post<CatalogueStateT>(path, body);
    setDone(t('cat.imported', { version: after.version ?? '—', models: String(after.in_service.length) }));
    state.reload();
  });
  const s = state.data;
  const doc = s?.document as Doc | undefined;
  const providerIds = providers.data?.data.map((p) => p.id) ?? [];
  const exportFile = () =>
    saveFile(new Blob([JSON.stringify(s?.document, null, 2)], { type: 'application/json' }), 'gateway.config.json');
  const fileName = s?.file.path ?? t('cat.builtIn');
  const modelPath = (id: string) => `/catalogue/models/${encodeURIComponent(id)}`;
  return (
    <Section title={t('admin.catalogue')} wide page>
      <AdminError error={state.error} />
      {s && (
        <div data-testid="catalogue-version">
          <p class="muted">
            {s.source === 'postgres'
              ? t('cat.inForceSaved', {
                  version: s.version ?? '',
                  by: s.saved_by ?? '',
                  at: dateTime(lang, s.saved_at),
                  file: fileName,
                })
              : t('cat.inForceFile', { file: fileName })}
          </p>
          {s.file.differs && (
            <p class="notice" data-testid="catalogue-file-differs">
              {t('cat.fileDiffers')}
            </p>
          )}
        </div>
      )}
      <div class="actions">
        <button type="button" class="secondary" onClick={exportFile}>
          {t('admin.export')}
        </button>
        <label class="file">
          {t('admin.import')}{' '}
          <input
            type="file"
            accept="application/json"
            onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)}
          />
        </label>
        {file && (
          <button
            type="button"
            disabled={save.busy}
            onClick={() => void file.text().then((text) => save.run('/catalogue', parseOr(text)))}
          >
            {t('admin.import')}
          </button>
        )}
        {s?.source === 'postgres' && s.file.readable && (
          <button
            type="button"
            class="secondary"
            disabled={save.busy}
            onClick={() => window.confirm(t('cat.loadConfirm')) && void save.run('/catalogue/load-file', {})}
          >
            {t('cat.loadFile')}
          </button>
        )}
      </div>
      <AdminError error={save.error} />
      {done && (
        <p class="notice" role="status" data-testid="catalogue-saved">
          {done}
        </p>
      )}
      <NewModel providers={providerIds} busy={save.busy} save={(body) => save.run('/catalogue/models', body)} />
      {doc && (
        <Scroll label={t('admin.catalogue')}>
          <table data-testid="admin-catalogue">
            <thead>
              <tr>
                <th scope="col">{t('admin.model')}</th>
                <th scope="col">{t('admin.routes')}</th>
                <th scope="col">{t('admin.status')}</th>
              </tr>
            </thead>
            <tbody>
              {doc.models.map((m) => (
                <tr key={m.id}>
                  <td>
                    {m.id}
                    <br />
                    <small class="nowrap">
                      {price(lang, m.pricing.input)} / {price(lang, m.pricing.output ?? 0)}
                    </small>
                    <Prices model={m} busy={save.busy} save={(body) => save.run(modelPath(m.id), body)} />
                  </td>
                  <td>
                    <ol>
                      {m.routes.map((r, i) => (
                        <li key={`${r.provider}/${r.model}`}>
                          {r.provider}/{r.model}
                          {r.weight !== undefined && (
                            <small>
                              {' '}
                              · {t('prov.weight')} {r.weight}
                            </small>
                          )}
                          {r.upstream_pricing && (
                            <small class="nowrap">
                              {' '}
                              ({price(lang, r.upstream_pricing.input)} / {price(lang, r.upstream_pricing.output ?? 0)})
                            </small>
                          )}{' '}
                          <button
                            type="button"
                            class="link"
                            disabled={save.busy}
                            onClick={() =>
                              save.run(modelPath(m.id), {
                                routes: m.routes.map((x, j) => (j === i ? { ...x, enabled: x.enabled === false } : x)),
                              })
                            }
                          >
                            {r.enabled === false ? t('admin.switchOn') : t('admin.switchOff')}
                          </button>
                          {i > 0 && (
                            <button
                              type="button"
                              class="link"
                              disabled={save.busy}
                              onClick={() =>
                                save.run(modelPath(m.id), {
                                  routes: [...m.routes.slice(0, i - 1), r, m.routes[i - 1], ...m.routes.slice(i + 1)],
                                })
                              }
                            >
                              {t('admin.moveUp')}
                            </button>
                          )}
                        </li>
                      ))}
                    </ol>
                    <details>
                      <summary>{t('cat.routesEdit')}</summary>
                      <RoutesEditor
                        idBase={`routes-${slug(m.id)}`}
                        routes={m.routes}
                        providers={providerIds}
                        busy={save.busy}
                        submitLabel={t('cat.saveRoutes')}
                        onSubmit={(routes) => save.run(modelPath(m.id), { routes })}
                      />
                    </details>
                  </td>
                  <td>
                    {m.enabled === false ? t('admin.disabled') : t('admin.enabled')}{' '}
                    <button
                      type="button"
                      class="secondary"
                      disabled={save.busy}
                      onClick={() => save.run(modelPath(m.id), { enabled: m.enabled === false })}
                    >
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

const slug = (id: string) => id.replace(/[^A-Za-z0-9_-]/g, '_');

/** A file that is not JSON goes to the API as text, whose refusal says so. */
function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type Model = Doc['models'][number];

/** A new model: its name, kind, prices and routes. */
function NewModel({
  providers,
  busy,
  save,
}: {
  providers: string[];
  busy: boolean;
  save(body: unknown): Promise<void>;
}) {
  const t = useAdminT();
  const [m, setM] = useState({ id: '', kind: 'chat', input: '', output: '' });
  const field = (k: 'id' | 'input' | 'output', label: string, decimal = false) => (
    <Field
      label={label}
      id={`new-model-${k}`}
      inputMode={decimal ? 'decimal' : undefined}
      value={m[k]}
      onInput={(e) => setM({ ...m, [k]: (e.target as HTMLInputElement).value })}
    />
  );
  return (
    <details data-testid="new-model">
      <summary>{t('cat.addModel')}</summary>
      {field('id', t('cat.modelId'))}
      <div class="field">
        <label for="new-model-kind">{t('cat.kind')}</label>
        <select
          id="new-model-kind"
          value={m.kind}
          onChange={(e) => setM({ ...m, kind: (e.target as HTMLSelectElement).value })}
        >
          <option value="chat">{t('cat.kindChat')}</option>
          <option value="embedding">{t('cat.kindEmbedding')}</option>
        </select>
      </div>
      {field('input', t('admin.priceIn'), true)}
      {m.kind === 'chat' && field('output', t('admin.priceOut'), true)}
      <RoutesEditor
        idBase="new-model-routes"
        routes={[{ provider: providers[0] ?? '', model: '' }]}
        providers={providers}
        busy={busy}
        submitLabel={t('cat.addModel')}
        onSubmit={(routes) =>
          save({
            id: m.id.trim(),
            kind: m.kind,
            pricing: { input: Number(m.input), ...(m.kind === 'chat' ? { output: Number(m.output) } : {}) },
            routes,
          })
        }
      />
    </details>
  );
}

/** A model's prices and its first route's upstream prices, edited in place. */
function Prices({ model, busy, save }: { model: Model; busy: boolean; save(body: unknown): void }) {
  const t = useAdminT();
  const [v, setV] = useState({
    // An embedding model has no output price: 0, which its rules allow.
    input: String(model.pricing.input),
    output: String(model.pricing.output ?? 0),
  });
  const id = (k: string) => `price-${slug(model.id)}-${k}`;
  const field = (k: keyof typeof v, label: string) => (
    <Field
      label={label}
      id={id(k)}
      inputMode="decimal"
      value={v[k]}
      onInput={(e) => setV({ ...v, [k]: (e.target as HTMLInputElement).value })}
    />
  );
  return (
    <details>
      <summary>{t('admin.prices')}</summary>
      <form
        onSubmit={prevented(() =>
          save({ pricing: { ...model.pricing, input: Number(v.input), output: Number(v.output) } }),
        )}
      >
        {field('input', t('admin.priceIn'))}
        {field('output', t('admin.priceOut'))}
        <button type="submit" disabled={busy}>
          {t('admin.savePrices')}
        </button>
      </form>
    </details>
  );
}
