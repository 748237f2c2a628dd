// Admin: the upstream providers. Add one (its base URL and dialect), change or switch it off,
// save its API keys (shown again only by their last four characters), weigh or switch them off,
// and test it with one real call per key.

import { useState } from 'preact/hooks';
import { dateTime } from '../../format.js';
import { Field, prevented, Scroll, Section, Select, useApp, useLoad, useSubmit } from '../../ui.js';
import { admin, type AdminProviderListT, type AdminProviderT, type ProviderTestAnswerT } from './client.js';
import { AdminError } from './errors.js';
import { useAdminT, type AdminKey } from './i18n.js';
import { AdminShell } from './shell.js';

export function AdminProviders() {
  return (
    <AdminShell>
      <Providers />
    </AdminShell>
  );
}

/** A dialect by the API it speaks; one this build does not know yet, as it is named. */
function useDialectWord(): (d: string) => string {
  const t = useAdminT();
  return (d) => (['openai', 'anthropic', 'responses', 'gemini'].includes(d) ? t(`dialect.${d}` as AdminKey) : d);
}

const SOURCE: Record<AdminProviderT['key_source'], AdminKey> = {
  saved: 'prov.sourceSaved',
  env: 'prov.sourceEnv',
  none: 'prov.sourceNone',
  missing: 'prov.sourceMissing',
};

function Providers() {
  const t = useAdminT();
  const dialectWord = useDialectWord();
  const list = useLoad(() => admin.get<AdminProviderListT>('/providers'), []);
  const [draft, setDraft] = useState({ id: '', dialect: 'openai', base_url: '', api_key_env: '' });
  const [added, setAdded] = useState<string | null>(null);
  const add = useSubmit(async () => {
    const p = await admin.post<AdminProviderT>('/providers', {
      id: draft.id.trim(),
      dialect: draft.dialect,
      base_url: draft.base_url.trim(),
      ...(draft.api_key_env.trim() ? { api_key_env: draft.api_key_env.trim() } : {}),
    });
    setAdded(p.id);
    setDraft({ id: '', dialect: draft.dialect, base_url: '', api_key_env: '' });
    list.reload();
  });
  const data = list.data;
  return (
    <Section title={t('admin.providers')} wide page>
      <AdminError error={list.error} />
      {data && !data.can_save_keys && (
        <p class="notice" role="status">
          {t('prov.noSecret')}
        </p>
      )}
      {data &&
        data.data.map((p) => (
          <Provider key={p.id} p={p} canSave={data.can_save_keys} dialects={data.dialects} reload={list.reload} />
        ))}
      <details open={data?.data.length === 0} data-testid="new-provider">
        <summary>{t('prov.add')}</summary>
        <form
          onSubmit={prevented(() => {
            setAdded(null);
            return add.run();
          })}
        >
          <Field
            label={t('prov.id')}
            id="prov-new-id"
            value={draft.id}
            hint={t('prov.idHint')}
            onInput={(e) => setDraft({ ...draft, id: (e.target as HTMLInputElement).value })}
          />
          <Select
            label={t('prov.dialect')}
            id="prov-new-dialect"
            value={draft.dialect}
            onChange={(d) => setDraft({ ...draft, dialect: d })}
            options={(data?.dialects ?? ['openai']).map((d) => [d, dialectWord(d)])}
          />
          <Field
            label={t('prov.baseUrl')}
            id="prov-new-url"
            value={draft.base_url}
            hint="https://api.example.com/v1"
            onInput={(e) => setDraft({ ...draft, base_url: (e.target as HTMLInputElement).value })}
          />
          <Field
            label={t('prov.keyEnv')}
            id="prov-new-env"
            value={draft.api_key_env}
            hint={t('prov.keyEnvHint')}
            onInput={(e) => setDraft({ ...draft, api_key_env: (e.target as HTMLInputElement).value })}
          />
          <button type="submit" disabled={add.busy}>
            {t('prov.add')}
          </button>
        </form>
        <AdminError error={add.error} />
        {added && (
          <p class="notice" role="status">
            {t('prov.added', { id: added })}
          </p>
        )}
      </details>
    </Section>
  );
}

function Provider({
  p,
  canSave,
  dialects,
  reload,
}: {
  p: AdminProviderT;
  canSave: boolean;
  dialects: string[];
  reload(): void;
}) {
  const { lang } = useApp();
  const t = useAdminT();
  const dialectWord = useDialectWord();
  const slug = p.id.replace(/[^A-Za-z0-9_-]/g, '_');
  const [key, setKey] = useState({ key: '', label: '', weight: '1' });
  const [edit, setEdit] = useState({ base_url: p.base_url, dialect: p.dialect });
  const [tested, setTested] = useState<ProviderTestAnswerT | null>(null);
  const act = useSubmit(async (method: 'POST' | 'DELETE', path: string, body?: unknown) => {
    if (method === 'DELETE') await admin.del(path);
    else await admin.post(path, body);
    reload();
  });
  const saveKey = useSubmit(async () => {
    await admin.post(`/providers/${encodeURIComponent(p.id)}/keys`, {
      key: key.key.trim(),
      ...(key.label.trim() ? { label: key.label.trim() } : {}),
      weight: Number(key.weight) || 1,
    });
    setKey({ key: '', label: '', weight: '1' });
    reload();
  });
  const test = useSubmit(async () => {
    setTested(null);
    setTested(await admin.post<ProviderTestAnswerT>(`/providers/${encodeURIComponent(p.id)}/test`, {}));
  });
  const base = `/providers/${encodeURIComponent(p.id)}`;
  return (
    <article class="provider" data-testid={`provider-${slug}`}>
      <h2>
        {p.id}{' '}
        <small>
          {dialectWord(p.dialect)} · {p.enabled ? t('admin.enabled') : t('admin.disabled')}
        </small>
      </h2>
      <p class="wrap">
        <code>{p.base_url}</code>
      </p>
      <p class={p.key_source === 'missing' ? 'error' : 'muted'} data-testid={`provider-${slug}-source`}>
        {t(SOURCE[p.key_source], { env: p.api_key_env?.name ?? '' })}
        {p.unopened_keys > 0 && ` ${t('prov.unopened', { n: String(p.unopened_keys) })}`}
      </p>
      <p class="muted">
        {t('prov.models')}: {p.models.length > 0 ? p.models.join(', ') : '—'}
      </p>
      <div class="actions">
        <button type="button" disabled={test.busy} onClick={() => void test.run()}>
          {t('prov.test')}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={act.busy}
          onClick={() => void act.run('POST', base, { enabled: !p.enabled })}
        >
          {p.enabled ? t('admin.switchOff') : t('admin.switchOn')}
        </button>
      </div>
      <AdminError error={test.error} />
      {tested && (
        <ul data-testid={`provider-${slug}-test`} role="status">
          {tested.results.map((r) => (
            <li key={r.key} class={r.ok ? '' : 'error'}>
              {r.key}:{' '}
              {r.ok
                ? t('prov.testOk', { ms: String(r.latency_ms), model: tested.model })
                : t('prov.testFailed', { status: r.status === null ? '—' : String(r.status), message: r.message })}
            </li>
          ))}
        </ul>
      )}
      <AdminError error={act.error} />
      {p.keys.length > 0 && (
        <Scroll label={t('prov.keys')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('prov.key')}</th>
                <th scope="col" class="num">
                  {t('prov.weight')}
                </th>
                <th scope="col">{t('admin.status')}</th>
                <th scope="col">{t('prov.savedBy')}</th>
                <th scope="col">{t('prov.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {p.keys.map((k) => (
                <tr key={k.id}>
                  <td>
                    <code>{k.hint}</code>
                    {k.label && ` ${k.label}`}
                  </td>
                  <td class="num">{k.weight}</td>
                  <td>{k.enabled ? t('admin.enabled') : t('admin.disabled')}</td>
                  <td>
                    {k.created_by}
                    <br />
                    <small>{dateTime(lang, k.created_at)}</small>
                  </td>
                  <td>
                    <button
                      type="button"
                      class="link"
                      disabled={act.busy}
                      onClick={() => void act.run('POST', `${base}/keys/${k.id}`, { enabled: !k.enabled })}
                    >
                      {k.enabled ? t('admin.switchOff') : t('admin.switchOn')}
                    </button>{' '}
                    <button
                      type="button"
                      class="link"
                      disabled={act.busy}
                      onClick={() =>
                        window.confirm(t('prov.deleteConfirm', { key: k.hint })) &&
                        void act.run('DELETE', `${base}/keys/${k.id}`)
                      }
                    >
                      {t('prov.delete')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      {canSave && (
        <details>
          <summary>{t('prov.addKey')}</summary>
          <form onSubmit={prevented(() => saveKey.run())}>
            <Field
              label={t('prov.key')}
              id={`prov-${slug}-key`}
              type="password"
              autocomplete="off"
              value={key.key}
              hint={t('prov.keyHint')}
              onInput={(e) => setKey({ ...key, key: (e.target as HTMLInputElement).value })}
            />
            <Field
              label={t('prov.label')}
              id={`prov-${slug}-label`}
              value={key.label}
              onInput={(e) => setKey({ ...key, label: (e.target as HTMLInputElement).value })}
            />
            <Field
              label={t('prov.weight')}
              id={`prov-${slug}-weight`}
              inputMode="numeric"
              value={key.weight}
              hint={t('prov.weightHint')}
              onInput={(e) => setKey({ ...key, weight: (e.target as HTMLInputElement).value })}
            />
            <button type="submit" disabled={saveKey.busy}>
              {t('prov.saveKey')}
            </button>
          </form>
          <AdminError error={saveKey.error} />
        </details>
      )}
      <details>
        <summary>{t('prov.edit')}</summary>
        <form
          onSubmit={prevented(() => act.run('POST', base, { base_url: edit.base_url.trim(), dialect: edit.dialect }))}
        >
          <Select
            label={t('prov.dialect')}
            id={`prov-${slug}-dialect`}
            value={edit.dialect}
            onChange={(d) => setEdit({ ...edit, dialect: d })}
            options={dialects.map((d) => [d, dialectWord(d)])}
          />
          <Field
            label={t('prov.baseUrl')}
            id={`prov-${slug}-url`}
            value={edit.base_url}
            onInput={(e) => setEdit({ ...edit, base_url: (e.target as HTMLInputElement).value })}
          />
          <button type="submit" disabled={act.busy}>
            {t('admin.save')}
          </button>
        </form>
      </details>
    </article>
  );
}
