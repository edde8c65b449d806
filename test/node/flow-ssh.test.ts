import { before, after } from 'node:test';
import { openSession } from '../../runtime/node/connect.js';
import type { NodeSession } from '../../runtime/node/types.js';
import { harness } from './helpers.js';
import type { Harness } from './helpers.js';
import { stepSuite } from './suite.js';

let h: Harness;
let s: NodeSession;

before(async () => {
  h = await harness(['spark2']);
  s = await openSession({ name: 'spark2', host: 'ssh', ssh: 'spark2' });
});
after(async () => {
  await s?.close();
  await h?.stop();
});

stepSuite({ h: () => h, session: () => s, node: 'spark2', mode: 'ssh', gate: 100 });
