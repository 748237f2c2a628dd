// The dashboard's client routes. The build copies this list into its manifest, and the gateway
// answers exactly these paths with index.html (every other path keeps its JSON 404).

/** The operator's pages (web/src/pages/admin/); the API refuses their data to anyone not an admin. */
export const ADMIN_PATHS = [
  '/admin',
  '/admin/deposits',
  '/admin/codes',
  '/admin/providers',
  '/admin/catalogue',
  '/admin/health',
  '/admin/revenue',
  '/admin/audit',
  '/admin/requests',
] as const;

export const PAGES = [
  '/',
  '/signup',
  '/verify',
  '/login',
  '/forgot',
  '/reset',
  '/overview',
  '/keys',
  '/usage',
  '/catalogue',
  '/topup',
  '/deposits',
  '/account',
  '/playground',
  ...ADMIN_PATHS,
] as const;

export type Page = (typeof PAGES)[number];

/** Pages that need a session; the others are public. */
export const PRIVATE: readonly Page[] = [
  '/overview',
  '/keys',
  '/usage',
  '/catalogue',
  '/topup',
  '/deposits',
  '/account',
  '/playground',
  ...ADMIN_PATHS,
];
