// `npm run test:clients`: the real CLIs against the gateway, opt-in (it downloads them).
// Installs @anthropic-ai/claude-code, opencode-ai, @openai/codex and @google/gemini-cli into a temporary prefix,
// starts the fake upstream and a gateway on the embedded stores, and runs each CLI once per
// case: one prompt answered in text and one tool round (the fake upstream calls the CLI's
// file-search tool, or Codex's shell tool with `ls`, then answers in text once the result is
// back), each through an Anthropic-dialect and an OpenAI-dialect model (Gemini CLI: an
// OpenAI-dialect and a Gemini one; Codex a Responses one too). Claude Code speaks Messages, opencode Chat Completions, Codex
// (`codex exec`) the Responses API, Gemini CLI (`gemini -p`) Gemini's. Prints pass/fail
// per case; exits non-zero if any case failed.
//
//   npm run test:clients [-- --only claude|opencode|codex|gemini] [--keep: leave the temp dir, with what the upstream received]
//   CLAUDE_CODE_VERSION / OPENCODE_VERSION / CODEX_VERSION / GEMINI_CLI_VERSION pin the versions (default: latest).

import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createKey } from '../../src/accounts/keys.js';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { nanoToUsd, usdToNano } from '../../src/billing/money.js';
import { loadConfig } from '../../src/config.js';
import { startGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/log.js';
import { startFakeUpstream, TEXT_ANSWER, type RecordedRequest } from '../fake-upstream/server.js';
import { startWsRecorder } from './ws-recorder.js';

const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const keep = args.includes('--keep');
const RUN_TIMEOUT_MS = 180_000;

const root = mkdtempSync(path.join(tmpdir(), 'airouter-clients-'));
const prefix = path.join(root, 'cli');
const home = path.join(root, 'home');
const project = path.join(root, 'project');
for (const dir of [prefix, home, project]) mkdirSync(dir, { recursive: true });
writeFileSync(path.join(project, 'README.md'), '# A project for the client run\n');

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

// ------------------------------------------------------------------------- install the CLIs

const PACKAGES = {
  claude: `@anthropic-ai/claude-code@${process.env.CLAUDE_CODE_VERSION ?? 'latest'}`,
  opencode: `opencode-ai@${process.env.OPENCODE_VERSION ?? 'latest'}`,
  codex: `@openai/codex@${process.env.CODEX_VERSION ?? 'latest'}`,
  gemini: `@google/gemini-cli@${process.env.GEMINI_CLI_VERSION ?? 'latest'}`,
};
type Cli = keyof typeof PACKAGES;
const CLIS = (Object.keys(PACKAGES) as Cli[]).filter((cli) => !only || only === cli);
if (CLIS.length === 0) {
  say(`--only ${only}: no such CLI (${Object.keys(PACKAGES).join(', ')})`);
  process.exit(2);
}
const packages = CLIS.map((cli) => PACKAGES[cli]);
say(`installing ${packages.join(', ')} into ${prefix}`);
await promisify(execFile)('npm', ['i', '--prefix', prefix, '--no-audit', '--no-fund', ...packages], {
  maxBuffer: 16 * 1024 * 1024,
});
const bin = (name: string) => path.join(prefix, 'node_modules', '.bin', name);
const version = async (name: string) => (await promisify(execFile)(bin(name), ['--version'])).stdout.trim();
say((await Promise.all(CLIS.map(async (cli) => `${cli} ${await version(cli)}`))).join(', '));

// ------------------------------------------------------------------ fake upstream and gateway

const fake = await startFakeUpstream();

/**
 * Per CLI and dialect, a model answering in text and one running a tool round with the CLI's
 * own file-search tool, or for Codex its shell tool (the upstream model name picks the fake's
 * scenario). As a plain catalogue has them, no model prices a hosted tool: Codex declares web
 * search on every turn all the same, and the gateway takes it out.
 */
const TOOL: Record<Cli, string> = {
  claude: 'Glob:{"pattern":"*.md"}',
  opencode: 'glob:{"pattern":"*.md"}',
  codex: 'exec_command:{"cmd":"ls"}',
  gemini: 'list_directory:{"dir_path":"."}',
};
/** The upstream dialects each CLI is run through: translated ones and, for Gemini CLI and Codex, their own. */
const DIALECTS: Record<Cli, readonly string[]> = {
  claude: ['anthropic', 'openai'],
  opencode: ['anthropic', 'openai'],
  codex: ['anthropic', 'openai', 'responses'],
  gemini: ['openai', 'gemini'],
};
const modelId = (cli: Cli, dialect: string, kind: 'text' | 'tools') => `${cli}-${dialect}-${kind}`;
const models = (Object.keys(TOOL) as Cli[]).flatMap((cli) =>
  DIALECTS[cli].flatMap((dialect) =>
    (['text', 'tools'] as const).map((kind) => ({
      id: modelId(cli, dialect, kind),
      context_window: 200000,
      max_output_tokens: 64000,
      pricing: { input: 1, output: 2 },
      routes: [
        {
          provider: `fake-${dialect}`,
          model: kind === 'text' ? 'text' : `tool_round:${TOOL[cli]}`,
          reasoning: true,
        },
      ],
    })),
  ),
);
const catalogue = {
  providers: [
    { id: 'fake-openai', dialect: 'openai', base_url: `${fake.url}/v1` },
    { id: 'fake-anthropic', dialect: 'anthropic', base_url: fake.url },
    { id: 'fake-gemini', dialect: 'gemini', base_url: `${fake.url}/v1beta` },
    { id: 'fake-responses', dialect: 'responses', base_url: `${fake.url}/v1` },
  ],
  models,
};
const cataloguePath = path.join(root, 'gateway.config.json');
writeFileSync(cataloguePath, JSON.stringify(catalogue));

const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  GATEWAY_CONFIG: cataloguePath,
  DATA_DIR: path.join(root, 'data'),
});
const log = createLogger(config.LOG_LEVEL);
const gateway = await startGateway(config, log);
const stores = gateway.stores;
const gatewayUrl = `http://127.0.0.1:${gateway.port}`;
const recorder = await startWsRecorder(gateway.port);
const account = await createVerifiedUser(stores.sql, 'clients@localhost', 'correct horse battery staple');
const credit = usdToNano('100');
await creditUser(stores.sql, stores.hot, account.id, credit, {
  method: 'operator',
  amount: nanoToUsd(credit),
  currency: 'USD',
});
const key = (await createKey(stores.sql, account.id, 'clients')).key;
say(`gateway ${gatewayUrl}, fake upstream ${fake.url}`);

// ------------------------------------------------------------------------------- the cases

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, argv: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, argv, {
      cwd: project,
      // A home of its own: nothing from this machine's CLI settings, nothing left behind in them.
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, '.config'),
        XDG_DATA_HOME: path.join(home, '.local/share'),
        XDG_CACHE_HOME: path.join(home, '.cache'),
        TERM: 'dumb',
        CI: '1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Requests the fake upstream received during `fn`. */
async function recording(fn: () => Promise<Run>): Promise<{ out: Run; requests: RecordedRequest[] }> {
  const from = fake.requests.length;
  const out = await fn();
  return { out, requests: fake.requests.slice(from) };
}

/** A request that handed a tool's result back: the second half of a tool round. */
function carriesToolResult(r: RecordedRequest): boolean {
  const item = r.body?.input;
  if (Array.isArray(item) && ['function_call_output', 'custom_tool_call_output'].includes(item.at(-1)?.type))
    return true;
  const turn = r.body?.contents?.at(-1);
  if (Array.isArray(turn?.parts) && turn.parts.some((p: any) => p?.functionResponse)) return true;
  const last = r.body?.messages?.at(-1);
  if (last?.role === 'tool') return true;
  return Array.isArray(last?.content) && last.content.some((b: any) => b?.type === 'tool_result');
}

function claude(model: string, prompt: string): Promise<Run> {
  return run(bin('claude'), ['-p', prompt, '--model', model, '--allowedTools', TOOL.claude, '--max-turns', '4'], {
    ANTHROPIC_BASE_URL: gatewayUrl,
    ANTHROPIC_API_KEY: key,
    ANTHROPIC_MODEL: model,
    // Its background calls go to the "small fast" model; here that is the same catalogue model.
    ANTHROPIC_SMALL_FAST_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
  });
}

function opencode(model: string, prompt: string): Promise<Run> {
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: `airouter/${model}`,
    small_model: `airouter/${model}`,
    provider: {
      airouter: {
        npm: '@ai-sdk/openai-compatible',
        name: 'airouter',
        options: { baseURL: `${gatewayUrl}/v1`, apiKey: key, includeUsage: true },
        models: Object.fromEntries(models.map((m) => [m.id, { name: m.id, tool_call: true }])),
      },
    },
  };
  writeFileSync(path.join(project, 'opencode.json'), JSON.stringify(config, null, 2));
  return run(bin('opencode'), ['run', '-m', `airouter/${model}`, prompt], {
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  });
}

function codex(model: string, prompt: string, websocket = false): Promise<Run> {
  // As README.md tells Codex users: a model provider with wire_api = "responses" (and, for its
  // WebSocket mode, supports_websockets).
  const codexHome = path.join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      `model = ${JSON.stringify(model)}`,
      'model_provider = "airouter"',
      'check_for_update_on_startup = false',
      '',
      '[model_providers.airouter]',
      'name = "airouter"',
      // Over its WebSocket mode, through a proxy that keeps what Codex sends (`--keep`).
      `base_url = ${JSON.stringify(`${websocket ? `http://127.0.0.1:${recorder.port}` : gatewayUrl}/v1`)}`,
      'env_key = "AIROUTER_KEY"',
      'wire_api = "responses"',
      ...(websocket ? ['supports_websockets = true'] : []),
      '',
    ].join('\n'),
  );
  // No approvals and no sandbox: the tool round runs `ls` without asking, in the temp project.
  return run(
    bin('codex'),
    ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-m', model, prompt],
    {
      CODEX_HOME: codexHome,
      AIROUTER_KEY: key,
    },
  );
}

function gemini(model: string, prompt: string): Promise<Run> {
  // An API key (not a Google login), no telemetry, no update check; its base URL is the gateway.
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  };
  mkdirSync(path.join(home, '.gemini'), { recursive: true });
  writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify(settings));
  return run(bin('gemini'), ['-p', prompt, '-m', model, '--skip-trust', '-o', 'text'], {
    GEMINI_API_KEY: key,
    GOOGLE_GEMINI_BASE_URL: gatewayUrl,
  });
}

const RUNNERS: Record<Cli, (model: string, prompt: string, websocket?: boolean) => Promise<Run>> = {
  claude,
  opencode,
  codex,
  gemini,
};
/** Codex runs over HTTP and over its WebSocket mode; the others speak HTTP only. */
const TRANSPORTS: Record<Cli, readonly ('http' | 'websocket')[]> = {
  claude: ['http'],
  opencode: ['http'],
  codex: ['http', 'websocket'],
  gemini: ['http'],
};
const results: { name: string; ok: boolean; why: string }[] = [];
const socketsOpened = async () => (await gateway.services.metrics.socketsOpened.get()).values[0]?.value ?? 0;

for (const cli of CLIS) {
  for (const transport of TRANSPORTS[cli])
    for (const dialect of DIALECTS[cli]) {
      for (const kind of ['text', 'tools'] as const) {
        const name = `${cli}${transport === 'websocket' ? ' (WebSocket)' : ''} · ${dialect}-dialect model · ${kind === 'text' ? 'say hi' : 'one tool round'}`;
        const prompt = kind === 'text' ? 'say hi' : 'list the markdown files here';
        const started = Date.now();
        const opened = await socketsOpened();
        const { out, requests } = await recording(() =>
          RUNNERS[cli](modelId(cli, dialect, kind), prompt, transport === 'websocket'),
        );
        const problems: string[] = [];
        if (transport === 'websocket' && (await socketsOpened()) === opened)
          problems.push('no WebSocket was opened (the client used HTTP)');
        if (out.code !== 0) problems.push(`exit code ${out.code}`);
        if (!out.stdout.includes(TEXT_ANSWER)) problems.push('the answer is not on stdout');
        if (requests.length === 0) problems.push('nothing reached the upstream');
        if (kind === 'tools' && !requests.some(carriesToolResult))
          problems.push('no request carried the tool result back');
        const ok = problems.length === 0;
        results.push({ name, ok, why: problems.join('; ') });
        say(
          `${ok ? 'PASS' : 'FAIL'}  ${name}  (${((Date.now() - started) / 1000).toFixed(1)} s, ${requests.length} upstream requests)`,
        );
        if (!ok) {
          say(`      ${problems.join('; ')}`);
          const tail = (s: string) =>
            s
              .trim()
              .split('\n')
              .slice(-8)
              .map((l) => `      | ${l}`)
              .join('\n');
          if (out.stdout.trim()) say(`      stdout:\n${tail(out.stdout)}`);
          if (out.stderr.trim()) say(`      stderr:\n${tail(out.stderr)}`);
        }
      }
    }
}

await gateway.stop();
await fake.close();
await recorder.close();
if (keep) {
  // What the upstream received, and what Codex sent over its WebSockets, to compare with test/fixtures/clients/.
  writeFileSync(path.join(root, 'upstream-requests.json'), JSON.stringify(fake.requests, null, 1));
  writeFileSync(path.join(root, 'websocket-messages.json'), JSON.stringify(recorder.sockets(), null, 1));
  say(
    `kept ${root} (upstream-requests.json: what the upstream received; websocket-messages.json: what the WebSocket clients sent)`,
  );
} else rmSync(root, { recursive: true, force: true });
const failed = results.filter((r) => !r.ok).length;
say(`${results.length - failed}/${results.length} passed`);
process.exit(failed === 0 ? 0 : 1);
