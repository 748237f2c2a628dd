// The dashboard's client routes. The build copies this list into its manifest, and the gateway
// answers exactly these paths with index.html (every other path keeps its JSON 404).

export const PAGES = ['/', '/signup', '/verify', '/login', '/forgot', '/reset', '/overview', '/keys', '/usage', '/catalogue', '/topup', '/deposits', '/account', '/playground'] as const;

export type Page = (typeof PAGES)[number];

/** Pages that need a session; the others are public. */
export const PRIVATE: readonly Page[] = ['/overview', '/keys', '/usage', '/catalogue', '/topup', '/deposits', '/account', '/playground'];
