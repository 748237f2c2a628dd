// Admin: every deposit by status and method; confirm or fail one by hand, with a reason.

import { useState } from 'preact/hooks';
import { qs } from '../../api.js';
import { dateTime } from '../../format.js';
import { codeWord } from '../../i18n.js';
import { ErrorText, Field, Money, Scroll, Section, Select, StatusBadge, useApp, useLoad, useSubmit } from '../../ui.js';
import { admin, type AdminDepositListT } from './client.js';
import { useAdminT } from './i18n.js';
import { AdminShell } from './shell.js';

const STATES = ['pending', 'paid', 'expired', 'failed'] as const;
const METHODS = ['qris', 'epusdt', 'code', 'operator'];

export function AdminDeposits() {
  return (
    <AdminShell>
      <DepositList />
    </AdminShell>
  );
}

function DepositList() {
  const { lang, t: appT } = useApp();
  const t = useAdminT();
  const [status, setStatus] = useState('');
  const [method, setMethod] = useState('');
  const [acting, setActing] = useState<string | null>(null);
  const [reason, setReason] = useState('');
  const [reference, setReference] = useState('');
  const list = useLoad(
    () => admin.get<AdminDepositListT>(`/deposits${qs({ status, method, limit: 100 })}`),
    [status, method],
  );
  const act = useSubmit(async (id: string, what: 'confirm' | 'fail') => {
    await admin.post(`/deposits/${id}/${what}`, { reason, ...(reference ? { reference } : {}) });
    setActing(null);
    setReason('');
    setReference('');
    list.reload();
  });
  return (
    <Section title={t('admin.deposits')} wide page>
      <div class="filters">
        <Select
          label={t('admin.status')}
          id="dep-status"
          value={status}
          onChange={setStatus}
          options={[['', t('admin.all')], ...STATES.map((s): [string, string] => [s, appT(`status.${s}`)])]}
        />
        <Select
          label={t('admin.method')}
          id="dep-method"
          value={method}
          onChange={setMethod}
          options={[['', t('admin.all')], ...METHODS.map((m): [string, string] => [m, codeWord(lang, 'method', m)])]}
        />
      </div>
      <ErrorText error={list.error} />
      <ErrorText error={act.error} />
      {list.data && (
        <Scroll label={t('admin.deposits')}>
          <table data-testid="admin-deposits">
            <thead>
              <tr>
                <th scope="col">{t('admin.when')}</th>
                <th scope="col">{t('admin.email')}</th>
                <th scope="col">{t('admin.method')}</th>
                <th scope="col" class="num">
                  {t('admin.amountCredit')}
                </th>
                <th scope="col">{t('admin.status')}</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((d) => (
                <tr key={d.id}>
                  <td>{dateTime(lang, d.created_at)}</td>
                  <td>{d.email}</td>
                  <td>{codeWord(lang, 'method', d.method)}</td>
                  <td class="num">
                    <Money value={d.amount} currency={d.currency} /> (<Money value={d.credit_usd} />)
                  </td>
                  <td>
                    <StatusBadge status={d.status} />
                  </td>
                  <td>
                    {(d.status === 'pending' || d.status === 'expired') && acting !== d.id && (
                      <button type="button" class="secondary" onClick={() => setActing(d.id)}>
                        {t('admin.open')}
                      </button>
                    )}
                    {acting === d.id && (
                      <form onSubmit={(e) => e.preventDefault()}>
                        <Field
                          label={t('admin.reason')}
                          id={`reason-${d.id}`}
                          value={reason}
                          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
                        />
                        <Field
                          label={t('admin.reference')}
                          id={`ref-${d.id}`}
                          value={reference}
                          onInput={(e) => setReference((e.target as HTMLInputElement).value)}
                        />
                        <button type="button" disabled={act.busy} onClick={() => act.run(d.id, 'confirm')}>
                          {t('admin.confirm')}
                        </button>{' '}
                        <button
                          type="button"
                          class="secondary"
                          disabled={act.busy}
                          onClick={() => act.run(d.id, 'fail')}
                        >
                          {t('admin.fail')}
                        </button>
                      </form>
                    )}
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
