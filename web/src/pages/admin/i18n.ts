// The admin pages' words come from words.ts (both languages); this picks the page's language.

import { useApp } from '../../ui.js';
import { en, id, type AdminKey } from './words.js';

export type { AdminKey };

export function useAdminT(): (key: AdminKey, vars?: Record<string, string>) => string {
  const { lang } = useApp();
  const dict = lang === 'id' ? id : en;
  return (key, vars) => dict[key].replace(/\{(\w+)\}/g, (_, k: string) => vars?.[k] ?? '');
}
