import { before, after } from 'node:test';
import { openSession } from '../../runtime/node/connect.js';
import type { NodeSession } from '../../runtime/node/types.js';
import { stopServer } from '../../runtime/steps/index.js';
import { harness } from './helpers.js';
import type { Harness } from './helpers.js';
import { stepSuite } from './suite.js';

// host: local runs `bash -s` on this machine; the sim node's tools come first on PATH (test-side env only), and its
// docker, outside the node's namespace, talks to the node's dockerd (test/sim/assets/bin/docker).
let h: Harness;
let s: NodeSession;
const savedPath = process.env.PATH;

before(async () => {
  h = await harness(['spark2'], ['spark2']);
  process.env.PATH = `${h.sim.node('spark2').paths.binDir}:${savedPath ?? ''}`;
  s = await openSession({ name: 'spark2', host: 'local' });
});
after(async () => {
  try {
    if (s && h) await stopServer(s, h.plan('spark2', 'datagen', { minMemGib: 1 }).recipe);
  } finally {
    process.env.PATH = savedPath;
    await s?.close();
    await h?.stop();
  }
});

// The local host has its own /proc/meminfo, so the gate here is one the host passes.
stepSuite({ h: () => h, session: () => s, node: 'spark2', mode: 'local', gate: 1 });
