/**
 * ssh connections per deploy: a worker in this process with its NodePool counting every connection it opens
 * (NodePool.connectionsOpened; the pool is the only way activities reach a node). Four nodes get a full up at once,
 * then a second up, then a down, all on the same worker. Goal: 1 connection per node per deploy (the first
 * deploy opens it; later ones reuse it while it lives).
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/ssh-connections.js
 */
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { NodePool } from '../runtime/node/connect.js';
import { createPulseWorker } from '../worker/main.js';
import { startStack } from '../test/helpers/stack.js';
import { printTable, runMain, writeResult } from './lib.js';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const stack = await startStack({ nodes: 4, readyDelayMs: 300, memory: { recoverMs: 300 }, worker: false });
  Object.assign(process.env, stack.env);
  const pool = new NodePool();
  const connection = await NativeConnection.connect({ address: stack.server.address });
  const quiet = { info() {}, warn() {} };
  const w = await createPulseWorker({ connection, stateDir: stack.stateDir, logger: quiet, deps: { nodes: pool } });
  const running = w.run();
  try {
    const names = stack.sim.nodes.map((n) => n.name);
    const rows: { deploys: string; nodes: number; connectionsOpened: number; perNodePerDeploy: number; goal: string }[] = [];
    const round = async (what: string, plan: (n: string) => Parameters<typeof stack.start>[0]): Promise<void> => {
      const before = pool.connectionsOpened;
      const outs = await Promise.all((await Promise.all(names.map((n) => stack.start(plan(n), { as: 'cli' })))).map((h) => stack.outcome(h)));
      const bad = outs.filter((o) => o.status !== 'succeeded');
      if (bad.length > 0) throw new Error(`${what}: ${bad.map((b) => b.error).join('; ')}`);
      const opened = pool.connectionsOpened - before;
      rows.push({ deploys: what, nodes: names.length, connectionsOpened: opened, perNodePerDeploy: opened / names.length, goal: '<= 1' });
    };
    await round('first full up (fresh worker)', (n) => stack.planUp(n, 'best', { restart: true }));
    await round('second full up', (n) => stack.planUp(n, 'best', { restart: true }));
    await round('down', (n) => stack.planDown(n));
    printTable('ssh connections opened per deploy (NodePool count, one worker)', rows);
    writeResult('ssh-connections', { rows, met: rows.every((r) => r.perNodePerDeploy <= 1) });
  } finally {
    w.shutdown();
    await running.catch(() => undefined);
    await pool.closeAll();
    await connection.close();
    await stack.stop();
  }
}

runMain(main);
