// What every admin page shares: whether the session is an admin's (from the balance answer),
// the admin sub-menu, and the gate that shows a non-admin a plain refusal.

import type { ComponentChildren } from 'preact';
import { usd } from '../../format.js';
import type { Lang } from '../../i18n.js';
import { Link, useApp } from '../../ui.js';
import './admin.css';
import { useAdminT, type AdminKey } from './i18n.js';

/**
 * Whether the session is an admin's: the balance the header reads anyway says so (is_admin), so
 * a user's page never asks GET /api/admin/me, whose 403 the browser logs as a console error.
 * null until the balance is in. The admin API checks for itself on every call.
 */
export function useIsAdmin(): boolean | null {
  const { loggedIn, balance } = useApp();
  if (!loggedIn) return false;
  return balance ? balance.is_admin === true : null;
}

export const ADMIN_PAGES: [string, AdminKey][] = [
  ['/admin', 'admin.users'],
  ['/admin/deposits', 'admin.deposits'],
  ['/admin/codes', 'admin.codes'],
  ['/admin/providers', 'admin.providers'],
  ['/admin/catalogue', 'admin.catalogue'],
  ['/admin/health', 'admin.health'],
  ['/admin/revenue', 'admin.revenue'],
  ['/admin/audit', 'admin.audit'],
  ['/admin/requests', 'admin.requests'],
];

/** The header's link to the admin pages, for admins only. */
export function AdminLink({ path }: { path: string }) {
  const t = useAdminT();
  if (useIsAdmin() !== true) return null;
  return (
    <Link href="/admin" aria-current={path.startsWith('/admin') ? 'page' : undefined} data-testid="nav-admin">
      {t('admin.nav')}
    </Link>
  );
}

export function AdminShell({ children }: { children: ComponentChildren }) {
  const { path } = useApp();
  const t = useAdminT();
  const isAdmin = useIsAdmin();
  const state = isAdmin === null ? 'wait' : isAdmin ? 'yes' : 'no';
  if (state === 'no')
    return (
      <p class="error" role="alert">
        {t('admin.forbidden')}
      </p>
    );
  return (
    <>
      <nav aria-label={t('admin.menu')} class="subnav">
        {ADMIN_PAGES.map(([href, key]) => (
          <Link key={href} href={href} aria-current={path === href ? 'page' : undefined}>
            {t(key)}
          </Link>
        ))}
      </nav>
      {state === 'yes' && children}
    </>
  );
}

/** A decimal string of USD as money, signed: format.ts's one form (kept for pages that import it). */
export const signedUsd = (v: string, lang: Lang = 'en') => usd(lang, v);
