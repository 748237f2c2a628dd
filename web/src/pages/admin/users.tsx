// Admin: find a user; see their balance (available, reserved), keys, usage and adjustments;
// credit or debit with a reason; disable or enable.

import { useState } from 'preact/hooks';
import { qs } from '../../api.js';
import { dateTime, num, usd } from '../../format.js';
import { ErrorText, Field, Money, prevented, Scroll, Section, useApp, useLoad, useSubmit } from '../../ui.js';
import { admin, type AdjustAnswerT, type AdminUserDetailT, type AdminUserListT } from './client.js';
import { useAdminT } from './i18n.js';
import { AdminShell } from './shell.js';

export function AdminUsers() {
  return (
    <AdminShell>
      <UserList />
    </AdminShell>
  );
}

function UserList() {
  const { query, navigate } = useApp();
  const t = useAdminT();
  const [q, setQ] = useState(query.get('q') ?? '');
  const selected = query.get('user');
  const list = useLoad(
    () => admin.get<AdminUserListT>(`/users${qs({ q: query.get('q'), limit: 100 })}`),
    [query.get('q')],
  );
  return (
    <>
      <Section title={t('admin.users')} wide page>
        <form role="search" onSubmit={prevented(() => navigate(`/admin${qs({ q })}`))}>
          <Field
            label={t('admin.search')}
            id="admin-q"
            value={q}
            onInput={(e) => setQ((e.target as HTMLInputElement).value)}
          />
        </form>
        <ErrorText error={list.error} />
        {list.data && (
          <Scroll label={t('admin.users')}>
            <table data-testid="admin-users">
              <thead>
                <tr>
                  <th scope="col">{t('admin.email')}</th>
                  <th scope="col" class="num">
                    {t('admin.balance')}
                  </th>
                  <th scope="col">{t('admin.role')}</th>
                  <th scope="col">{t('admin.status')}</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((u) => (
                  <tr key={u.id}>
                    <td>
                      <a
                        href={`/admin${qs({ q: query.get('q'), user: u.id })}`}
                        onClick={prevented(() => navigate(`/admin${qs({ q: query.get('q'), user: u.id })}`))}
                      >
                        {u.email}
                      </a>
                    </td>
                    <td class="num">
                      <Money value={u.balance_usd} />
                    </td>
                    <td>{u.is_admin ? t('admin.roleAdmin') : t('admin.roleUser')}</td>
                    <td>{u.disabled ? t('admin.disabled') : t('admin.enabled')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
        )}
      </Section>
      {selected && <UserDetail id={selected} onChange={list.reload} />}
    </>
  );
}

function UserDetail({ id, onChange }: { id: string; onChange(): void }) {
  const { lang } = useApp();
  const t = useAdminT();
  const detail = useLoad(() => admin.get<AdminUserDetailT>(`/users/${id}`), [id]);
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const act = useSubmit(async (path: string, body: unknown) => {
    setDone(null);
    const r = await admin.post<AdjustAnswerT | object>(`/users/${id}/${path}`, body);
    setDone(
      'balance_usd' in r ? `${t('admin.done')} ${t('admin.balance')}: ${usd(lang, r.balance_usd)}` : t('admin.done'),
    );
    setAmount('');
    setReason('');
    detail.reload();
    onChange();
  });
  const d = detail.data;
  return (
    <Section title={d ? d.user.email : '…'} wide>
      <ErrorText error={detail.error} />
      {d && (
        <>
          <dl class="figures" data-testid="admin-balance">
            <div>
              <dt>{t('admin.balance')}</dt>
              <dd>
                <Money value={d.balance.balance_usd} />
              </dd>
            </div>
            <div>
              <dt>{t('admin.reserved')}</dt>
              <dd>
                <Money value={d.balance.reserved_usd} />
              </dd>
            </div>
            <div>
              <dt>{t('admin.available')}</dt>
              <dd>
                <Money value={d.balance.available_usd} />
              </dd>
            </div>
          </dl>
          <form onSubmit={(e) => e.preventDefault()}>
            <Field
              label={t('admin.amount')}
              id="adj-amount"
              inputMode="decimal"
              value={amount}
              onInput={(e) => setAmount((e.target as HTMLInputElement).value)}
            />
            <Field
              label={t('admin.reason')}
              id="adj-reason"
              value={reason}
              maxLength={500}
              onInput={(e) => setReason((e.target as HTMLInputElement).value)}
            />
            <div class="actions">
              <button
                type="button"
                disabled={act.busy}
                onClick={() => act.run('credit', { amount_usd: amount, reason })}
              >
                {t('admin.credit')}
              </button>
              <button
                type="button"
                class="secondary"
                disabled={act.busy}
                onClick={() => act.run('debit', { amount_usd: amount, reason })}
              >
                {t('admin.debit')}
              </button>
              <button
                type="button"
                class="secondary"
                disabled={act.busy}
                onClick={() => act.run(d.user.disabled ? 'enable' : 'disable', reason ? { reason } : {})}
              >
                {d.user.disabled ? t('admin.enable') : t('admin.disable')}
              </button>
              <button
                type="button"
                class="secondary"
                disabled={act.busy}
                onClick={() => act.run('role', { admin: !d.user.is_admin })}
              >
                {d.user.is_admin ? t('admin.removeAdmin') : t('admin.makeAdmin')}
              </button>
            </div>
          </form>
          <ErrorText error={act.error} />
          {done && (
            <p role="status" class="notice">
              {done}
            </p>
          )}
          <h3>{t('admin.keys')}</h3>
          <Scroll label={t('admin.users')}>
            <table>
              <tbody>
                {d.keys.map((k) => (
                  <tr key={k.id}>
                    <td>{k.prefix}…</td>
                    <td>{k.name}</td>
                    <td>{dateTime(lang, k.created_at)}</td>
                    <td>{k.revoked_at ? t('admin.disabled') : t('admin.enabled')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          <h3>{t('admin.usage30')}</h3>
          <Scroll label={t('admin.users')}>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('admin.model')}</th>
                  <th scope="col" class="num">
                    {t('admin.requests')}
                  </th>
                  <th scope="col" class="num">
                    {t('admin.cost')}
                  </th>
                </tr>
              </thead>
              <tbody>
                {d.usage.map((u) => (
                  <tr key={u.model}>
                    <td>{u.model}</td>
                    <td class="num">{num(lang, u.requests)}</td>
                    <td class="num">
                      <Money value={u.cost_usd} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          <h3>{t('admin.adjustments')}</h3>
          <Scroll label={t('admin.users')}>
            <table data-testid="admin-adjustments">
              <tbody>
                {d.adjustments.map((a) => (
                  <tr key={a.id}>
                    <td>{dateTime(lang, a.created_at)}</td>
                    <td class="num">
                      <Money value={a.amount_usd} />
                    </td>
                    <td>{a.reason}</td>
                    <td>{a.actor}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
        </>
      )}
    </Section>
  );
}
