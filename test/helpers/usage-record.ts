// A usage record as a settle carries it into the outbox, for the store and ledger tests: the
// fields they do not look at filled in once, the ones they do given.

import type { OutboxRecord } from '../../src/store/hot.js';

export function usageRecord(
  userId: string,
  settleId: string,
  costNano: bigint,
  extra: Partial<OutboxRecord> = {},
): OutboxRecord {
  return {
    settleId,
    userId,
    keyId: null,
    requestId: `req_${settleId}`,
    model: 'm',
    surface: 'chat',
    stream: false,
    status: 200,
    promptTokens: 10,
    completionTokens: 5,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    costNano,
    officialCostNano: costNano,
    latencyMs: 12,
    ttftMs: null,
    overrun: false,
    createdAt: new Date(),
    ...extra,
  };
}
