// The dashboard's root: a small History-API router over the pages of routes.ts, the header
// (navigation, balance, language, logout) and the app context every page reads.

import { render } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { api, session, whenSessionLost, type BalanceT } from './api.js';
import { initialLang, LANGS, saveLang, translator, type Lang, type MessageKey } from './i18n.js';
import { PAGES, PRIVATE, type Page } from './routes.js';
import { App, Link, Money, useApp, type AppState } from './ui.js';
import { Landing } from './pages/landing.js';
import { Login, Signup, Verify } from './pages/auth.js';
import { Overview } from './pages/overview.js';
import { Keys } from './pages/keys.js';
import { Usage } from './pages/usage.js';
import { Catalogue } from './pages/catalogue.js';
import { TopUp } from './pages/topup.js';
import { Deposits } from './pages/deposits.js';
import { Account, Forgot, NotFound, Reset } from './pages/account.js';
import { Playground } from './pages/playground.js';
import { AdminLink } from './pages/admin/shell.js';
import { AdminUsers } from './pages/admin/users.js';
import { AdminDeposits } from './pages/admin/deposits.js';
import { AdminCodes } from './pages/admin/codes.js';
import { AdminCatalogue } from './pages/admin/catalogue.js';
import { AdminProviders } from './pages/admin/providers.js';
import { AdminAudit, AdminHealth, AdminRevenue } from './pages/admin/reports.js';
import { AdminRequests } from './pages/admin/requests.js';
import { LowBalanceBanner } from './pages/redeem.js';
import 'uplot/dist/uPlot.min.css';
import './style.css';

const VIEWS: Record<Page, () => preact.JSX.Element> = {
  '/': Landing,
  '/signup': Signup,
  '/verify': Verify,
  '/login': Login,
  '/forgot': Forgot,
  '/reset': Reset,
  '/account': Account,
  '/playground': Playground,
  '/overview': Overview,
  '/keys': Keys,
  '/usage': Usage,
  '/catalogue': Catalogue,
  '/topup': TopUp,
  '/deposits': Deposits,
  '/admin': AdminUsers,
  '/admin/deposits': AdminDeposits,
  '/admin/codes': AdminCodes,
  '/admin/providers': AdminProviders,
  '/admin/catalogue': AdminCatalogue,
  '/admin/health': AdminHealth,
  '/admin/revenue': AdminRevenue,
  '/admin/audit': AdminAudit,
  '/admin/requests': AdminRequests,
};

const isPage = (p: string): p is Page => (PAGES as readonly string[]).includes(p);

function Header() {
  const { t, lang, setLang, loggedIn, logout, balance, path } = useApp();
  const nav: [Page, string][] = loggedIn
    ? [
        ['/overview', t('nav.overview')],
        ['/keys', t('nav.keys')],
        ['/usage', t('nav.usage')],
        ['/playground', t('nav.playground')],
        ['/catalogue', t('nav.catalogue')],
        ['/topup', t('nav.topup')],
        ['/deposits', t('nav.deposits')],
        ['/account', t('nav.account')],
      ]
    : [
        ['/login', t('nav.login')],
        ['/signup', t('nav.signup')],
      ];
  return (
    <header>
      <div class="bar">
        <Link href={loggedIn ? '/overview' : '/'} class="brand">
          airouter
        </Link>
        {loggedIn && balance && (
          <span class="chip" data-testid="header-balance">
            {t('balance.short')}: <Money value={balance.balance_usd} />
          </span>
        )}
        <span class="spacer" />
        <label class="lang">
          <span class="sr">{t('lang.label')}</span>
          <select value={lang} onChange={(e) => setLang((e.target as HTMLSelectElement).value as Lang)}>
            {LANGS.map((l) => (
              <option key={l.id} value={l.id}>
                {l.name}
              </option>
            ))}
          </select>
        </label>
        {loggedIn && (
          <button type="button" class="link" onClick={logout}>
            {t('nav.logout')}
          </button>
        )}
      </div>
      <nav aria-label={t('nav.menu')}>
        {nav.map(([href, text]) => (
          <Link key={href} href={href} aria-current={path === href ? 'page' : undefined}>
            {text}
          </Link>
        ))}
        {loggedIn && <AdminLink path={path} />}
      </nav>
    </header>
  );
}

function Root() {
  const [lang, setLangState] = useState<Lang>(initialLang);
  const [loc, setLoc] = useState(() => ({ path: location.pathname, search: location.search }));
  const [loggedIn, setLoggedIn] = useState(() => session.get() !== null);
  const [balance, setBalance] = useState<BalanceT | null>(null);
  const [notice, setNotice] = useState<MessageKey | null>(null);

  const navigate = useCallback((to: string, replace = false) => {
    history[replace ? 'replaceState' : 'pushState'](null, '', to);
    setLoc({ path: location.pathname, search: location.search });
    window.scrollTo(0, 0);
  }, []);

  useEffect(() => {
    const onPop = () => setLoc({ path: location.pathname, search: location.search });
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  const t = useMemo(() => translator(lang), [lang]);
  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);

  useEffect(() => {
    whenSessionLost(() => {
      setLoggedIn(false);
      setBalance(null);
      setNotice('err.session');
      navigate(`/login?next=${encodeURIComponent(location.pathname + location.search)}`, true);
    });
  }, [navigate]);

  const refreshBalance = useCallback(async () => {
    if (!session.get()) return null;
    const b = await api.get<BalanceT>('/balance');
    setBalance(b);
    return b;
  }, []);

  const state: AppState = {
    lang,
    t,
    setLang(l) {
      saveLang(l);
      setLangState(l);
    },
    path: loc.path,
    query: new URLSearchParams(loc.search),
    navigate(to, replace) {
      setNotice(null);
      navigate(to, replace);
    },
    loggedIn,
    signedIn(token, next) {
      session.set(token);
      setLoggedIn(true);
      setNotice(null);
      navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/overview');
    },
    logout() {
      // The session is dropped here whatever the server says: logging out must always work.
      api.post('/logout').catch(() => {});
      session.drop();
      setLoggedIn(false);
      setBalance(null);
      navigate('/');
    },
    balance,
    refreshBalance,
  };

  // The balance in the header follows every page change.
  useEffect(() => {
    if (loggedIn) refreshBalance().catch(() => {});
  }, [loggedIn, loc.path, refreshBalance]);

  // A path the dashboard does not have (the gateway answers it with a 404 and this page).
  const page: Page | null = isPage(loc.path) ? loc.path : null;
  const needsLogin = page !== null && PRIVATE.includes(page) && !loggedIn;
  useEffect(() => {
    if (needsLogin) navigate(`/login?next=${encodeURIComponent(loc.path + loc.search)}`, true);
    else if (loggedIn && (page === '/login' || page === '/signup')) navigate('/overview', true);
  }, [needsLogin, loggedIn, page]);

  const View = page ? VIEWS[page] : NotFound;
  return (
    <App.Provider value={state}>
      <Header />
      <main>
        {notice && (
          <p class="notice" role="status">
            {t(notice)}
          </p>
        )}
        {loggedIn && <LowBalanceBanner />}
        {!needsLogin && <View />}
      </main>
    </App.Provider>
  );
}

render(<Root />, document.getElementById('app')!);
