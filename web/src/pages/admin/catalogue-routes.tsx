// A model's routes as a form: per route its provider, the upstream's name for the model, a weight
// (blank: the routes are tried in order) and what the upstream charges; routes added and removed.
// The API checks what is sent as the catalogue file is checked, and says what is wrong.

import { useState } from 'preact/hooks';
import { useAdminT } from './i18n.js';
import { prevented } from '../../ui.js';

export interface RouteDraft {
  provider: string;
  model: string;
  enabled?: boolean;
  reasoning?: boolean;
  weight?: number;
  upstream_pricing?: { input: number; output?: number; cache_read?: number; cache_write?: number };
}

interface Row {
  provider: string;
  model: string;
  weight: string;
  upIn: string;
  upOut: string;
  /** What the form does not show, kept as it was. */
  rest: Omit<RouteDraft, 'provider' | 'model' | 'weight' | 'upstream_pricing'>;
  pricing: RouteDraft['upstream_pricing'];
}

const toRow = (r: RouteDraft): Row => {
  const { provider, model, weight, upstream_pricing, ...rest } = r;
  return {
    provider,
    model,
    weight: weight === undefined ? '' : String(weight),
    upIn: String(upstream_pricing?.input ?? ''),
    upOut: String(upstream_pricing?.output ?? ''),
    rest,
    pricing: upstream_pricing,
  };
};

function fromRow(r: Row): RouteDraft {
  const out: RouteDraft = { ...r.rest, provider: r.provider, model: r.model.trim() };
  if (r.weight.trim() !== '') out.weight = Number(r.weight);
  if (r.upIn.trim() !== '')
    out.upstream_pricing = {
      ...r.pricing,
      input: Number(r.upIn),
      ...(r.upOut.trim() !== '' ? { output: Number(r.upOut) } : {}),
    };
  return out;
}

export function RoutesEditor({
  idBase,
  routes,
  providers,
  busy,
  submitLabel,
  onSubmit,
}: {
  idBase: string;
  routes: RouteDraft[];
  providers: string[];
  busy: boolean;
  submitLabel: string;
  onSubmit(routes: RouteDraft[]): void;
}) {
  const t = useAdminT();
  const [rows, setRows] = useState<Row[]>(() => routes.map(toRow));
  const set = (i: number, patch: Partial<Row>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const known = (p: string) => (providers.includes(p) || p === '' ? providers : [p, ...providers]);
  return (
    <form class="routes-editor" onSubmit={prevented(() => onSubmit(rows.map(fromRow)))}>
      {rows.map((r, i) => {
        const id = `${idBase}-${i}`;
        const input = (k: 'model' | 'weight' | 'upIn' | 'upOut', label: string, decimal = false) => (
          <div class="field">
            <label for={`${id}-${k}`}>{label}</label>
            <input
              id={`${id}-${k}`}
              inputMode={decimal ? 'decimal' : undefined}
              value={r[k]}
              onInput={(e) => set(i, { [k]: (e.target as HTMLInputElement).value })}
            />
          </div>
        );
        return (
          <fieldset key={i}>
            <legend>
              {t('admin.route')} {i + 1}
            </legend>
            <div class="field">
              <label for={`${id}-provider`}>{t('cat.provider')}</label>
              <select
                id={`${id}-provider`}
                value={r.provider}
                onChange={(e) => set(i, { provider: (e.target as HTMLSelectElement).value })}
              >
                {known(r.provider).map((p) => (
                  <option key={p} value={p}>
                    {p}
                  </option>
                ))}
              </select>
            </div>
            {input('model', t('cat.upstreamModel'))}
            {input('weight', t('cat.weight'))}
            {input('upIn', t('admin.upstreamIn'), true)}
            {input('upOut', t('admin.upstreamOut'), true)}
            {rows.length > 1 && (
              <button type="button" class="link" onClick={() => setRows(rows.filter((_, j) => j !== i))}>
                {t('cat.removeRoute')}
              </button>
            )}
          </fieldset>
        );
      })}
      <div class="actions">
        <button
          type="button"
          class="secondary"
          onClick={() => setRows([...rows, toRow({ provider: providers[0] ?? '', model: '' })])}
        >
          {t('cat.addRoute')}
        </button>
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
