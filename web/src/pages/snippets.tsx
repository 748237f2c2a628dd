// Copy-ready ways to use a key: the OpenAI SDK (base URL with /v1), the Anthropic SDK (without),
// curl, Claude Code and Codex. With a new key the key itself is filled in; otherwise an
// environment variable stands for it, since a stored key is never shown again.

import { useState } from 'preact/hooks';
import { useApp } from '../ui.js';

type Tab = 'openai' | 'anthropic' | 'curl' | 'claude' | 'codex';
const TABS: Tab[] = ['openai', 'anthropic', 'curl', 'claude', 'codex'];

function snippet(tab: Tab, origin: string, key: string, model: string): string {
  switch (tab) {
    case 'openai':
      return [
        "import OpenAI from 'openai';",
        `const client = new OpenAI({ baseURL: '${origin}/v1', apiKey: ${key} });`,
        `const r = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Hello' }] });`,
      ].join('\n');
    case 'anthropic':
      return [
        "import Anthropic from '@anthropic-ai/sdk';",
        `const client = new Anthropic({ baseURL: '${origin}', apiKey: ${key} });`,
        `const m = await client.messages.create({ model: '${model}', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] });`,
      ].join('\n');
    case 'curl':
      return [
        `curl ${origin}/v1/chat/completions \\`,
        `  -H "Authorization: Bearer ${key === 'process.env.AIROUTER_KEY' ? '$AIROUTER_KEY' : key.slice(1, -1)}" -H 'content-type: application/json' \\`,
        `  -d '{"model":"${model}","messages":[{"role":"user","content":"Hello"}]}'`,
      ].join('\n');
    case 'claude':
      return `ANTHROPIC_BASE_URL=${origin} ANTHROPIC_API_KEY=${shellKey(key)} ANTHROPIC_MODEL=${model} claude`;
    case 'codex':
      return [
        '# ~/.codex/config.toml',
        `model = "${model}"`,
        'model_provider = "airouter"',
        '',
        '[model_providers.airouter]',
        'name = "airouter"',
        `base_url = "${origin}/v1"`,
        'env_key = "AIROUTER_KEY"',
        'wire_api = "responses"',
        '',
        `# then: AIROUTER_KEY=${shellKey(key)} codex`,
      ].join('\n');
  }
}

const shellKey = (key: string) => (key === 'process.env.AIROUTER_KEY' ? '$AIROUTER_KEY' : key.slice(1, -1));

export function Snippets({ apiKey, model }: { apiKey?: string; model: string }) {
  const { t } = useApp();
  const [tab, setTab] = useState<Tab>('openai');
  const [copied, setCopied] = useState(false);
  const origin = location.origin;
  const key = apiKey ? `'${apiKey}'` : 'process.env.AIROUTER_KEY';
  const text = snippet(tab, origin, key, model);
  const copy = async () => {
    await navigator.clipboard.writeText(text).catch(() => {});
    setCopied(true);
  };
  return (
    <div class="snippets">
      <p class="muted">{t('keys.baseUrls', { v1: `${origin}/v1`, root: origin })}</p>
      <div role="tablist" aria-label={t('keys.snippets')} class="tabs">
        {TABS.map((x) => (
          <button
            key={x}
            type="button"
            role="tab"
            id={`tab-${x}`}
            aria-selected={tab === x}
            aria-controls="snippet"
            class={tab === x ? 'tab on' : 'tab'}
            onClick={() => {
              setTab(x);
              setCopied(false);
            }}
          >
            {t(`keys.tab.${x}`)}
          </button>
        ))}
      </div>
      <pre id="snippet" role="tabpanel" aria-labelledby={`tab-${tab}`} data-testid="snippet" tabIndex={0}>
        <code>{text}</code>
      </pre>
      <button type="button" class="secondary" onClick={copy}>
        {copied ? t('keys.copied') : t('keys.copySnippet')}
      </button>
      {tab === 'codex' && <p class="muted">{t('keys.codexNote')}</p>}
    </div>
  );
}
