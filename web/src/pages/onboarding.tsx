// What a new account does next, on the overview while the balance is empty or no request has
// been made: add credit (top up, or ask the operator when this gateway takes no payments),
// make a key, send a first request.

import { api, type BalanceT, type DepositMethodsT } from '../api.js';
import { Link, Section, useApp, useLoad } from '../ui.js';

export function Onboarding({ balance, requests }: { balance: BalanceT; requests: number }) {
  const { t } = useApp();
  const empty = !/[1-9]/.test(balance.available_usd) || balance.available_usd.startsWith('-');
  const info = useLoad(() => api.get<DepositMethodsT>('/deposit/info'), []);
  if (!empty && requests > 0) return null;
  const canPay = (info.data?.methods.length ?? 0) > 0;
  return (
    <Section title={t('start.title')} wide>
      <ol class="steps" data-testid="onboarding">
        <li class={empty ? 'todo' : 'done'}>
          {!empty ? (
            t('start.funded')
          ) : !info.data ? (
            t('common.loading')
          ) : canPay ? (
            <>
              {t('start.topup')}{' '}
              <Link class="button" href="/topup">
                {t('nav.topup')}
              </Link>
            </>
          ) : (
            <span data-testid="no-payment">{t('start.operator')}</span>
          )}
        </li>
        <li>
          {t('start.key')} <Link href="/keys">{t('nav.keys')}</Link>
        </li>
        <li>{t('start.request')}</li>
      </ol>
    </Section>
  );
}
