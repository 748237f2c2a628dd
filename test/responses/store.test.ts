// The stored answers behind previous_response_id, on a real Postgres: owned by one user, gone
// once expired or deleted, and a continuation replays what its vendor-independent history is.

import t from 'tap';
import { createVerifiedUser } from '../../src/accounts/users.js';
import {
  deleteResponse,
  history,
  inputItems,
  listedInput,
  loadResponse,
  saveResponse,
  sweepResponses,
  type StoredResponse,
} from '../../src/responses/store.js';
import { testStores } from '../helpers/stores.js';

const stores = await testStores(t);
const sql = stores.sql;
const alice = await createVerifiedUser(sql, 'alice@example.test', 'correct horse battery staple');
const bob = await createVerifiedUser(sql, 'bob@example.test', 'correct horse battery staple');

const record = (id: string, userId: string): StoredResponse => ({
  id,
  userId,
  model: 'm',
  provider: 'p',
  upstreamStored: false,
  input: inputItems('hello'),
  response: {
    id,
    object: 'response',
    output: [
      { id: 'rs_1', type: 'reasoning', summary: [] },
      { id: 'rs_2', type: 'reasoning', summary: [], encrypted_content: 'gAAA' },
      { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] },
    ],
  },
});

t.test('saved, read back by its owner only, deleted once', async (t) => {
  await saveResponse(sql, record('resp_a', alice.id), 30, 1 << 20);
  const back = await loadResponse(sql, alice.id, 'resp_a');
  t.same(
    back?.input,
    [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] }],
    'a string input is one user message',
  );
  t.equal(await loadResponse(sql, bob.id, 'resp_a'), undefined, "another user's id is not found");
  t.equal(await deleteResponse(sql, bob.id, 'resp_a'), false, 'nor deleted by them');
  t.equal(await deleteResponse(sql, alice.id, 'resp_a'), true);
  t.equal(await deleteResponse(sql, alice.id, 'resp_a'), false, 'deleted once');
  t.equal(await loadResponse(sql, alice.id, 'resp_a'), undefined);
});

t.test('expired rows are not found, and the sweep removes them', async (t) => {
  await saveResponse(sql, record('resp_old', alice.id), 30, 1 << 20);
  await sql`UPDATE responses SET expires_at = now() - interval '1 second' WHERE id = 'resp_old'`;
  t.equal(await loadResponse(sql, alice.id, 'resp_old'), undefined);
  t.ok((await sweepResponses(sql)) >= 1);
  t.same(await sql`SELECT id FROM responses WHERE id = 'resp_old'`, []);
});

t.test('history: the input, then the output, reasoning only with its encrypted content', async (t) => {
  const h = history(record('resp_h', alice.id));
  t.same(
    h.map((i) => i.id ?? i.type),
    ['message', 'rs_2', 'msg_1'],
  );
});

t.test('listed input items carry ids, stable across reads', async (t) => {
  const r = record('resp_l', alice.id);
  const a = listedInput(r);
  t.match(a[0], { id: /^msg_[0-9a-f]{40}$/, type: 'message', role: 'user' });
  t.same(listedInput(r), a);
});
