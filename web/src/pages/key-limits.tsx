// A key's limits, for a new key and for an existing one: requests per minute, and a spending
// cap with its period. The page checks nothing itself: the API's rules (a period with a cap and
// only with one, amounts above 0 with at most 9 decimals) come back worded next to the field.

import { useState } from 'preact/hooks';
import type { KeyT } from '../api.js';
import { usd } from '../format.js';
import type { Translate } from '../i18n.js';
import { Field, Select, useApp, type useSubmit } from '../ui.js';

export const PERIODS = ['day', 'week', 'month', 'total'] as const;
export type Period = (typeof PERIODS)[number];

export interface LimitsDraft {
  rpm: string;
  spend: string;
  period: '' | Period;
}

export const draftOf = (k?: KeyT): LimitsDraft => ({
  rpm: k?.rpm_limit != null ? String(k.rpm_limit) : '',
  // The 9-decimal string, trailing zeros dropped: "5.000000000" is edited as "5".
  spend: k?.spend_limit_usd != null ? k.spend_limit_usd.replace(/\.?0+$/, '') : '',
  period: k?.spend_limit_period ?? '',
});

/**
 * The body fields for a draft. For a new key an empty field is left out; for an existing one
 * it is null (remove the limit). The period goes with an amount, or alone when the user picked
 * one without an amount, so that the API can say what is missing.
 */
export function limitsBody(d: LimitsDraft, existing: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const rpm = d.rpm.trim();
  const spend = d.spend.trim();
  if (rpm) out.rpm_limit = /^\d+$/.test(rpm) ? Number(rpm) : rpm;
  else if (existing) out.rpm_limit = null;
  if (spend) out.spend_limit_usd = spend;
  else if (existing) out.spend_limit_usd = null;
  if (d.period && (spend || !existing)) out.spend_limit_period = d.period;
  return out;
}

export const LIMIT_PARAMS = ['rpm_limit', 'spend_limit_usd', 'spend_limit_period'];

export function LimitFields({
  draft,
  set,
  submit,
  idPrefix,
}: {
  draft: LimitsDraft;
  set(d: LimitsDraft): void;
  submit: ReturnType<typeof useSubmit>;
  idPrefix: string;
}) {
  const { t } = useApp();
  return (
    <fieldset class="limits">
      <legend>{t('keys.limits')}</legend>
      <Field
        label={t('keys.rpm')}
        id={`${idPrefix}rpm`}
        inputMode="numeric"
        value={draft.rpm}
        hint={t('keys.rpmHint')}
        onInput={submit.edit((v) => set({ ...draft, rpm: v }))}
        error={submit.at('rpm_limit')}
      />
      <Field
        label={t('keys.spend')}
        id={`${idPrefix}spend`}
        inputMode="decimal"
        value={draft.spend}
        hint={t('keys.spendHint')}
        onInput={submit.edit((v) => set({ ...draft, spend: v }))}
        error={submit.at('spend_limit_usd')}
      />
      <Select
        label={t('keys.period')}
        id={`${idPrefix}period`}
        value={draft.period}
        error={submit.at('spend_limit_period')}
        onChange={(v) => {
          set({ ...draft, period: v as LimitsDraft['period'] });
          submit.setError(null);
        }}
        options={[['', t('keys.periodNone')], ...PERIODS.map((p): [string, string] => [p, t(`keys.period.${p}`)])]}
      />
    </fieldset>
  );
}

/** "60/min · $5 a day", or "no limits". */
export function limitsText(t: Translate, lang: Parameters<typeof usd>[0], k: KeyT): string {
  const parts: string[] = [];
  if (k.rpm_limit != null) parts.push(t('keys.rpmShort', { n: k.rpm_limit }));
  if (k.spend_limit_usd != null && k.spend_limit_period)
    parts.push(t(`keys.spendShort.${k.spend_limit_period}`, { amount: usd(lang, k.spend_limit_usd) }));
  return parts.length ? parts.join(' · ') : t('keys.noLimits');
}

/** The edit form of one key: its name and limits, saved with PATCH. */
export function useLimitsDraft(k?: KeyT) {
  return useState<LimitsDraft>(() => draftOf(k));
}
