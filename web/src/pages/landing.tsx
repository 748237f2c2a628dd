// The public front page: what this is, a few live figures, and the models with their prices.

import { api, type CatalogT, type PublicStatsT } from '../api.js';
import { num } from '../format.js';
import { ErrorText, Link, Section, useApp, useLoad } from '../ui.js';
import { ModelTable } from './models.js';

export function Landing() {
  const { t, lang, loggedIn } = useApp();
  const stats = useLoad(() => api.pub<PublicStatsT>('/stats'), []);
  const models = useLoad(() => api.pub<CatalogT>('/models'), []);
  const s = stats.data;
  return (
    <>
      <section class="hero">
        <h1>airouter</h1>
        <p>{t('app.tagline')}</p>
        <Link class="button" href={loggedIn ? '/overview' : '/signup'}>
          {loggedIn ? t('nav.overview') : t('landing.start')}
        </Link>
      </section>
      <Section title={t('landing.stats')} wide>
        <ErrorText error={stats.error} />
        {s && (
          <dl class="figures">
            <div>
              <dt>{t('stats.models')}</dt>
              <dd>{num(lang, s.models)}</dd>
            </div>
            <div>
              <dt>{t('stats.requests24h')}</dt>
              <dd>{num(lang, s.requests_24h)}</dd>
            </div>
            <div>
              <dt>{t('stats.tokens24h')}</dt>
              <dd>{num(lang, s.tokens_24h)}</dd>
            </div>
            <div>
              <dt>{t('stats.tokensTotal')}</dt>
              <dd>{num(lang, s.tokens_total)}</dd>
            </div>
          </dl>
        )}
      </Section>
      <Section title={t('models.title')} wide>
        <p class="muted">{t('models.note')}</p>
        <ErrorText error={models.error} />
        {models.data && <ModelTable models={models.data.data} />}
      </Section>
    </>
  );
}
