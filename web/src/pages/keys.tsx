// Service keys: make one with its limits (shown once, with copy-ready snippets), list them,
// edit a key's name and limits, revoke one after a confirmation dialog.

import { useState } from 'preact/hooks';
import { api, type CatalogT, type KeyListT, type KeyT, type NewKeyT } from '../api.js';
import { ConfirmDialog } from '../dialog.js';
import { dateTime } from '../format.js';
import { ErrorText, Field, prevented, Scroll, Section, useApp, useLoad, useSubmit } from '../ui.js';
import { draftOf, LIMIT_PARAMS, LimitFields, limitsBody, limitsText } from './key-limits.js';
import { Snippets } from './snippets.js';

/** The API's bound on a key's name (src/dashboard/schemas/common.ts LIMITS.name). */
const NAME_MAX = 100;

function NewKeyBox({ created, model }: { created: NewKeyT; model: string }) {
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
        <code id="new-key" data-testid="new-key">
          {created.key}
        </code>
        <button type="button" onClick={copy}>
          {copied ? t('keys.copied') : t('keys.copy')}
        </button>
      </div>
      <Snippets apiKey={created.key} model={model} />
    </div>
  );
}

function CreateForm({ onCreated }: { onCreated(k: NewKeyT): void }) {
  const { t } = useApp();
  const [name, setName] = useState('');
  const [draft, setDraft] = useState(draftOf());
  const create = useSubmit(async () => {
    const k = await api.post<NewKeyT>('/keys', { ...(name.trim() ? { name } : {}), ...limitsBody(draft, false) });
    setName('');
    setDraft(draftOf());
    onCreated(k);
  });
  return (
    <form noValidate onSubmit={prevented(() => create.run())}>
      <Field
        label={t('keys.name')}
        id="key-name"
        maxLength={NAME_MAX}
        value={name}
        onInput={create.edit(setName)}
        error={create.at('name')}
        hint={t('keys.nameHint', { max: NAME_MAX })}
      />
      <LimitFields draft={draft} set={setDraft} submit={create} idPrefix="new-" />
      <ErrorText error={create.rest('name', ...LIMIT_PARAMS)} />
      <button type="submit" disabled={create.busy}>
        {t('keys.create')}
      </button>
    </form>
  );
}

function EditForm({ k, onDone }: { k: KeyT; onDone(saved: boolean): void }) {
  const { t } = useApp();
  const [name, setName] = useState(k.name ?? '');
  const [draft, setDraft] = useState(draftOf(k));
  const save = useSubmit(async () => {
    await api.patch(`/keys/${encodeURIComponent(k.id)}`, { name, ...limitsBody(draft, true) });
    onDone(true);
  });
  return (
    <form
      class="edit"
      noValidate
      aria-label={t('keys.editTitle', { name: k.name || k.prefix })}
      onSubmit={prevented(() => save.run())}
    >
      <h3>{t('keys.editTitle', { name: k.name || `${k.prefix}…` })}</h3>
      <Field
        label={t('keys.nameEdit')}
        id="edit-name"
        maxLength={NAME_MAX}
        value={name}
        onInput={save.edit(setName)}
        error={save.at('name')}
      />
      <LimitFields draft={draft} set={setDraft} submit={save} idPrefix="edit-" />
      <ErrorText error={save.rest('name', ...LIMIT_PARAMS)} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {t('keys.save')}
        </button>
        <button type="button" class="secondary" onClick={() => onDone(false)}>
          {t('keys.no')}
        </button>
      </div>
    </form>
  );
}

function KeyRow({ k, onEdit, onRevoke }: { k: KeyT; onEdit(): void; onRevoke(): void }) {
  const { t, lang } = useApp();
  return (
    <tr data-id={k.id}>
      <th scope="row" class="keyname">
        <span class="name" title={k.name ?? undefined}>
          {k.name || '—'}
        </span>
        <code>{k.prefix}…</code>
      </th>
      <td class="limits-cell">{limitsText(t, lang, k)}</td>
      <td>{dateTime(lang, k.created_at)}</td>
      <td>{k.last_used_at ? dateTime(lang, k.last_used_at) : t('keys.never')}</td>
      <td>
        {k.revoked_at ? (
          <span class="badge failed">{t('keys.revoked')}</span>
        ) : (
          <span class="badge paid">{t('keys.active')}</span>
        )}
      </td>
      <td>
        {!k.revoked_at && (
          <div class="actions">
            <button type="button" class="secondary" onClick={onEdit}>
              {t('keys.edit')}
            </button>
            <button type="button" class="danger" onClick={onRevoke}>
              {t('keys.revoke')}
            </button>
          </div>
        )}
      </td>
    </tr>
  );
}

export function Keys() {
  const { t } = useApp();
  const keys = useLoad(() => api.get<KeyListT>('/keys'), []);
  const models = useLoad(() => api.get<CatalogT>('/catalog'), []);
  // The snippets call chat completions: a chat model's id.
  const model = models.data?.data.find((m) => m.kind === 'chat')?.id ?? 'MODEL';
  const [created, setCreated] = useState<NewKeyT | null>(null);
  const [editing, setEditing] = useState<KeyT | null>(null);
  const [revoking, setRevoking] = useState<KeyT | null>(null);
  const revoke = useSubmit(async () => {
    await api.del(`/keys/${encodeURIComponent(revoking!.id)}`);
    setRevoking(null);
    keys.reload();
  });
  const list = keys.data?.data ?? [];
  return (
    <>
      <Section title={t('keys.title')} wide page>
        <CreateForm
          onCreated={(k) => {
            setCreated(k);
            keys.reload();
          }}
        />
        {created && <NewKeyBox created={created} model={model} />}
        <ErrorText error={keys.error} />
        {keys.data && list.length === 0 && <p class="muted">{t('common.none')}</p>}
        {list.length > 0 && (
          <Scroll label={t('keys.title')}>
            <table data-testid="keys-table">
              <thead>
                <tr>
                  <th scope="col">{t('keys.prefix')}</th>
                  <th scope="col">{t('keys.limits')}</th>
                  <th scope="col">{t('keys.createdAt')}</th>
                  <th scope="col">{t('keys.lastUsed')}</th>
                  <th scope="col">{t('keys.status')}</th>
                  <th scope="col">
                    <span class="sr">{t('keys.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((k) => (
                  <KeyRow
                    key={k.id}
                    k={k}
                    onEdit={() => setEditing(k)}
                    onRevoke={() => {
                      revoke.setError(null);
                      setRevoking(k);
                    }}
                  />
                ))}
              </tbody>
            </table>
          </Scroll>
        )}
        {editing && (
          <EditForm
            key={editing.id}
            k={editing}
            onDone={(saved) => {
              setEditing(null);
              if (saved) keys.reload();
            }}
          />
        )}
      </Section>
      <Section title={t('keys.howTo')} wide>
        <Snippets model={model} />
      </Section>
      {revoking && (
        <ConfirmDialog
          title={t('keys.revokeTitle')}
          confirm={t('keys.yes')}
          cancel={t('keys.no')}
          busy={revoke.busy}
          onConfirm={() => revoke.run()}
          onClose={() => setRevoking(null)}
        >
          <p>{t('keys.confirm', { name: revoking.name || t('keys.unnamed') })}</p>
          <ErrorText error={revoke.error} />
        </ConfirmDialog>
      )}
    </>
  );
}
