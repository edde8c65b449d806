/**
 * Tunnel reconnect: `pulse tunnel` (the CLI, a child process) forwards to spark2's server, which listens on
 * 127.0.0.1 of its simulated node. Each rep kills the tunnel's ssh link (SIGKILL to the node's per-connection sshd,
 * as a dropped link) and times, from the kill: the tunnel noticing (tunnel.json connected false), the link back
 * (connected with one more reconnect), the first GET /health through the tunnel port that answers 200, and the
 * endpoint enabled again in gateway-backends.json. A last rep keeps the node's sshd down for OUTAGE_S and times
 * from its restart to the link back (the backoff's cost). Goal: the link back within 2 s of a kill.
 *
 * Run: npx tsc && node dist/bench/tunnel-reconnect.js [reps] [outageS]
 */
import http from 'node:http';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { startSim } from '../test/sim/index.js';
import { saveState, startServer, writePulseEnv } from '../test/status/sim-helpers.js';
import { startCli, tempDir, removeDir, waitForOutput } from '../test/helpers/cli.js';
import { freePort } from '../test/sim/ports.js';
import { endpointOf, tunnelHealthOf, writeTunnelNodesJson } from '../test/helpers/tunnel.js';
import { median, printTable, round, runMain, writeResult } from './lib.js';

const REPS = Number(process.argv[2] ?? 10);
const OUTAGE_S = Number(process.argv[3] ?? 5);
const GOAL_MS = 2000;

function healthOk(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/health', agent: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
  });
}

/** Poll every 10 ms until `ok`; the time it first held (ms since the epoch). */
async function when(what: string, ok: () => boolean | Promise<boolean>, limitMs = 60_000): Promise<number> {
  const deadline = Date.now() + limitMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now();
}

async function main(): Promise<void> {
  const dir = await tempDir('pulse-bench-tunnel-');
  const sim = await startSim({ nodes: ['spark1', 'spark2'], readyDelayMs: 0, dir: path.join(dir, 'sim') });
  const stateDir = path.join(dir, 'state');
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  let tunnel: ReturnType<typeof startCli> | null = null;
  try {
    const node = sim.node('spark2');
    const nodes = path.join(dir, 'nodes.json');
    const port = await freePort();
    writeTunnelNodesJson(sim, nodes, 'spark2', port);
    writePulseEnv(node);
    startServer(node);
    await saveState(stateDir, 'spark2');
    const env = { ...sim.env(), PULSE_NODES: nodes, PULSE_STATE_DIR: stateDir, TEMPORAL_ADDRESS: '' };
    tunnel = startCli(['tunnel', '--probe-interval-s', '0.1'], env);
    await waitForOutput(tunnel, /spark2: endpoint enabled/, 60_000);
    const h = () => tunnelHealthOf(stateDir)?.nodes['spark2'];
    const rows: { rep: number; what: string; noticedMs: number; linkBackMs: number; servingMs: number; enabledMs: number }[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const before = h()?.reconnects ?? 0;
      const killedAt = Date.now();
      node.killSshSessions();
      const noticed = await when('the tunnel to notice', () => h()?.connected === false || (h()?.reconnects ?? 0) > before);
      const back = await when('the link back', () => h()?.connected === true && (h()?.reconnects ?? 0) > before);
      const serving = await when('a 200 through the tunnel', () => healthOk(port));
      const enabled = await when('the endpoint enabled', () => endpointOf(stateDir, 'spark2')?.enabled === true && (h()?.reconnects ?? 0) > before);
      rows.push({ rep: rep + 1, what: 'link killed', noticedMs: noticed - killedAt, linkBackMs: back - killedAt, servingMs: serving - killedAt, enabledMs: enabled - killedAt });
      await new Promise((r) => setTimeout(r, 300));
    }
    // sshd down for OUTAGE_S: the backoff has grown meanwhile; what counts is the time from sshd back to the link.
    const before = h()?.reconnects ?? 0;
    await node.stopSshd();
    await when('the tunnel to notice the outage', () => h()?.connected === false);
    await new Promise((r) => setTimeout(r, OUTAGE_S * 1000));
    const restartedAt = Date.now();
    await node.startSshd();
    const back = await when('the link back after the outage', () => h()?.connected === true && (h()?.reconnects ?? 0) > before, 120_000);
    const outage = { outageS: OUTAGE_S, sshdBackToLinkMs: back - restartedAt };
    printTable(`tunnel reconnect: ssh link killed -> link back, 200 through the tunnel, endpoint enabled (goal link back <= ${GOAL_MS} ms)`, rows);
    printTable(`tunnel reconnect after a ${OUTAGE_S} s sshd outage (backoff 0.25 s doubling, max 30 s)`, [outage]);
    const pick = (k: 'noticedMs' | 'linkBackMs' | 'servingMs' | 'enabledMs') => ({ median: round(median(rows.map((r) => r[k])), 0), max: Math.max(...rows.map((r) => r[k])) });
    writeResult('tunnel-reconnect', {
      goalMs: GOAL_MS,
      reps: REPS,
      noticed: pick('noticedMs'),
      linkBack: pick('linkBackMs'),
      serving: pick('servingMs'),
      enabled: pick('enabledMs'),
      outage,
      rows,
      met: rows.every((r) => r.linkBackMs <= GOAL_MS),
    });
  } finally {
    if (tunnel && tunnel.child.exitCode === null) {
      tunnel.child.kill('SIGTERM');
      await tunnel.done;
    }
    await sim.stop();
    await removeDir(dir);
  }
}

runMain(main);
