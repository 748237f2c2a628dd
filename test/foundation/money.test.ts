// Money is integer nano-USD (API.md §2): exact conversions to and from USD text, prices per
// million tokens compiled to nano-USD, and costs that round up to the next nano-dollar.

import t from 'tap';
import { compileCatalogue } from '../../src/catalogue/index.js';
import { costOf, nanoToUsd, usdToNano, worstCase } from '../../src/billing/money.js';

t.test('usdToNano', async (t) => {
  t.equal(usdToNano('12.5'), 12_500_000_000n);
  t.equal(usdToNano('0.000000001'), 1n);
  t.equal(usdToNano('0'), 0n);
  t.equal(usdToNano(' 7 '), 7_000_000_000n, 'blanks trimmed');
  t.equal(usdToNano('123456789012.123456789'), 123_456_789_012_123_456_789n, 'beyond doubles, exact');
  t.equal(usdToNano('0.1'), 100_000_000n);
  t.equal(usdToNano(0.1), 100_000_000n, 'a JSON number, no float error');
  t.equal(usdToNano(0.3), 300_000_000n);
  t.equal(usdToNano(12.345678901), 12_345_678_901n);
  t.equal(usdToNano(1e-9), 1n, 'no exponent notation');
  t.equal(usdToNano(100), 100_000_000_000n);
  t.equal(usdToNano(0), 0n);
  for (const bad of ['1.0000000001', '-1', '1e3', 'abc', '', '.5', '1.', '1,5', '0x10']) {
    t.throws(() => usdToNano(bad), RangeError, `refuses ${JSON.stringify(bad)}`);
  }
  for (const bad of [-0.5, NaN, Infinity, 1.5e-9, 0.1234567891]) {
    t.throws(() => usdToNano(bad), RangeError, `refuses the number ${bad} rather than rounding money`);
  }
});

t.test('nanoToUsd', async (t) => {
  t.equal(nanoToUsd(1n), '0.000000001');
  t.equal(nanoToUsd(0n), '0.000000000');
  t.equal(nanoToUsd(12_500_000_000n), '12.500000000');
  t.equal(nanoToUsd(-1_500_000_001n), '-1.500000001');
  t.equal(nanoToUsd(123_456_789_012_123_456_789n), '123456789012.123456789');
  for (const n of [0n, 1n, 999_999_999n, 1_000_000_000n, 98_765_432_101n])
    t.equal(usdToNano(nanoToUsd(n)), n, `round trip ${n}`);
});

const catalogue = (pricing: Record<string, number>) =>
  compileCatalogue(
    {
      providers: [{ id: 'p', dialect: 'openai', base_url: 'http://127.0.0.1:9/v1' }],
      models: [{ id: 'm', pricing, routes: [{ provider: 'p', model: 'x' }] }],
    },
    'test',
  ).models.get('m')!;

t.test('prices compile to nano-USD per million tokens, exactly', async (t) => {
  const m = catalogue({ input: 0.0375, output: 2.4, cache_read: 0.123456789, cache_write: 0.29 });
  t.same(m.pricing, {
    input: 37_500_000n,
    output: 2_400_000_000n,
    cacheRead: 123_456_789n,
    cacheWrite: 290_000_000n,
    cacheWrite1h: 75_000_000n,
    perWebSearch: 0n,
  });
  const plain = catalogue({ input: 3, output: 15 });
  t.same(
    plain.pricing,
    {
      input: 3_000_000_000n,
      output: 15_000_000_000n,
      cacheRead: 3_000_000_000n,
      cacheWrite: 3_000_000_000n,
      cacheWrite1h: 6_000_000_000n,
      perWebSearch: 0n,
    },
    'cache prices default to input, one-hour writes to twice it',
  );
  t.same(plain.officialPricing, plain.pricing, 'official defaults to the price');
});

t.test('costOf: each count at its price, one rounding up to the nano', async (t) => {
  const p = catalogue({ input: 0.0375, output: 2.4, cache_read: 0.123456789, cache_write: 0.29 }).pricing;
  const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  t.equal(costOf(zero, p), 0n);
  t.equal(costOf({ ...zero, input: 1 }, p), 38n, '37.5 nano rounds up to 38');
  t.equal(costOf({ ...zero, input: 1_000_000 }, p), 37_500_000n, 'a million tokens: the price, exactly');
  t.equal(costOf({ ...zero, input: 2 }, p), 75n, 'two tokens: 75 exactly, no rounding');
  t.equal(costOf({ ...zero, cacheRead: 3 }, p), 371n, '3 × 123.456789 = 370.370367 → 371');
  // Every count at its own price, summed before the one rounding.
  const usage = { input: 1234, output: 567, cacheRead: 8910, cacheWrite: 111 };
  const exact = 1234n * 37_500_000n + 567n * 2_400_000_000n + 8910n * 123_456_789n + 111n * 290_000_000n;
  t.equal(costOf(usage, p), (exact + 999_999n) / 1_000_000n);
  // 46275 + 1360800 + 1099999.98999 + 32190 = 2539264.98999 nano → 2539265.
  t.equal(costOf(usage, p), 2_539_265n);
  // $3/M input, 1M tokens = $3; cached tokens are not input tokens.
  const s = catalogue({ input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }).pricing;
  t.equal(costOf({ input: 1_000_000, output: 0, cacheRead: 1_000_000, cacheWrite: 0 }, s), usdToNano('3.3'));
  t.equal(costOf({ input: 100, output: 200, cacheRead: 0, cacheWrite: 1000 }, s), 300_000n + 3_000_000n + 3_750_000n);
});

t.test('worstCase: every input token at the input price given, plus the output budget and the fees', async (t) => {
  const p = catalogue({ input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }).pricing;
  t.equal(
    worstCase(1000, 100, p.cacheWrite, p.output),
    1000n * 3_750n + 100n * 15_000n,
    'at the dearer cache-write price',
  );
  t.equal(worstCase(1, 0, catalogue({ input: 0.0375, output: 0.15 }).pricing.input, 0n), 38n, 'rounded up');
  t.equal(worstCase(0, 0, 0n, 0n, 7n), 7n, 'fees on top');
  t.ok(
    worstCase(1000, 100, p.cacheWrite, p.output) >=
      costOf({ input: 500, output: 100, cacheRead: 200, cacheWrite: 300 }, p),
    'never below an actual cost',
  );
});

t.test('costOf: audio, one-hour cache writes, web searches and long context at their prices', async (t) => {
  const m = compileCatalogue(
    {
      providers: [{ id: 'p', dialect: 'anthropic', base_url: 'http://x' }],
      models: [
        {
          id: 'm',
          pricing: { input: 2, output: 10, cache_read: 0.2, cache_write: 2.5 },
          extras: {
            cache_write_1h: 4,
            web_search: { per_call: 0.01 },
            audio: { input: 40, output: 80 },
            long_context: { threshold: 1000, pricing: { input: 4, output: 15, cache_read: 0.4, cache_write: 5 } },
          },
          routes: [{ provider: 'p', model: 'x' }],
        },
      ],
    },
    'test',
  ).models.get('m')!.pricing;
  t.equal(
    costOf({ input: 100, output: 10, cacheRead: 0, cacheWrite: 300, cacheWrite1h: 100 }, m),
    100n * 2000n + 10n * 10_000n + 200n * 2_500n + 100n * 4_000n,
    'one-hour writes at their price',
  );
  t.equal(
    costOf({ input: 100, output: 10, cacheRead: 0, cacheWrite: 0, audioIn: 40, audioOut: 5 }, m),
    60n * 2_000n + 40n * 40_000n + 5n * 10_000n + 5n * 80_000n,
    'audio tokens at audio prices',
  );
  t.equal(
    costOf({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, webSearches: 3 }, m),
    30_000_000n,
    '$0.01 per search',
  );
  t.equal(
    costOf({ input: 900, output: 10, cacheRead: 200, cacheWrite: 0 }, m),
    900n * 4_000n + 10n * 15_000n + 200n * 400n,
    'past the threshold, every token at the long-context price',
  );
  t.equal(
    costOf({ input: 900, output: 10, cacheRead: 100, cacheWrite: 0 }, m),
    900n * 2_000n + 10n * 10_000n + 100n * 200n,
    'at the threshold, the normal price',
  );
});
