// The pieces every page uses: the app context (language, session, navigation, balance),
// labelled inputs, error text, data loading and the range picker.

import type { AnchorHTMLAttributes, ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { ApiError, type Balance } from './api.js';
import type { Lang, Translate } from './i18n.js';

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
  balance: Balance | null;
  refreshBalance(): Promise<Balance | null>;
}

export const App = createContext<AppState>(null as unknown as AppState);
export const useApp = () => useContext(App);

export function Link({ href, children, ...rest }: { href: string; children: ComponentChildren } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const { navigate } = useApp();
  const onClick = (e: MouseEvent) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={onClick} {...rest}>{children}</a>;
}

interface FieldProps {
  label: string;
  id: string;
  value: string;
  onInput(e: Event): void;
  hint?: string;
  type?: 'text' | 'email' | 'password';
  autocomplete?: string;
  inputMode?: 'numeric' | 'decimal' | 'text';
  maxLength?: number;
}

/** A labelled input; `hint` is read out with it. */
export function Field({ label, id, hint, type = 'text', ...rest }: FieldProps) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {/* Preact types <input> per `type` value; a union of them does not narrow, hence the cast. */}
      <input id={id} name={id} type={type as 'text'} aria-describedby={hint ? `${id}-hint` : undefined} {...rest} />
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

export function Select({ label, id, value, onChange, options }: { label: string; id: string; value: string; onChange(v: string): void; options: [string, string][] }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {options.map(([v, text]) => <option key={v} value={v}>{text}</option>)}
      </select>
    </div>
  );
}

/** An error in words: the API's own message, or what a failed connection means. */
export function ErrorText({ error }: { error: unknown }) {
  const { t } = useApp();
  if (!error) return null;
  const text = error instanceof ApiError ? (error.code === 'network' ? t('err.network') : error.message) : String((error as Error).message ?? error);
  return <p class="error" role="alert">{text}</p>;
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
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** A form's submit: busy while it runs, the error kept for display. */
export function useSubmit<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
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
  return { busy, error, setError, run };
}

export const RANGES = ['24h', '7d', '30d', '90d'] as const;
export type Range = (typeof RANGES)[number];

export function RangeSelect({ value, onChange }: { value: Range; onChange(r: Range): void }) {
  const { t } = useApp();
  return <Select label={t('common.range')} id="range" value={value} onChange={(v) => onChange(v as Range)} options={RANGES.map((r) => [r, t(`range.${r}`)])} />;
}

/** A card; `page` makes its title the page's heading. */
export function Section({ title, children, wide, page }: { title: string; children: ComponentChildren; wide?: boolean; page?: boolean }) {
  return (
    <section class={wide ? 'card wide' : 'card'}>
      {page ? <h1>{title}</h1> : <h2>{title}</h2>}
      {children}
    </section>
  );
}

/** Wide tables scroll sideways inside the page on a phone instead of widening it. */
export const Scroll = ({ children }: { children: ComponentChildren }) => <div class="scroll">{children}</div>;

export function StatusBadge({ status }: { status: 'pending' | 'paid' | 'expired' | 'failed' }) {
  const { t } = useApp();
  return <span class={`badge ${status}`}>{t(`status.${status}`)}</span>;
}
