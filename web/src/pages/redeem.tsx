// The user's side of the operator's features: redeeming a code and the low-balance alert (on
// the top-up page), and the banner shown while the balance is under the alert's threshold.

import { useState } from 'preact/hooks';
import { usd } from '../format.js';
import { ErrorText, Field, prevented, Section, useApp, useLoad, useSubmit } from '../ui.js';
import { admin, type AlertsT, type RedeemAnswerT } from './admin/client.js';
import { useAdminT } from './admin/i18n.js';

export function RedeemCode() {
  const { lang, refreshBalance } = useApp();
  const t = useAdminT();
  const [code, setCode] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const redeem = useSubmit(async () => {
    setDone(null);
    const r = await admin.dashboard<RedeemAnswerT>('POST', '/redeem', { code });
    setDone(t('redeem.done', { amount: usd(lang, r.credited_usd) }));
    setCode('');
    await refreshBalance();
  });
  return (
    <Section title={t('redeem.title')}>
      <form onSubmit={prevented(() => redeem.run())}>
        <Field
          label={t('redeem.code')}
          id="redeem-code"
          value={code}
          maxLength={64}
          autocomplete="off"
          onInput={(e) => setCode((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={redeem.busy || code.trim() === ''}>
          {t('redeem.submit')}
        </button>
      </form>
      <ErrorText error={redeem.error} />
      {done && (
        <p class="notice" role="status" data-testid="redeem-done">
          {done}
        </p>
      )}
    </Section>
  );
}

export function LowBalanceAlert() {
  const t = useAdminT();
  const state = useLoad(() => admin.dashboard<AlertsT>('GET', '/alerts'), []);
  const [value, setValue] = useState<string | null>(null);
  const save = useSubmit(async (low_balance_usd: string | null) => {
    await admin.dashboard('POST', '/alerts', { low_balance_usd });
    setValue(null);
    state.reload();
  });
  const shown = value ?? state.data?.low_balance_usd?.replace(/\.?0+$/, '') ?? '';
  return (
    <Section title={t('alert.title')}>
      <form onSubmit={prevented(() => save.run(shown || null))}>
        <Field
          label={t('alert.threshold')}
          id="alert-threshold"
          inputMode="decimal"
          value={shown}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={save.busy}>
          {t('alert.save')}
        </button>{' '}
        {state.data?.low_balance_usd && (
          <button type="button" class="secondary" disabled={save.busy} onClick={() => save.run(null)}>
            {t('alert.off')}
          </button>
        )}
      </form>
      <ErrorText error={state.error ?? save.error} />
    </Section>
  );
}

/** Shown above every page while the balance is below the user's alert threshold. */
export function LowBalanceBanner() {
  const { lang, loggedIn, balance } = useApp();
  const t = useAdminT();
  // Asked again whenever the header's balance moves.
  const state = useLoad(
    () => (loggedIn ? admin.dashboard<AlertsT>('GET', '/alerts') : Promise.resolve(null)),
    [loggedIn, balance?.balance_usd],
  );
  if (!state.data?.below || !state.data.low_balance_usd) return null;
  return (
    <p class="notice warn" role="status" data-testid="low-balance-banner">
      {t('alert.banner', { amount: usd(lang, state.data.low_balance_usd) })}
    </p>
  );
}
