// The catalogue as the signed-in user buys it, discounts against official prices included.

import { api, type CatalogT } from '../api.js';
import { ErrorText, Section, useApp, useLoad } from '../ui.js';
import { ModelTable } from './models.js';

export function Catalogue() {
  const { t } = useApp();
  const models = useLoad(() => api.get<CatalogT>('/catalog'), []);
  return (
    <Section title={t('catalogue.title')} wide page>
      <p class="muted">{t('models.note')}</p>
      <ErrorText error={models.error} />
      {models.data && <ModelTable models={models.data.data} />}
    </Section>
  );
}
