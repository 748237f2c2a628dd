// The pieces every page uses: the app context (language, session, navigation, balance),
// labelled inputs, error text, data loading and the range picker.

import type { AnchorHTMLAttributes, ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type BalanceT } from './api.js';
import { money } from './format.js';
import { readable, type Lang, type MessageKey, type Translate } from './i18n.js';
import { errorWords } from './i18n-errors.js';

export interface AppState {
  lang: Lang;
  t: Translate;
  setLang(lang: Lang): void;
  path: string;
  query: URLSearchParams;
  navigate(to: string, replace?: boolean): void;
  loggedIn: boolean;
  /** Stores the session of a login or a verification and opens `next`. */
  signedIn(token: string, next?: string): void;
  logout(): void;
  balance: BalanceT | null;
  refreshBalance(): Promise<BalanceT | null>;
}

export const App = createContext<AppState>(null as unknown as AppState);
export const useApp = () => useContext(App);

export function Link({
  href,
  children,
  ...rest
}: { href: string; children: ComponentChildren } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const { navigate } = useApp();
  const onClick = (e: MouseEvent) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}

interface FieldProps {
  label: string;
  id: string;
  value: string;
  onInput(e: Event): void;
  hint?: string;
  /** Shown under the input, and read out with it. */
  error?: unknown;
  /** Words the error's figures (amounts in the field's currency). */
  format?: FormatParams;
  type?: 'text' | 'email' | 'password';
  autocomplete?: string;
  inputMode?: 'numeric' | 'decimal' | 'text';
  maxLength?: number;
}

/** A labelled input; `hint` and `error` are read out with it. */
export function Field({ label, id, hint, type = 'text', error, format, ...rest }: FieldProps) {
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {/* Preact types <input> per `type` value; a union of them does not narrow, hence the cast. */}
      <input
        id={id}
        name={id}
        type={type as 'text'}
        aria-invalid={error ? true : undefined}
        aria-describedby={described || undefined}
        {...rest}
      />
      {hint && <small id={`${id}-hint`}>{hint}</small>}
      <ErrorText error={error} id={`${id}-error`} format={format} />
    </div>
  );
}

/** A refusal the page finds itself, before asking the API (two passwords that differ). */
export class LocalError extends Error {
  constructor(
    readonly param: string,
    readonly key: MessageKey,
  ) {
    super(key);
  }
}

export type FormatParams = (params: Record<string, string>) => Record<string, string>;

/** The field an error is about, in the API's naming. */
const paramOf = (error: unknown) =>
  error instanceof ApiError || error instanceof LocalError ? error.param : undefined;

/** An error in the user's language: the API's code and figures worded here, never its English. */
export function errorText(t: Translate, lang: Lang, error: unknown, format?: FormatParams): string {
  if (error instanceof LocalError) return t(error.key);
  if (!(error instanceof ApiError)) return t('err.unexpected');
  if (error.code === 'network') return t('err.network');
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(error.params ?? {}))
    vars[k] = Array.isArray(v)
      ? v.join(', ')
      : typeof v === 'number'
        ? new Intl.NumberFormat(lang === 'id' ? 'id-ID' : 'en-US').format(v)
        : v;
  return (
    errorWords(lang, error.code, error.reason, format ? format(vars) : vars) ??
    t('err.unknown', { status: error.status })
  );
}

export function Select({
  label,
  id,
  value,
  onChange,
  options,
  error,
}: {
  label: string;
  id: string;
  value: string;
  onChange(v: string): void;
  options: [string, string][];
  error?: unknown;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select
        id={id}
        name={id}
        value={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => onChange((e.target as HTMLSelectElement).value)}
      >
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
      <ErrorText error={error} id={`${id}-error`} />
    </div>
  );
}

export function ErrorText({ error, id, format }: { error: unknown; id?: string; format?: FormatParams }) {
  const { t, lang } = useApp();
  if (!error) return null;
  return (
    <p class="error" role="alert" id={id}>
      {errorText(t, lang, error, format)}
    </p>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

/** Runs `load` when `deps` change; a late answer for old deps is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/**
 * A form's submit: busy while it runs, the error kept for display until the next edit. `at`
 * gives the error to the field it names; `rest` is what no field of the form shows.
 */
export function useSubmit<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const at = (...params: string[]) => {
    const p = paramOf(error);
    return p !== undefined && params.includes(p) ? error : null;
  };
  const rest = (...params: string[]) => {
    const p = paramOf(error);
    return p !== undefined && params.includes(p) ? null : error;
  };
  /** An input handler that also clears the error: a fixed input no longer shows it. */
  const edit = (set: (v: string) => void) => (e: Event) => {
    set((e.target as HTMLInputElement).value);
    setError(null);
  };
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run, at, rest, edit };
}

export const RANGES = ['24h', '7d', '30d', '90d'] as const;
export type Range = (typeof RANGES)[number];
/** Every page with a period opens on this one, so their figures agree. */
export const DEFAULT_RANGE: Range = '30d';

export function RangeSelect({ value, onChange }: { value: Range; onChange(r: Range): void }) {
  const { t } = useApp();
  return (
    <Select
      label={t('common.range')}
      id="range"
      value={value}
      onChange={(v) => onChange(v as Range)}
      options={RANGES.map((r) => [r, t(`range.${r}`)])}
    />
  );
}

/** A card; `page` makes its title the page's heading. */
export function Section({
  title,
  children,
  wide,
  page,
}: {
  title: string;
  children: ComponentChildren;
  wide?: boolean;
  page?: boolean;
}) {
  return (
    <section class={wide ? 'card wide' : 'card'}>
      {page ? <h1>{title}</h1> : <h2>{title}</h2>}
      {children}
    </section>
  );
}

/**
 * Wide tables scroll sideways inside the page on a phone instead of widening it. While some of
 * the table is out of sight, a shadow on that edge and a line under it say so; the region takes
 * keyboard focus, so arrow keys scroll it too.
 */
export function Scroll({ children, label }: { children: ComponentChildren; label: string }) {
  const { t } = useApp();
  const box = useRef<HTMLDivElement>(null);
  const [more, setMore] = useState({ left: false, right: false });
  useEffect(() => {
    const el = box.current!;
    const measure = () => {
      const next = { left: el.scrollLeft > 1, right: el.scrollLeft + el.clientWidth < el.scrollWidth - 1 };
      setMore((m) => (m.left === next.left && m.right === next.right ? m : next));
    };
    measure();
    el.addEventListener('scroll', measure, { passive: true });
    const watch = new ResizeObserver(measure);
    watch.observe(el);
    if (el.firstElementChild) watch.observe(el.firstElementChild);
    return () => {
      el.removeEventListener('scroll', measure);
      watch.disconnect();
    };
  }, []);
  const cls = `scroll${more.left ? ' more-left' : ''}${more.right ? ' more-right' : ''}`;
  return (
    <>
      <div ref={box} class={cls} tabIndex={0} role="region" aria-label={label}>
        {children}
      </div>
      {(more.left || more.right) && (
        <p class="scroll-hint" data-testid="scroll-hint">
          {t('common.scrollHint')}
        </p>
      )}
    </>
  );
}

const STATES = ['pending', 'paid', 'expired', 'failed'] as const;

/** A deposit's state in words; a state this build does not know yet, made readable. */
export function StatusBadge({ status }: { status: string }) {
  const { t } = useApp();
  const known = (STATES as readonly string[]).includes(status);
  return (
    <span class={`badge ${known ? status : ''}`}>
      {known ? t(`status.${status as (typeof STATES)[number]}`) : readable(status)}
    </span>
  );
}

/**
 * An amount as every page shows it (format.ts), kept on one line; the exact ledger figure is in
 * its title. The layout test finds amounts by the class.
 */
export function Money({ value, currency = 'USD' }: { value: string; currency?: string }) {
  const { lang } = useApp();
  return (
    <span class="money" title={currency === 'USD' ? value : undefined}>
      {money(lang, value, currency)}
    </span>
  );
}

/** A handler that stops the browser's own action (a form's submit, a dialog's cancel), then does `then`. */
export function prevented(then: () => unknown) {
  return (e: Event) => {
    e.preventDefault();
    void then();
  };
}
