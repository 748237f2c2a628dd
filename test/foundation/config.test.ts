// Configuration: every bad environment value stops start-up with one line naming the variable;
// a bad catalogue file names the JSON path; SIGHUP reloads the catalogue and a bad file keeps
// the old one serving.

import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CatalogueError, CatalogueHolder, loadCatalogue } from '../../src/catalogue/index.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { childEnv, lines, runCli, startServe, waitFor } from '../helpers/child.js';
import { testCatalogue } from '../helpers/gateway.js';
import { REDIS_URL, testStores } from '../helpers/stores.js';

// A deep copy without shared objects (the helper's models share one pricing object).
const clone = (v: unknown): any => JSON.parse(JSON.stringify(v));
const tmp = () => mkdtempSync(path.join(tmpdir(), 'airouter-config-'));

/** [variable, bad value, what the message must say after the name] */
const BAD_ENV: [string, string, RegExp][] = [
  ['PORT', 'abc', /^PORT must be a whole number \(got "abc"\)$/],
  ['PORT', '70000', /^PORT must be at most 65535 \(got "70000"\)$/],
  ['PORT', '-1', /^PORT must be a whole number/],
  ['WORKERS', '0', /^WORKERS must be at least 1 \(got "0"\)$/],
  ['WORKERS', 'many', /^WORKERS must be a whole number or "auto"/],
  [
    'DATABASE_URL',
    'mysql://x',
    /^DATABASE_URL must be a URL starting with postgres:\/\/ or postgresql:\/\/ \(got "mysql:\/\/x"\)$/,
  ],
  ['REDIS_URL', 'nope', /^REDIS_URL must be a URL starting with redis:\/\/ or rediss:\/\/ \(got "nope"\)$/],
  [
    'REDIS_CLUSTER_NODES',
    'h1:7000,h2',
    /^REDIS_CLUSTER_NODES must be host:port \(or redis:\/\/\[:password@\]host:port\) entries separated by commas \(got "h1:7000,h2"\)$/,
  ],
  ['REDIS_CLUSTER_NODES', ' , ', /^REDIS_CLUSTER_NODES must name at least one node/],
  ['SETTLE_WAIT_MS', '-5', /^SETTLE_WAIT_MS must be/],
  ['LOG_LEVEL', 'loud', /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)$/],
  ['MAX_BODY_BYTES', '12', /^MAX_BODY_BYTES must be at least 1024 \(got "12"\)$/],
  ['PUBLIC_URL', 'ftp://x', /^PUBLIC_URL must be a URL starting with http:\/\/ or https:\/\/ \(got "ftp:\/\/x"\)$/],
  ['SMTP_URL', 'http://mail', /^SMTP_URL must be a URL starting with smtp:\/\/ or smtps:\/\//],
  ['HOST', '   ', /^HOST must not be empty/],
  ['REDIS_PREFIX', 'has space', /^REDIS_PREFIX must be up to 64 characters/],
  ['RESERVATION_TTL_MS', '10', /^RESERVATION_TTL_MS must be at least 1000/],
  ['USAGE_FLUSH_MS', '1.5', /^USAGE_FLUSH_MS must be a whole number/],
];

t.test('loadConfig: defaults and derived values', async (t) => {
  const c = loadConfig({});
  t.equal(c.PORT, 8080);
  t.equal(c.HOST, '0.0.0.0');
  t.equal(c.WORKERS, 1);
  t.equal(c.LOG_LEVEL, 'info');
  t.equal(c.MAX_BODY_BYTES, 16 * 1024 * 1024);
  t.equal(c.REDIS_PREFIX, 'ar:');
  t.equal(c.embeddedSql, true);
  t.equal(c.embeddedHot, true);
  t.equal(c.dataDir, path.resolve('./data'));
  t.equal(c.publicUrl, 'http://localhost:8080');

  // Empty means unset, as compose files produce them.
  t.equal(loadConfig({ PORT: '', LOG_LEVEL: '' }).PORT, 8080);
  t.equal(loadConfig({ PORT: ' 9000 ' }).PORT, 9000, 'surrounding blanks are trimmed');
  t.equal(
    loadConfig({ PUBLIC_URL: 'https://gw.example.com///' }).publicUrl,
    'https://gw.example.com',
    'trailing slashes dropped',
  );

  // Several workers need shared stores; the embedded ones force one.
  t.equal(loadConfig({ WORKERS: '4' }).WORKERS, 1);
  t.equal(
    loadConfig({ WORKERS: '4', DATABASE_URL: 'postgres://h/db' }).WORKERS,
    1,
    'embedded hot store still forces 1',
  );
  t.throws(
    () => loadConfig({ REDIS_URL: 'redis://h:6379', REDIS_CLUSTER_NODES: 'h:7000' }),
    /set REDIS_URL \(one Redis\) or REDIS_CLUSTER_NODES \(a Redis Cluster\), not both/,
  );
  const onCluster = loadConfig({
    WORKERS: '4',
    DATABASE_URL: 'postgres://h/db',
    REDIS_CLUSTER_NODES: 'h1:7000, redis://:pw@h2:7001',
  });
  t.same(onCluster.redis, ['h1:7000', 'redis://:pw@h2:7001'], 'a cluster: its seed nodes, trimmed');
  t.equal(onCluster.WORKERS, 4, 'shared stores: several workers');
  const shared = loadConfig({ WORKERS: '4', DATABASE_URL: 'postgres://h/db', REDIS_URL: 'redis://h:6379' });
  t.equal(shared.WORKERS, 4);
  t.equal(shared.embeddedSql, false);
  t.equal(shared.embeddedHot, false);
  t.ok(loadConfig({ WORKERS: 'auto', DATABASE_URL: 'postgres://h/db', REDIS_URL: 'redis://h' }).WORKERS >= 1);
});

t.test('loadConfig: each bad value gives one line naming the variable', async (t) => {
  for (const [name, value, expected] of BAD_ENV) {
    let caught: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      caught = err;
    }
    t.type(caught, ConfigError, `${name}=${value} is refused`);
    const message = (caught as Error | undefined)?.message ?? '';
    t.notOk(message.includes('\n'), `${name}: one line`);
    const prefix = 'Invalid environment: ';
    t.ok(message.startsWith(prefix), `${name}: "${message}" starts with "${prefix}"`);
    t.match(message.slice(prefix.length), expected, `${name}=${value}: ${message}`);
  }
});

t.test('CLI: a bad value stops `serve` with exit 1 and exactly one stderr line', async (t) => {
  // A sample (each child costs about a second of CPU): the message itself is checked above for all.
  const cases = BAD_ENV.filter(([name, value]) =>
    [
      'PORT=abc',
      'PORT=70000',
      'DATABASE_URL=mysql://x',
      'REDIS_URL=nope',
      'LOG_LEVEL=loud',
      'MAX_BODY_BYTES=12',
    ].includes(`${name}=${value}`),
  );
  t.equal(cases.length, 6);
  const dataDir = tmp();
  const results = await Promise.all(
    cases.map(([name, value]) =>
      runCli(
        ['serve'],
        childEnv({ DATA_DIR: dataDir, [name]: value, LOG_LEVEL: name === 'LOG_LEVEL' ? value : 'silent' }),
      ),
    ),
  );
  cases.forEach(([name, value, expected], i) => {
    const r = results[i];
    t.equal(r.code, 1, `${name}=${value}: exit 1`);
    t.equal(r.stdout, '', `${name}: nothing on stdout`);
    t.equal(
      r.stderr.endsWith('\n') ? r.stderr.split('\n').length : 0,
      2,
      `${name}: exactly one stderr line (${JSON.stringify(r.stderr)})`,
    );
    const line = r.stderr.trimEnd();
    t.ok(line.startsWith('airouter: Invalid environment: '), `${name}: ${line}`);
    t.match(line.slice('airouter: Invalid environment: '.length), expected);
  });
});

t.test('catalogue file errors name the file and the JSON path', async (t) => {
  const dir = tmp();
  const good = testCatalogue({ upstream: 'http://127.0.0.1:9' });
  const write = (name: string, content: unknown) => {
    const file = path.join(dir, name);
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  };
  const refuse = (file: string, expected: RegExp, what: string) => {
    let caught: unknown;
    try {
      loadCatalogue(file);
    } catch (err) {
      caught = err;
    }
    t.type(caught, CatalogueError, `${what}: refused`);
    const message = (caught as Error | undefined)?.message ?? '';
    t.ok(message.startsWith(`${file}: `), `${what}: names the file (${message})`);
    t.notOk(message.includes('\n'), `${what}: one line`);
    t.match(message, expected, `${what}: ${message}`);
  };

  t.equal(loadCatalogue(write('good.json', good)).list.length, good.models.length, 'the good file loads');

  refuse(write('broken.json', '{"providers": [,]}'), /not valid JSON/, 'invalid JSON');

  const negative = clone(good);
  negative.models.push({ ...clone(negative.models[0]), id: 'fourth' });
  negative.models[3].pricing.input = -1;
  refuse(write('negative.json', negative), /: models\[3\]\.pricing\.input must not be negative$/, 'negative price');

  const unknownProvider = clone(good);
  unknownProvider.models[1].routes = [{ provider: 'nobody', model: 'x' }];
  refuse(
    write('provider.json', unknownProvider),
    /: models\[1\]\.routes\[0\]\.provider "nobody" is not a listed provider$/,
    'unknown provider',
  );

  const duplicate = clone(good);
  duplicate.models.push({ ...duplicate.models[0] });
  refuse(
    write('duplicate.json', duplicate),
    new RegExp(`: models\\[${good.models.length}\\]\\.id "oa-model" is listed twice$`),
    'duplicate model id',
  );

  const dupProvider = clone(good);
  dupProvider.providers.push({ ...dupProvider.providers[0] });
  refuse(
    write('dup-provider.json', dupProvider),
    /: providers\[3\]\.id "fake-openai" is listed twice$/,
    'duplicate provider id',
  );

  const badDialect = clone(good);
  badDialect.providers[1].dialect = 'cohere';
  refuse(
    write('dialect.json', badDialect),
    /: providers\[1\]\.dialect must be "openai", "anthropic", "responses" or "gemini"$/,
    'unknown dialect',
  );

  const noRoutes = clone(good);
  noRoutes.models[0].routes = [];
  refuse(write('routes.json', noRoutes), /: models\[0\]\.routes must list at least one route$/, 'no routes');

  refuse(path.join(dir, 'missing.json'), /cannot read \(ENOENT\)/, 'missing file');

  // The holder keeps the last good catalogue when a reload fails.
  const file = write('live.json', good);
  const holder = new CatalogueHolder(file);
  const before = holder.current;
  write('live.json', negative);
  const r = holder.reload();
  t.equal(r.ok, false);
  t.match(!r.ok && r.error, /models\[3\]\.pricing\.input/);
  t.equal(holder.current, before, 'the old catalogue stays in force');
});

t.test('CLI: a bad catalogue file stops `serve` with one stderr line naming the JSON path', async (t) => {
  const dir = tmp();
  const bad = clone(testCatalogue({ upstream: 'http://127.0.0.1:9' }));
  bad.models[2].pricing.output = -3;
  const file = path.join(dir, 'bad.json');
  writeFileSync(file, JSON.stringify(bad));
  const r = await runCli(['serve'], childEnv({ DATA_DIR: path.join(dir, 'data'), GATEWAY_CONFIG: file, PORT: '0' }));
  t.equal(r.code, 1);
  t.equal(lines(r.stderr).length, 1, `one line: ${r.stderr}`);
  t.equal(r.stderr, `airouter: ${file}: models[2].pricing.output must not be negative\n`);
});

t.test('SIGHUP reloads the catalogue; an invalid file keeps the old one', async (t) => {
  const stores = await testStores(t);
  const dir = tmp();
  const file = path.join(dir, 'gateway.config.json');
  const catalogue = testCatalogue({ upstream: 'http://127.0.0.1:9' });
  writeFileSync(file, JSON.stringify(catalogue));
  const env = childEnv({
    DATABASE_URL: stores.databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: stores.redisPrefix,
    GATEWAY_CONFIG: file,
  });
  const made = await runCli(['user', 'create', '--email', 'hup@example.test'], env);
  t.equal(made.code, 0, made.stderr);
  const issued = await runCli(['key', 'create', '--email', 'hup@example.test'], env);
  t.equal(issued.code, 0, issued.stderr);
  const key = lines(issued.stdout).at(-1)!;
  t.match(key, /^ar-[0-9A-Za-z]{40}$/, 'the key is the last stdout line');

  const child = await startServe(t, { ...env, LOG_LEVEL: 'info' });
  const ids = async () => {
    const res = await fetch(`${child.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    t.equal(res.status, 200);
    return ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
  };
  const original = catalogue.models.map((m) => (m as { id: string }).id);
  t.same(await ids(), original, "the file's models are listed");

  writeFileSync(file, '{"providers": [], "models": [ oops ]}');
  child.proc.kill('SIGHUP');
  await child.waitForStdout(/catalogue reload failed; keeping the previous catalogue/, 5000);
  t.same(await ids(), original, 'after a bad reload the old catalogue still serves');

  const next = testCatalogue({
    upstream: 'http://127.0.0.1:9',
    extra: {
      models: [
        { id: 'brand-new', pricing: { input: 1, output: 1 }, routes: [{ provider: 'fake-openai', model: 'x' }] },
      ],
    },
  });
  writeFileSync(file, JSON.stringify(next));
  child.proc.kill('SIGHUP');
  const listed = await waitFor(async () => {
    const now = await ids();
    return now.includes('brand-new') ? now : null;
  }, 5000);
  t.same(listed, [...original, 'brand-new'], 'the new model is listed after SIGHUP');
  t.equal(child.proc.exitCode, null, 'still running');

  const exit = await child.stop('SIGTERM');
  t.same(exit, { code: 0, signal: null });
});
