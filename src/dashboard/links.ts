// The base of the links the gateway mails (verification, password reset, "you already have an
// account"): PUBLIC_URL when it is set. Without it, the address the request came to, so a
// gateway reached as http://127.0.0.1:8080 mails links that open there and not on "localhost";
// but only when that address is this machine or a private network's: a Host header is the
// client's to choose, and a reset link pointed at a stranger's server would hand them the token.

import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';

const HOST = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/;

/** Loopback, RFC 1918, link-local, IPv6 unique-local, or localhost. */
export function isLocalHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    if (v4.slice(1).some((x) => Number(x) > 255)) return false;
    return (
      a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254)
    );
  }
  if (h.includes(':')) return h === '::1' || /^f[cd][0-9a-f]{2}:/.test(h) || /^fe[89ab][0-9a-f]:/.test(h);
  return false;
}

export function linkBase(gw: Gateway, ex: Exchange): string {
  if (gw.config.PUBLIC_URL) return gw.config.publicUrl;
  const host = ex.headers.host;
  const m = host ? HOST.exec(host) : null;
  if (!m || !isLocalHost(m[1]) || (m[2] !== undefined && Number(m[2]) > 65535)) return gw.config.publicUrl;
  return `http://${host}`;
}
