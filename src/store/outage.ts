// Which errors are a store out of reach rather than a bug: the dashboard's API and the payment
// notifications answer those with a 503 that the client (or the provider) may retry.

/** Postgres or Redis unreachable, as opposed to a bug: worth a 503 the client may retry. */
export function isStoreOutage(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'CONNECT_TIMEOUT',
      'CONNECTION_CLOSED',
      'CONNECTION_ENDED',
      'CONNECTION_DESTROYED',
    ].includes(code) ||
    code.startsWith('57P') || // admin shutdown, cannot connect now
    code.startsWith('08') // connection exceptions
  );
}
