// Who the client is when the gateway sits behind reverse proxies (TRUST_PROXY). Without the
// setting every request comes from its TCP peer; with it, a request whose peer is a trusted proxy
// comes from the address that proxy says it forwarded for. Only the hops the operator names are
// believed: anyone can send an X-Forwarded-For header, so one from an untrusted peer is ignored.

import { BlockList, isIP } from 'node:net';

/**
 * An address as text, or undefined when it is not one. A `:port` (IPv4) or `[…]:port` (IPv6),
 * as some proxies write them, is dropped. IPv4-mapped IPv6 (`::ffff:a.b.c.d`, which uWS spells
 * as eight hex groups on a dual-stack socket) becomes the IPv4 address, so that a proxy listed
 * as 10.0.0.1 is recognised however the socket reports it.
 */
export function parseAddress(text: string): string | undefined {
  let s = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) s = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(s)) s = s.slice(0, s.indexOf(':'));
  const kind = isIP(s);
  if (kind === 4) return s;
  if (kind !== 6) return undefined;
  s = s.toLowerCase();
  const g = groups6(s);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff)
    return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  return s;
}

/** The eight groups of an IPv6 address that isIP accepted (an embedded IPv4 part is two). */
function groups6(s: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((x) => parseInt(x || '0', 16));
}

/** One TRUST_PROXY item: an address or a CIDR block, IPv4 or IPv6; undefined when invalid. */
export function parseProxyRule(
  item: string,
): { address: string; prefix?: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [addr, bits, extra] = item.trim().split('/');
  if (extra !== undefined || addr === undefined) return undefined;
  // No ports or brackets here: an item is an address as written, or a block.
  if (isIP(addr.trim()) === 0) return undefined;
  const address = parseAddress(addr)!;
  const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) return { address, family };
  if (!/^\d{1,3}$/.test(bits)) return undefined;
  let prefix = Number(bits);
  // A mapped IPv6 block (::ffff:10.0.0.0/104) is the IPv4 block it maps.
  if (family === 'ipv4' && isIP(addr.trim()) === 6) prefix -= 96;
  if (prefix < 0 || prefix > (family === 'ipv4' ? 32 : 128)) return undefined;
  return { address, prefix, family };
}

export class TrustedProxies {
  private readonly list = new BlockList();

  /** `rules`: TRUST_PROXY's items, already validated (config.ts). */
  constructor(rules: readonly string[]) {
    for (const item of rules) {
      const rule = parseProxyRule(item);
      if (!rule) throw new Error(`not an address or CIDR block: ${item}`);
      if (rule.prefix === undefined) this.list.addAddress(rule.address, rule.family);
      else this.list.addSubnet(rule.address, rule.prefix, rule.family);
    }
  }

  /** `address` as returned by parseAddress. */
  trusts(address: string): boolean {
    return this.list.check(address, address.includes(':') ? 'ipv6' : 'ipv4');
  }

  /**
   * The client of a request from `peer` that carried `forwardedFor` (every X-Forwarded-For
   * header, joined with commas, in the order received). The list is walked from the right,
   * the entry the nearest proxy added: each trusted hop is skipped, and the first address that
   * is not trusted is the client. An entry that is not an address ends the walk at the hop
   * that handed it over, the last one whose word is worth anything.
   */
  client(peer: string, forwardedFor: string | undefined): string {
    let client = parseAddress(peer) ?? peer;
    if (!forwardedFor || !this.trusts(client)) return client;
    const hops = forwardedFor.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseAddress(hops[i]!);
      if (!hop) return client;
      client = hop;
      if (!this.trusts(hop)) return hop;
    }
    // Every hop trusted: the farthest one is as near the client as the list goes.
    return client;
  }
}
