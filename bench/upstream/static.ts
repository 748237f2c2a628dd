// A static OpenAI-dialect upstream for pure throughput: every POST gets the same canned chat
// completion (or, with "stream":true in the body, the same short event stream). Built on
// uWebSockets.js so that the upstream is never what limits a throughput figure; the scripted
// fake (test/fake-upstream) is used wherever behaviour matters (pacing, backpressure).
//
//   node --import tsx bench/upstream/static.ts [--port N] [--host H]
// Prints `listening <url>` once ready. GET /_stats → {"requests": n}.

import { loadUws } from '../../src/server/uws.js';

const uws = loadUws();

function option(name: string): string | undefined {
  const args = process.argv.slice(2);
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
}

const CONTENT = 'The quick brown fox jumps over the lazy dog. '.repeat(4).trim();
const COMPLETION = JSON.stringify({
  id: 'chatcmpl-static0000000000000000000000',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'bench-upstream',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: CONTENT, refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: {
    prompt_tokens: 12,
    completion_tokens: 40,
    total_tokens: 52,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  },
  service_tier: 'default',
  system_fingerprint: 'fp_static',
});

const chunk = (delta: object, finish: string | null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-static', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'bench-upstream', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null })}\n\n`;
const STREAM =
  chunk({ role: 'assistant', content: '' }, null) +
  CONTENT.split(/(?= )/)
    .map((w) => chunk({ content: w }, null))
    .join('') +
  chunk({}, 'stop') +
  `data: ${JSON.stringify({ id: 'chatcmpl-static', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'bench-upstream', choices: [], usage: { prompt_tokens: 12, completion_tokens: 40, total_tokens: 52 } })}\n\n` +
  'data: [DONE]\n\n';

const STREAM_FLAG = /"stream"\s*:\s*true/;
let requests = 0;
const app = uws.App();

app.post('/*', (res) => {
  let aborted = false;
  let streamed = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((ab, isLast) => {
    // The buffer is reused once this returns, so it is looked at here (bodies are small).
    if (!streamed && ab.byteLength > 0 && STREAM_FLAG.test(Buffer.from(ab).toString('latin1'))) streamed = true;
    if (!isLast || aborted) return;
    requests++;
    res.cork(() => {
      if (streamed)
        res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream; charset=utf-8').end(STREAM);
      else res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(COMPLETION);
    });
  });
});

app.get('/_stats', (res) => {
  res.writeHeader('content-type', 'application/json').end(JSON.stringify({ requests }));
});

app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end('{"error":"not found"}');
});

const host = option('--host') ?? '127.0.0.1';
const port = Number(option('--port') ?? 0);
app.listen(host, port, (socket) => {
  if (!socket) {
    process.stderr.write(`static upstream: cannot listen on ${host}:${port}\n`);
    process.exit(1);
  }
  process.stdout.write(`listening http://${host}:${uws.us_socket_local_port(socket)}\n`);
});

const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
