// Upstream error text reaches clients: credentials, keys and internal addresses are removed,
// while the dotted field paths and model names that make an error useful stay.

import t from 'tap';
import { sanitizeUpstreamMessage as scrub } from '../../src/upstream/sanitize.js';

const removed: [string, string, string][] = [
  ['URL with credentials', 'POST https://admin:hunter2@10.1.2.3:8443/v1/x failed', 'hunter2'],
  ['userinfo without a scheme', 'auth failed for svc:hunter2@cache.internal', 'hunter2'],
  ['bare hostname', 'connect ECONNREFUSED db-1.prod.svc.cluster.local:5432', 'db-1.prod'],
  ['public hostname', 'proxy api.internal.example.com returned 500', 'example.com'],
  ['localhost', 'no answer from localhost:8081', 'localhost'],
  ['IPv4 with port', 'peer 192.168.10.4:9000 reset', '192.168'],
  ['IPv6 compressed', 'connect 2001:db8::17 refused', '2001:db8'],
  ['IPv6 full', 'from 2001:0db8:0000:0000:0000:ff00:0042:8329', 'ff00'],
  ['IPv6 bracketed with zone and port', 'listen [fe80::1%eth0]:443', 'fe80'],
  ['IPv6 loopback', 'bound to ::1 only', '::1'],
  ['JWT', 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl expired', 'eyJzdWIi'],
  ['Basic credentials', 'Authorization: Basic dXNlcjpwYXNzd29yZA== rejected', 'dXNlcjpw'],
  ['Bearer token', 'Authorization: Bearer abc.def.ghi-123 rejected', 'abc.def'],
  ['OpenAI key', 'Incorrect API key provided: sk-abcdefghijklmnop1234', 'sk-abcdef'],
  ['OpenAI project key', 'key sk-proj-AbCdEfGhIjKlMnOp_qrs is invalid', 'sk-proj-AbC'],
  ['Anthropic key', 'invalid x-api-key sk-ant-api03-AbCdEfGhIjKlMnOp', 'sk-ant-api03'],
  ['Google key', 'API key not valid: AIzaSyA1234567890abcdefghijklmnopqrstu', 'AIzaSy'],
  ['xAI key', 'bad key xai-AbCdEfGhIjKlMnOpQr', 'xai-AbC'],
  ['Groq key', 'bad key gsk_AbCdEfGhIjKlMnOpQr', 'gsk_AbC'],
  ['AWS access key id', 'The security token AKIAIOSFODNN7EXAMPLE is invalid', 'AKIAIOSF'],
  ['our own keys', 'key ar-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd', 'ar-AbCd'],
];

for (const [what, text, secret] of removed) {
  t.test(what, async (t) => {
    const out = scrub(text);
    t.notOk(out.includes(secret), `${JSON.stringify(text)} → ${JSON.stringify(out)}`);
    t.match(out, /\[(?:redacted|address|host|upstream)\]/, 'a placeholder says something was there');
  });
}

t.test('the useful parts of an error stay', async (t) => {
  for (const text of [
    'messages.0.content.0.text: Field required',
    "Invalid 'messages[0].content': expected a string",
    'tools.0.function.name: string too long',
    'max_tokens: 100000 > 8192, which is the maximum for gpt-4.1',
    'claude-3.5-sonnet does not support this; retry at 12:30:45',
    'response_format.json_schema.name is required',
    'message.id must be unique',
    'std::string is not a valid type',
  ])
    t.equal(scrub(text), text);
  t.equal(scrub('Authorization: Basic dXNlcjpw'), 'Authorization: Basic [redacted]', 'the scheme is kept');
});

t.test('bounded length, and a huge message costs little', async (t) => {
  const huge = 'a:'.repeat(500_000) + '@' + ' host.internal'.repeat(100_000);
  const started = performance.now();
  const out = scrub(huge);
  t.ok(performance.now() - started < 200, 'fast');
  t.ok(out.length <= 2000);
});
