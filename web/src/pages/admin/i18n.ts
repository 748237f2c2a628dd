// The admin pages' words come from words.ts (both languages); this picks the page's language.

import { readable } from '../../i18n.js';
import { useApp } from '../../ui.js';
import { en, id, type AdminKey } from './words.js';

export type { AdminKey };

export function useAdminT(): (key: AdminKey, vars?: Record<string, string>) => string {
  const { lang } = useApp();
  const dict = lang === 'id' ? id : en;
  return (key, vars) => dict[key].replace(/\{(\w+)\}/g, (_, k: string) => vars?.[k] ?? '');
}

/** A code the admin API sends (an audit action, a code's state, an audit field) in words; one this build does not know yet, made readable. */
export function useAdminWord(): (kind: 'audit' | 'codeStatus' | 'field', code: string) => string {
  const { lang } = useApp();
  const dict: Record<string, string> = lang === 'id' ? id : en;
  return (kind, code) => dict[`${kind}.${code}`] ?? readable(code);
}
