// Service keys: make one (shown once, with a copy button), list them, revoke one after asking.

import { useState } from 'preact/hooks';
import { api, type Key, type NewKey } from '../api.js';
import { dateTime } from '../format.js';
import { ErrorText, Field, Scroll, Section, useApp, useLoad, useSubmit } from '../ui.js';

function NewKeyBox({ created }: { created: NewKey }) {
  const { t } = useApp();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
    } catch {
      // Without clipboard access (plain http), select the text so that the user can copy it.
      const range = document.createRange();
      range.selectNodeContents(document.getElementById('new-key')!);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
    }
    setCopied(true);
  };
  return (
    <div class="newkey" role="status">
      <p>{t('keys.created')}</p>
      <div class="copyrow">
        <code id="new-key" data-testid="new-key">{created.key}</code>
        <button type="button" onClick={copy}>{copied ? t('keys.copied') : t('keys.copy')}</button>
      </div>
      <p class="muted">{t('keys.usage', { url: location.origin })}</p>
    </div>
  );
}

function KeyRow({ k, onRevoked }: { k: Key; onRevoked(): void }) {
  const { t, lang } = useApp();
  const [asking, setAsking] = useState(false);
  const revoke = useSubmit(async () => {
    await api.del(`/keys/${encodeURIComponent(k.id)}`);
    setAsking(false);
    onRevoked();
  });
  return (
    <tr>
      <th scope="row">
        {k.name || '—'}
        <br />
        <code>{k.prefix}…</code>
      </th>
      <td>{dateTime(lang, k.created_at)}</td>
      <td>{k.last_used_at ? dateTime(lang, k.last_used_at) : t('keys.never')}</td>
      <td>{k.revoked_at ? <span class="badge failed">{t('keys.revoked')}</span> : <span class="badge paid">{t('keys.active')}</span>}</td>
      <td>
        {!k.revoked_at && !asking && (
          <button type="button" class="danger" onClick={() => setAsking(true)}>{t('keys.revoke')}</button>
        )}
        {asking && (
          <div class="confirm" role="alertdialog" aria-label={t('keys.revoke')}>
            <p>{t('keys.confirm', { name: k.name || t('keys.unnamed') })}</p>
            <button type="button" class="danger" disabled={revoke.busy} onClick={() => revoke.run()}>{t('keys.yes')}</button>{' '}
            <button type="button" class="secondary" onClick={() => setAsking(false)}>{t('keys.no')}</button>
            <ErrorText error={revoke.error} />
          </div>
        )}
      </td>
    </tr>
  );
}

export function Keys() {
  const { t } = useApp();
  const keys = useLoad(() => api.get<{ data: Key[] }>('/keys'), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<NewKey | null>(null);
  const create = useSubmit(async () => {
    setCreated(await api.post<NewKey>('/keys', name.trim() ? { name } : {}));
    setName('');
    keys.reload();
  });
  return (
    <Section title={t('keys.title')} wide page>
      <form class="inline" noValidate onSubmit={(e) => { e.preventDefault(); create.run(); }}>
        <Field label={t('keys.name')} id="key-name" maxLength={100} value={name} onInput={create.edit(setName)} error={create.at('name')} />
        <button type="submit" disabled={create.busy}>{t('keys.create')}</button>
      </form>
      <ErrorText error={create.rest('name')} />
      {created && <NewKeyBox created={created} />}
      <ErrorText error={keys.error} />
      {keys.data && keys.data.data.length === 0 && <p class="muted">{t('common.none')}</p>}
      {keys.data && keys.data.data.length > 0 && (
        <Scroll label={t('keys.title')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('keys.prefix')}</th>
                <th scope="col">{t('keys.createdAt')}</th>
                <th scope="col">{t('keys.lastUsed')}</th>
                <th scope="col">{t('keys.status')}</th>
                <th scope="col"><span class="sr">{t('keys.revoke')}</span></th>
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((k) => <KeyRow key={k.id} k={k} onRevoked={keys.reload} />)}
            </tbody>
          </table>
        </Scroll>
      )}
    </Section>
  );
}
