// Admin: make redemption codes (shown once) and see which were redeemed.

import { useState } from 'preact/hooks';
import { dateTime } from '../../format.js';
import { ErrorText, Field, Money, prevented, Scroll, Section, useApp, useLoad, useSubmit } from '../../ui.js';
import { admin, type CodeListT, type NewCodesT } from './client.js';
import { useAdminT, useAdminWord } from './i18n.js';
import { AdminShell } from './shell.js';

export function AdminCodes() {
  return (
    <AdminShell>
      <Codes />
    </AdminShell>
  );
}

function Codes() {
  const { lang } = useApp();
  const t = useAdminT();
  const word = useAdminWord();
  const [count, setCount] = useState('10');
  const [amount, setAmount] = useState('5');
  const [expires, setExpires] = useState(() => new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10));
  const [note, setNote] = useState('');
  const [made, setMade] = useState<NewCodesT | null>(null);
  const list = useLoad(() => admin.get<CodeListT>('/codes?limit=200'), []);
  const make = useSubmit(async () => {
    setMade(
      await admin.post<NewCodesT>('/codes', {
        count: Number(count),
        amount_usd: amount,
        expires_at: new Date(`${expires}T23:59:59Z`).toISOString(),
        ...(note ? { note } : {}),
      }),
    );
    list.reload();
  });
  return (
    <Section title={t('admin.codes')} wide page>
      <form onSubmit={prevented(() => make.run())}>
        <Field
          label={t('admin.count')}
          id="codes-count"
          inputMode="numeric"
          value={count}
          onInput={(e) => setCount((e.target as HTMLInputElement).value)}
        />
        <Field
          label={t('admin.amount')}
          id="codes-amount"
          inputMode="decimal"
          value={amount}
          onInput={(e) => setAmount((e.target as HTMLInputElement).value)}
        />
        <Field
          label={t('admin.expires')}
          id="codes-expires"
          value={expires}
          onInput={(e) => setExpires((e.target as HTMLInputElement).value)}
        />
        <Field
          label={t('admin.note')}
          id="codes-note"
          value={note}
          onInput={(e) => setNote((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={make.busy}>
          {t('admin.makeCodes')}
        </button>
      </form>
      <ErrorText error={make.error} />
      {made && (
        <div role="status">
          <p class="notice">{t('admin.newCodes')}</p>
          <pre data-testid="new-codes">{made.codes.join('\n')}</pre>
        </div>
      )}
      <ErrorText error={list.error} />
      {list.data && (
        <Scroll label={t('admin.codes')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('admin.prefix')}</th>
                <th scope="col" class="num">
                  {t('admin.amount')}
                </th>
                <th scope="col">{t('admin.status')}</th>
                <th scope="col">{t('admin.redeemedBy')}</th>
                <th scope="col">{t('admin.expires')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((c) => (
                <tr key={c.id}>
                  <td>{c.prefix}…</td>
                  <td class="num">
                    <Money value={c.amount_usd} />
                  </td>
                  <td>{word('codeStatus', c.status)}</td>
                  <td>{c.redeemed_by ?? '—'}</td>
                  <td>{dateTime(lang, c.expires_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
    </Section>
  );
}
