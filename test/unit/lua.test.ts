// The hot store's scripts are read from src/store/lua/: a constant a piece names must be given.
import t from 'tap';
import { luaScript } from '../../src/store/lua.js';

t.test('a piece is read as written, its constants filled in', async (t) => {
  const lease = luaScript(['lease'], { LEASE_SHARE: 8 });
  t.match(lease, 'math.floor(available / 8)', 'the constant is in place');
  t.notMatch(lease, '$', 'nothing is left to fill');
  t.throws(
    () => luaScript(['lease']),
    /no value for \$LEASE_SHARE/,
    'a missing constant is an error at start, not in Redis',
  );
  t.equal(luaScript(['neg', 'credit']), luaScript(['neg']) + luaScript(['credit']), 'pieces in order');
});
