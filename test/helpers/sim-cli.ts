/**
 * The rig of an end-to-end test of the CLI against the simulator: a temp dir, the simulated nodes, and the CLI env
 * (simCliEnv: their nodes.json, the state dir `<dir>/state`, an embedded server on ports of its own); and its
 * teardown. One before and one after line in each test file:
 *
 *     before(async () => ({ sim, dir, env } = await startSimCli('pulse-x-', { nodes: ['simA'], readyDelayMs: 300 })));
 *     after(() => stopSimCli(sim, dir));
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stopEmbeddedServer } from '../../cli/deploy-client/embedded-server.js';
import type { NodeState } from '../../runtime/model/index.js';
import { startSim, type Sim, type SimOptions } from '../sim/index.js';
import { killEmbeddedServerOnExit, removeDir, simCliEnv, tempDir } from './cli.js';

export interface SimCli {
  sim: Sim;
  dir: string;
  env: NodeJS.ProcessEnv;
}

/** A temp dir named `prefix…`, the simulator, and the CLI env; the embedded server is killed too if the test process exits early. */
export async function startSimCli(prefix: string, opts: SimOptions): Promise<SimCli> {
  const dir = await tempDir(prefix);
  killEmbeddedServerOnExit(path.join(dir, 'state'));
  const sim = await startSim(opts);
  return { sim, dir, env: await simCliEnv(sim, dir) };
}

/** Stops the embedded server (its background worker first), the simulator, and removes the temp dir (each if it was made). */
export async function stopSimCli(sim: Sim | null, dir: string): Promise<void> {
  if (dir !== '') await stopEmbeddedServer(path.join(dir, 'state'));
  await sim?.stop();
  if (dir !== '') await removeDir(dir);
}

/** The node's saved state (`<dir>/state/nodes/<node>.json`) as the CLI's deploys wrote it. */
export async function savedNodeState(dir: string, node: string): Promise<NodeState> {
  return JSON.parse(await readFile(path.join(dir, 'state', 'nodes', `${node}.json`), 'utf8')) as NodeState;
}
