// Adding funds. QRIS: an amount in rupiah, then the QR code, the exact amount to pay, the
// credit it buys, a countdown to its expiry and its status, live until it is paid.
// USDT/USDC: an amount in USD, then the provider's hosted checkout page.

import { useEffect, useState } from 'preact/hooks';
import { api, type DepositDetailT, type DepositMethodsT, type DepositMethodT } from '../api.js';
import { countdown, idr, money, num, usd, usdAbout } from '../format.js';
import { codeWord } from '../i18n.js';
import {
  ErrorText,
  Field,
  Link,
  Money,
  prevented,
  Section,
  Select,
  StatusBadge,
  useApp,
  useLoad,
  useSubmit,
} from '../ui.js';
import { LowBalanceAlert, RedeemCode } from './redeem.js';

const POLL_MS = 2000;

/** Rough credit for an amount, shown while typing; the invoice states the exact one. */
function estimate(m: DepositMethodT, amount: string): number | null {
  const a = Number(amount);
  if (!amount.trim() || !Number.isFinite(a) || a <= 0) return null;
  return (a * (1 - Number(m.fee_pct) / 100)) / Number(m.rate);
}

function MethodForm({ m }: { m: DepositMethodT }) {
  const { t, lang, navigate } = useApp();
  const [amount, setAmount] = useState('');
  const [token, setToken] = useState(m.tokens?.[0] ?? '');
  const qris = m.id === 'qris';
  const fmt = (x: string) => (qris ? idr(lang, x) : usd(lang, x));
  const submit = useSubmit(async () => {
    const body = qris ? { amount_idr: amount.trim() } : { amount_usd: amount.trim(), ...(token ? { token } : {}) };
    const d = await api.post<{ id: string; payment_url?: string }>(`/deposits/${encodeURIComponent(m.id)}`, body);
    // A hosted checkout is paid on its own page; any other invoice is shown here.
    if (d.payment_url) {
      // Back from the checkout page, the browser's back button lands on this deposit's status.
      history.replaceState(null, '', `/topup?deposit=${d.id}`);
      location.assign(d.payment_url);
    } else {
      navigate(`/topup?deposit=${d.id}`);
    }
  });
  const credit = estimate(m, amount);
  return (
    <form noValidate onSubmit={prevented(() => submit.run())}>
      <Field
        label={qris ? t('topup.amountIdr') : t('topup.amountUsd')}
        id="amount"
        inputMode={qris ? 'numeric' : 'decimal'}
        autocomplete="off"
        value={amount}
        onInput={submit.edit(setAmount)}
        error={submit.at('amount_idr', 'amount_usd')}
        format={(p) => ({ ...p, min: p.min && fmt(p.min), max: p.max && fmt(p.max) })}
        hint={`${t('topup.limits', { min: fmt(m.min), max: fmt(m.max) })} ${qris ? t('topup.rate', { rate: idr(lang, m.rate) }) : ''}${Number(m.fee_pct) > 0 ? t('topup.fee', { fee: num(lang, m.fee_pct) }) : ''}`}
      />
      {m.tokens && m.tokens.length > 1 && (
        <Select
          label={t('topup.token')}
          id="token"
          value={token}
          onChange={setToken}
          options={m.tokens.map((x): [string, string] => [x, x.toUpperCase()])}
        />
      )}
      {credit !== null && (
        <p class="muted" aria-live="polite">
          {t('topup.buys', { credit: usdAbout(lang, credit) })}
        </p>
      )}
      <ErrorText error={submit.rest('amount_idr', 'amount_usd')} />
      <button type="submit" disabled={submit.busy}>
        {qris ? t('topup.createQris') : t('topup.createUsdt')}
      </button>
    </form>
  );
}

function DepositView({ id }: { id: string }) {
  const { t, lang, refreshBalance, balance } = useApp();
  const [d, setD] = useState<DepositDetailT | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [now, setNow] = useState(Date.now());

  // Status until it leaves `pending`; the balance is read again once it is paid.
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      try {
        const next = await api.get<DepositDetailT>(`/deposits/${encodeURIComponent(id)}`);
        // The new balance first, so that "paid" and the balance it made appear together.
        if (next.status === 'paid') await refreshBalance();
        if (!live) return;
        setD(next);
        setError(null);
        if (next.status !== 'pending') return;
      } catch (err) {
        if (!live) return;
        setError(err);
      }
      timer = setTimeout(poll, POLL_MS);
    };
    poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, refreshBalance]);

  useEffect(() => {
    const tick = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(tick);
  }, []);

  if (!d) return <>{error ? <ErrorText error={error} /> : <p class="muted">{t('common.loading')}</p>}</>;
  const amount = money(lang, d.amount, d.currency);
  return (
    <div class="invoice">
      {d.status === 'pending' && d.qr_png && (
        <>
          <p>{t('topup.scan')}</p>
          <p class="amount money" data-testid="pay-amount">
            {amount}
          </p>
          <img class="qr" src={d.qr_png} width={280} height={280} alt={t('topup.qrAlt', { amount })} />
        </>
      )}
      {d.status === 'pending' && d.payment_url && (
        <p>
          <a class="button" href={d.payment_url}>
            {t('topup.checkout')}
          </a>
        </p>
      )}
      <dl class="figures">
        <div>
          <dt>{t('topup.credit')}</dt>
          <dd>
            <Money value={d.credit_usd} />
          </dd>
        </div>
        {d.status === 'pending' && d.expires_at && (
          <div>
            <dt>{t('topup.expiresIn')}</dt>
            <dd data-testid="countdown">{countdown(d.expires_at, now)}</dd>
          </div>
        )}
        <div>
          <dt>{t('topup.status')}</dt>
          <dd data-testid="deposit-status">
            <StatusBadge status={d.status} />
          </dd>
        </div>
      </dl>
      <p
        aria-live="polite"
        class={d.status === 'paid' ? 'success' : d.status === 'pending' ? 'muted' : 'error'}
        data-testid="deposit-message"
      >
        {d.status === 'pending' && t('topup.waiting')}
        {d.status === 'paid' && t('topup.paid', { balance: balance ? usd(lang, balance.balance_usd) : '…' })}
        {d.status === 'expired' && t('topup.expired')}
        {d.status === 'failed' && t('topup.failed')}
      </p>
      <ErrorText error={error} />
      {d.status !== 'pending' && (
        <Link class="button secondary" href="/topup">
          {t('topup.another')}
        </Link>
      )}
    </div>
  );
}

export function TopUp() {
  const { t, lang, query } = useApp();
  // The form's own words say the currency (QRIS in rupiah); a method added later has its code word.
  const methodName = (id: string) =>
    id === 'qris' ? t('topup.qris') : id === 'epusdt' ? t('topup.epusdt') : codeWord(lang, 'method', id);
  const deposit = query.get('deposit');
  const info = useLoad(() => api.get<DepositMethodsT>('/deposit/info'), []);
  const [picked, setPicked] = useState<string | null>(null);
  const methods = info.data?.methods ?? [];
  const method = methods.find((m) => m.id === picked) ?? methods[0];
  return (
    <>
      <Section title={t('topup.title')} wide page>
        {deposit ? (
          <DepositView id={deposit} />
        ) : (
          <>
            <ErrorText error={info.error} />
            {info.data && methods.length === 0 && <p class="muted">{t('topup.none')}</p>}
            {methods.length > 1 && (
              <fieldset class="methods">
                <legend>{t('topup.method')}</legend>
                {methods.map((m) => (
                  <label key={m.id}>
                    <input
                      type="radio"
                      name="method"
                      value={m.id}
                      checked={m === method}
                      onChange={() => setPicked(m.id)}
                    />
                    {methodName(m.id)}
                  </label>
                ))}
              </fieldset>
            )}
            {methods.length === 1 && <p class="muted">{methodName(method.id)}</p>}
            {method && <MethodForm key={method.id} m={method} />}
          </>
        )}
      </Section>
      {!deposit && <RedeemCode />}
      {!deposit && <LowBalanceAlert />}
    </>
  );
}
