import type { CatalogueFileInput } from './schema.js';

/**
 * The built-in catalogue, used when no GATEWAY_CONFIG file exists: the vendors' own APIs with
 * keys from the environment. Official prices are the vendors' list prices (USD per million
 * tokens) at the time of writing; the gateway's prices are 20% below them.
 */
export const EXAMPLE_CATALOGUE: CatalogueFileInput = {
  providers: [
    { id: 'openai', dialect: 'openai', base_url: 'https://api.openai.com/v1', api_key: { env: 'OPENAI_API_KEY' } },
    {
      id: 'anthropic',
      dialect: 'anthropic',
      base_url: 'https://api.anthropic.com',
      api_key: { env: 'ANTHROPIC_API_KEY' },
    },
    {
      id: 'deepseek',
      dialect: 'openai',
      base_url: 'https://api.deepseek.com/v1',
      api_key: { env: 'DEEPSEEK_API_KEY' },
    },
  ],
  models: [
    {
      id: 'gpt-4o-mini',
      owned_by: 'openai',
      display_name: 'GPT-4o mini',
      created: 1721172741,
      context_window: 128_000,
      max_output_tokens: 16_384,
      pricing: { input: 0.12, output: 0.48, cache_read: 0.06 },
      official_pricing: { input: 0.15, output: 0.6, cache_read: 0.075 },
      routes: [{ provider: 'openai', model: 'gpt-4o-mini' }],
    },
    {
      id: 'gpt-4.1',
      owned_by: 'openai',
      display_name: 'GPT-4.1',
      created: 1744316542,
      context_window: 1_047_576,
      max_output_tokens: 32_768,
      pricing: { input: 1.6, output: 6.4, cache_read: 0.4 },
      official_pricing: { input: 2, output: 8, cache_read: 0.5 },
      routes: [{ provider: 'openai', model: 'gpt-4.1' }],
    },
    {
      id: 'claude-sonnet-4',
      owned_by: 'anthropic',
      display_name: 'Claude Sonnet 4',
      created: 1747699200,
      context_window: 200_000,
      max_output_tokens: 64_000,
      pricing: { input: 2.4, output: 12, cache_read: 0.24, cache_write: 3 },
      official_pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
      routes: [{ provider: 'anthropic', model: 'claude-sonnet-4-20250514' }],
    },
    {
      id: 'claude-haiku-4-5',
      owned_by: 'anthropic',
      display_name: 'Claude Haiku 4.5',
      created: 1760486400,
      context_window: 200_000,
      max_output_tokens: 64_000,
      pricing: { input: 0.8, output: 4, cache_read: 0.08, cache_write: 1 },
      official_pricing: { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
      routes: [{ provider: 'anthropic', model: 'claude-haiku-4-5' }],
    },
    {
      id: 'deepseek-chat',
      owned_by: 'deepseek',
      display_name: 'DeepSeek V3',
      created: 1735689600,
      context_window: 128_000,
      max_output_tokens: 8_192,
      pricing: { input: 0.216, output: 0.88, cache_read: 0.056 },
      official_pricing: { input: 0.27, output: 1.1, cache_read: 0.07 },
      routes: [{ provider: 'deepseek', model: 'deepseek-chat' }],
    },
  ],
};
