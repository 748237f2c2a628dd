// The playground: pick a catalogue model, send a prompt, watch the answer stream in, then see
// what it cost, read back from the usage log by the answer's request id. It runs through the
// gateway's real inference path on the balance; the key it uses is minted and revoked by the
// server, and never reaches the page.

import { useRef, useState } from 'preact/hooks';
import { api, postStream, qs, type CatalogT, type UsagePageT, type UsageRecordT } from '../api.js';
import { num, usd } from '../format.js';
import { ErrorText, prevented, Section, Select, useApp, useLoad, useSubmit } from '../ui.js';

const PROMPT_MAX = 8000;

/** The text and usage of chat-completions stream events, fed as they arrive in pieces. */
function sseReader(
  onDelta: (s: string) => void,
  onUsage: (u: { prompt_tokens: number; completion_tokens: number }) => void,
) {
  let buffer = '';
  return (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') continue;
      try {
        const event = JSON.parse(data);
        const delta = event.choices?.[0]?.delta?.content;
        if (delta) onDelta(delta);
        if (event.usage) onUsage(event.usage);
      } catch {
        // A partial or foreign line: the next chunk completes it or it is not ours.
      }
    }
  };
}

/** The usage record of a request, once the gateway has written it (a second or so). */
async function recordOf(requestId: string): Promise<UsageRecordT | undefined> {
  for (let i = 0; i < 40; i++) {
    const page = await api.get<UsagePageT>(`/usage${qs({ range: '24h', limit: 20 })}`);
    const found = page.data.find((r) => r.request_id === requestId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 250));
  }
  return undefined;
}

export function Playground() {
  const { t, lang, refreshBalance } = useApp();
  const models = useLoad(() => api.get<CatalogT>('/catalog'), []);
  const [model, setModel] = useState('');
  const [prompt, setPrompt] = useState('');
  const [answer, setAnswer] = useState('');
  const [usage, setUsage] = useState<{ prompt_tokens: number; completion_tokens: number } | null>(null);
  const [record, setRecord] = useState<UsageRecordT | null | undefined>(undefined);
  const stop = useRef<AbortController | null>(null);
  // The playground chats: embedding models have nothing to say.
  const list = (models.data?.data ?? []).filter((m) => m.kind === 'chat');
  const picked = model || list[0]?.id || '';
  const send = useSubmit(async () => {
    setAnswer('');
    setUsage(null);
    setRecord(undefined);
    const ctl = new AbortController();
    stop.current = ctl;
    try {
      const id = await postStream(
        '/playground',
        { model: picked, prompt },
        sseReader((d) => setAnswer((a) => a + d), setUsage),
        ctl.signal,
      );
      setRecord(null);
      setRecord((await recordOf(id)) ?? null);
      await refreshBalance();
    } finally {
      stop.current = null;
    }
  });
  return (
    <Section title={t('play.title')} wide page>
      <p class="muted">{t('play.intro')}</p>
      <form noValidate onSubmit={prevented(() => send.run())}>
        <Select
          label={t('usage.model')}
          id="play-model"
          value={picked}
          error={send.at('model')}
          onChange={(m) => {
            setModel(m);
            send.setError(null);
          }}
          options={list.map((m): [string, string] => [
            m.id,
            m.display_name && m.display_name !== m.id ? `${m.id} — ${m.display_name}` : m.id,
          ])}
        />
        <div class="field">
          <label for="prompt">{t('play.prompt')}</label>
          <textarea
            id="prompt"
            name="prompt"
            rows={4}
            maxLength={PROMPT_MAX}
            value={prompt}
            aria-invalid={send.at('prompt') ? true : undefined}
            aria-describedby={send.at('prompt') ? 'prompt-error' : undefined}
            onInput={send.edit(setPrompt)}
          />
          <ErrorText error={send.at('prompt')} id="prompt-error" />
        </div>
        <ErrorText error={send.rest('model', 'prompt')} />
        <div class="actions">
          <button type="submit" disabled={send.busy || !picked}>
            {t('play.send')}
          </button>
          {send.busy && (
            <button type="button" class="secondary" onClick={() => stop.current?.abort()}>
              {t('play.stop')}
            </button>
          )}
        </div>
      </form>
      {(answer || send.busy) && (
        <div class="answer" aria-live="polite" aria-busy={send.busy} data-testid="play-answer">
          {answer || t('common.loading')}
        </div>
      )}
      {usage && (
        <p class="muted" data-testid="play-tokens">
          {t('play.tokens', { prompt: num(lang, usage.prompt_tokens), completion: num(lang, usage.completion_tokens) })}
        </p>
      )}
      {record === null && <p class="muted">{t('play.costPending')}</p>}
      {record && (
        <p data-testid="play-cost">
          {t('play.cost', { cost: usd(lang, record.cost_usd) })} <code>{record.request_id}</code>
        </p>
      )}
    </Section>
  );
}
