// Balance, spend and tokens over a range, what the same usage would cost at official prices,
// and the per-day chart.

import type { FunctionComponent } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, type BalanceT, type UsageStatsT } from '../api.js';
import type { DayPoint } from '../chart.js';
import type { Lang } from '../i18n.js';
import { num } from '../format.js';
import { Onboarding } from './onboarding.js';
import { DEFAULT_RANGE, ErrorText, Money, RangeSelect, Scroll, Section, useApp, useLoad, type Range } from '../ui.js';

type Chart = FunctionComponent<{ points: DayPoint[]; labels: { spend: string; tokens: string }; lang: Lang }>;

const DAY_S = 86_400;

/** One point per UTC day of the range, days without usage at zero. */
function dayPoints(stats: UsageStatsT & { from?: string | null; to?: string | null }): DayPoint[] {
  const byDay = new Map(stats.by_day.map((d) => [Date.parse(`${d.day}T00:00:00Z`) / 1000, d]));
  const known = [...byDay.keys()];
  const floorDay = (ms: number) => Math.floor(ms / 1000 / DAY_S) * DAY_S;
  const first = stats.from ? floorDay(Date.parse(stats.from)) : Math.min(...known, floorDay(Date.now()));
  const last = floorDay(stats.to ? Date.parse(stats.to) - 1 : Date.now());
  const points: DayPoint[] = [];
  for (let day = first; day <= last; day += DAY_S) {
    const d = byDay.get(day);
    points.push({ t: day, spend: d ? Number(d.cost_usd) : 0, tokens: d ? d.total_tokens : 0 });
  }
  return points;
}

export function Overview() {
  const { t, lang, balance, refreshBalance } = useApp();
  const [range, setRange] = useState<Range>(DEFAULT_RANGE);
  const bal = useLoad<BalanceT | null>(() => refreshBalance(), []);
  const stats = useLoad(() => api.get<UsageStatsT>(`/usage-stats?range=${range}`), [range]);
  const [Chart, setChart] = useState<Chart | null>(null);
  useEffect(() => {
    import('../chart.js').then((m) => setChart(() => m.default));
  }, []);
  const points = useMemo(() => (stats.data ? dayPoints(stats.data) : []), [stats.data]);
  const labels = useMemo(() => ({ spend: t('overview.chartSpend'), tokens: t('overview.chartTokens') }), [t]);
  const b = balance ?? bal.data;
  const s = stats.data;
  return (
    <>
      <Section title={t('overview.title')} wide page>
        <ErrorText error={bal.error} />
        {b && (
          <dl class="figures">
            <div>
              <dt>{t('overview.balance')}</dt>
              <dd data-testid="balance">
                <Money value={b.balance_usd} />
              </dd>
            </div>
            <div>
              <dt>{t('overview.reserved')}</dt>
              <dd>
                <Money value={b.reserved_usd} />
              </dd>
            </div>
            <div>
              <dt>{t('overview.available')}</dt>
              <dd>
                <Money value={b.available_usd} />
              </dd>
            </div>
          </dl>
        )}
      </Section>
      {b && s && <Onboarding balance={b} requests={s.requests} />}
      <Section title={t('overview.perDay')} wide>
        <RangeSelect value={range} onChange={setRange} />
        <ErrorText error={stats.error} />
        {s && (
          <>
            <dl class="figures">
              <div>
                <dt>{t('overview.requests')}</dt>
                <dd data-testid="requests">{num(lang, s.requests)}</dd>
              </div>
              <div>
                <dt>{t('overview.tokens')}</dt>
                <dd data-testid="tokens">{num(lang, s.total_tokens)}</dd>
                <small>
                  {t('overview.tokensDetail', {
                    prompt: num(lang, s.prompt_tokens),
                    completion: num(lang, s.completion_tokens),
                  })}
                </small>
              </div>
              <div>
                <dt>{t('overview.spend')}</dt>
                <dd data-testid="spend">
                  <Money value={s.cost_usd} />
                </dd>
              </div>
              <div>
                <dt>{t('overview.official')}</dt>
                <dd>
                  <Money value={s.official_cost_usd} />
                </dd>
              </div>
              <div>
                <dt>{t('overview.saved')}</dt>
                <dd class="good">
                  <Money value={s.saved_usd} />
                </dd>
              </div>
            </dl>
            {Chart && <Chart points={points} labels={labels} lang={lang} />}
            {s.by_model.length > 0 && (
              <>
                <h3>{t('overview.byModel')}</h3>
                <Scroll label={t('overview.byModel')}>
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">{t('usage.model')}</th>
                        <th scope="col" class="num">
                          {t('overview.requests')}
                        </th>
                        <th scope="col" class="num">
                          {t('overview.tokens')}
                        </th>
                        <th scope="col" class="num">
                          {t('overview.spend')}
                        </th>
                        <th scope="col" class="num">
                          {t('overview.saved')}
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {s.by_model.map((m) => (
                        <tr key={m.model}>
                          <th scope="row">
                            <code>{m.model}</code>
                          </th>
                          <td class="num">{num(lang, m.requests)}</td>
                          <td class="num">{num(lang, m.total_tokens)}</td>
                          <td class="num">
                            <Money value={m.cost_usd} />
                          </td>
                          <td class="num good">
                            <Money value={m.saved_usd} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </Scroll>
              </>
            )}
          </>
        )}
      </Section>
    </>
  );
}
