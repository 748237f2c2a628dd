// Upstream error text goes back to clients; credentials and internal addresses must not.
// The text is cut to a few kilobytes first: an upstream error body can be large, and some of
// these patterns look a few hundred characters ahead at every position.

const URLS = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;
/** `user:password@host` left after URLs without a scheme. */
const USERINFO = /(?<![\w.-])[^\s"'<>:/@]{1,256}:[^\s"'<>/@]{1,256}@/g;
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
/** Authorization values: the scheme stays, so the message still says what was wrong. */
const AUTH = /\b(Bearer|Basic|Digest|Token)\s+[^\s"',;]+/gi;
/**
 * Vendor key shapes: OpenAI and Anthropic (sk-, sk-ant-, sk-proj-), ours (ar-), Google (AIza),
 * xAI, Groq, Hugging Face, Perplexity, Replicate, GitHub, Slack, AWS access key ids, and
 * generic key-/api_ prefixes.
 */
const KEYS = new RegExp(
  [
    String.raw`\b(?:sk|ar|key|api|pk|rk|xai|gsk|hf|pplx|r8|ghp|gho|ghs|github_pat|xox[abpr])[-_][A-Za-z0-9_-]{8,}`,
    String.raw`\bAIza[0-9A-Za-z_-]{20,}`,
    String.raw`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,
  ].join('|'),
  'gi',
);
const HEX4 = '[0-9a-f]{1,4}';
/** Full and `::`-compressed IPv6, optionally bracketed with a port or with a zone id. */
const IPV6 = new RegExp(
  String.raw`\[?(?<![\w:.])(?:(?:${HEX4}:){7}${HEX4}|(?:${HEX4}(?::${HEX4})*)?::${HEX4}(?::${HEX4})*|${HEX4}(?::${HEX4})*::)(?:%[\w.-]+)?(?![\w:])(?:\](?::\d+)?)?`,
  'gi',
);
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g;

/**
 * Top-level domains a bare hostname is recognised by: the common public ones and the suffixes
 * of private networks. Others are left alone, because error text is full of dotted paths
 * (`messages.0.content`, `tools.function.name`) that must reach the client as they are.
 */
const TLDS = [
  'com',
  'net',
  'org',
  'io',
  'ai',
  'dev',
  'cloud',
  'co',
  'us',
  'uk',
  'de',
  'fr',
  'nl',
  'eu',
  'jp',
  'cn',
  'sg',
  'in',
  'au',
  'ca',
  'internal',
  'local',
  'localdomain',
  'lan',
  'corp',
  'intranet',
  'intra',
  'private',
  'home',
  'arpa',
  'svc',
  'cluster',
];
/** Ambiguous as field names too (`message.id`): a hostname only with three labels or more. */
const TLDS_3 = ['id', 'app', 'me', 'info', 'biz', 'xyz', 'tech', 'site', 'run', 'name'];
const LABEL = '(?!\\d+\\.)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAMES = new RegExp(
  String.raw`(?<![\w.-])(?:(?:${LABEL}\.)+(?:${TLDS.join('|')})|(?:${LABEL}\.){2,}(?:${TLDS_3.join('|')})|localhost)(?::\d+)?(?![\w-]|\.\w)`,
  'gi',
);

export function sanitizeUpstreamMessage(message: string): string {
  return message
    .slice(0, 4000)
    .replace(URLS, '[upstream]')
    .replace(JWT, '[redacted]')
    .replace(AUTH, '$1 [redacted]')
    .replace(USERINFO, '[redacted]@')
    .replace(KEYS, '[redacted]')
    .replace(IPV6, '[address]')
    .replace(IPV4, '[address]')
    .replace(HOSTNAMES, '[host]')
    .slice(0, 2000);
}
