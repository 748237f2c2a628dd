// Upstream error text goes back to clients; credentials and internal addresses must not.
const SECRETS = /\b(?:sk|ar|key|api|pk|rk)[-_][A-Za-z0-9_-]{8,}\b|Bearer\s+\S+/gi;
const URLS = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g;

export function sanitizeUpstreamMessage(message: string): string {
  return message.replace(SECRETS, '[redacted]').replace(URLS, '[upstream]').replace(IPV4, '[address]').slice(0, 2000);
}
