// Deposit history, newest first; an open invoice links back to its QR code and status.

import { useState } from 'preact/hooks';
import { api, qs, type DepositPageT, type DepositT } from '../api.js';
import { dateTime } from '../format.js';
import { codeWord } from '../i18n.js';
import { ErrorText, Link, Money, Scroll, Section, StatusBadge, useApp, useLoad } from '../ui.js';

export function Deposits() {
  const { t, lang } = useApp();
  const [cursor, setCursor] = useState<string | null>(null);
  const [earlier, setEarlier] = useState<DepositT[]>([]);
  const page = useLoad(() => api.get<DepositPageT>(`/deposits${qs({ limit: 50, cursor })}`), [cursor]);
  const rows = [...earlier, ...(page.data?.data ?? [])];
  const more = () => {
    setEarlier(rows);
    setCursor(page.data!.next_cursor);
  };
  return (
    <Section title={t('deposits.title')} wide page>
      <ErrorText error={page.error} />
      {page.data && rows.length === 0 && <p class="muted">{t('common.none')}</p>}
      {rows.length > 0 && (
        <Scroll label={t('deposits.title')}>
          <table data-testid="deposits-table">
            <thead>
              <tr>
                <th scope="col">{t('deposits.date')}</th>
                <th scope="col">{t('deposits.method')}</th>
                <th scope="col" class="num">
                  {t('deposits.amount')}
                </th>
                <th scope="col" class="num">
                  {t('deposits.credit')}
                </th>
                <th scope="col">{t('deposits.status')}</th>
                <th scope="col">{t('deposits.paidAt')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id}>
                  <td>{dateTime(lang, d.created_at)}</td>
                  <td>{codeWord(lang, 'method', d.method)}</td>
                  <td class="num">
                    <Money value={d.amount} currency={d.currency} />
                  </td>
                  <td class="num">
                    <Money value={d.credit_usd} />
                  </td>
                  <td>
                    <StatusBadge status={d.status} />{' '}
                    {d.status === 'pending' && <Link href={`/topup?deposit=${d.id}`}>{t('deposits.open')}</Link>}
                  </td>
                  <td>{dateTime(lang, d.paid_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      {page.data?.next_cursor && (
        <button type="button" class="secondary" onClick={more}>
          {t('common.more')}
        </button>
      )}
    </Section>
  );
}
