// The model table, shared by the landing page (public list) and the catalogue page.

import type { CatalogueModelT } from '../api.js';
import { num, price } from '../format.js';
import { Scroll, useApp } from '../ui.js';

export function ModelTable({ models }: { models: CatalogueModelT[] }) {
  const { t, lang } = useApp();
  return (
    <Scroll label={t('models.title')}>
      <table>
        <thead>
          <tr>
            <th scope="col">{t('models.model')}</th>
            <th scope="col" class="num">
              {t('models.context')}
            </th>
            <th scope="col" class="num">
              {t('models.input')}
            </th>
            <th scope="col" class="num">
              {t('models.output')}
            </th>
            <th scope="col" class="num">
              {t('models.cacheRead')}
            </th>
            <th scope="col" class="num">
              {t('models.official')}
            </th>
            <th scope="col" class="num">
              {t('models.discount')}
            </th>
          </tr>
        </thead>
        <tbody>
          {models.map((m) => (
            <tr key={m.id}>
              <th scope="row">
                {m.display_name}
                {m.display_name !== m.id && (
                  <>
                    <br />
                    <code>{m.id}</code>
                  </>
                )}
                {m.kind === 'embedding' && (
                  <>
                    <br />
                    <span class="badge">{t('models.embedding')}</span>
                  </>
                )}
              </th>
              <td class="num">{m.context_window ? num(lang, m.context_window) : '—'}</td>
              <td class="num">{price(lang, m.pricing.input)}</td>
              {/* An embedding model sells input only: no output, no cache. */}
              <td class="num">{m.kind === 'embedding' ? '—' : price(lang, m.pricing.output)}</td>
              <td class="num">{m.kind === 'embedding' ? '—' : price(lang, m.pricing.cache_read)}</td>
              <td class="num muted">
                {price(lang, m.official_pricing.input)}
                {m.kind === 'embedding' ? '' : <> / {price(lang, m.official_pricing.output)}</>}
              </td>
              <td class="num">{m.discount_pct > 0 ? <span class="badge paid">−{m.discount_pct}%</span> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Scroll>
  );
}
