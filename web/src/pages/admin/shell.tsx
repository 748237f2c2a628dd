// What every admin page shares: whether the session is an admin's (asked once per session),
// the admin sub-menu, and the gate that shows a non-admin a plain refusal.

import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { session } from '../../api.js';
import { Link, useApp } from '../../ui.js';
import { admin } from './client.js';
import './admin.css';
import { useAdminT, type AdminKey } from './i18n.js';

let known: { token: string; admin: Promise<boolean> } | undefined;

/** True once GET /api/admin/me answers 200 for this session. */
export function useIsAdmin(): boolean {
  const { loggedIn } = useApp();
  const [isAdmin, setIsAdmin] = useState(false);
  useEffect(() => {
    const token = session.get();
    if (!loggedIn || !token) return setIsAdmin(false);
    if (known?.token !== token) known = { token, admin: admin.get('/me').then(() => true, () => false) };
    let live = true;
    void known.admin.then((a) => live && setIsAdmin(a));
    return () => {
      live = false;
    };
  }, [loggedIn]);
  return isAdmin;
}

export const ADMIN_PAGES: [string, AdminKey][] = [
  ['/admin', 'admin.users'],
  ['/admin/deposits', 'admin.deposits'],
  ['/admin/codes', 'admin.codes'],
  ['/admin/catalogue', 'admin.catalogue'],
  ['/admin/health', 'admin.health'],
  ['/admin/revenue', 'admin.revenue'],
  ['/admin/audit', 'admin.audit'],
];

/** The header's link to the admin pages, for admins only. */
export function AdminLink({ path }: { path: string }) {
  const t = useAdminT();
  if (!useIsAdmin()) return null;
  return <Link href="/admin" aria-current={path.startsWith('/admin') ? 'page' : undefined} data-testid="nav-admin">{t('admin.nav')}</Link>;
}

export function AdminShell({ children }: { children: ComponentChildren }) {
  const { path } = useApp();
  const t = useAdminT();
  const [state, setState] = useState<'wait' | 'yes' | 'no'>('wait');
  useEffect(() => {
    admin.get('/me').then(() => setState('yes'), () => setState('no'));
  }, []);
  if (state === 'no') return <p class="error" role="alert">{t('admin.forbidden')}</p>;
  return (
    <>
      <nav aria-label={t('admin.menu')} class="subnav">
        {ADMIN_PAGES.map(([href, key]) => (
          <Link key={href} href={href} aria-current={path === href ? 'page' : undefined}>{t(key)}</Link>
        ))}
      </nav>
      {state === 'yes' && children}
    </>
  );
}

/** A decimal string of USD as money, signed. */
export const signedUsd = (v: string) => (v.startsWith('-') ? `−$${v.slice(1)}` : `$${v}`);
