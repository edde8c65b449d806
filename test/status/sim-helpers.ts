/**
 * Helpers of the status tests against the simulator: a sim with a nodes.json (first node protected), a
 * pulse-rendered .env with a secret API_KEY carried at the end, a server started with the recipe's own start.sh,
 * and the CLI run as a child process against all of it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sha256OfLines } from '../../runtime/config/env-header.js';
import { writeNodeState } from '../../runtime/state/state.js';
import { startSim, PROFILE_IMAGE, MODEL_ID, RECIPE_NAME } from '../sim/index.js';
import type { Sim, SimNode } from '../sim/index.js';
import type { NodeState } from '../../runtime/model/index.js';
import { nodeState } from './fixtures.js';
import { runCli, type CliResult } from '../helpers/cli.js';

/** The API key every simulated .env carries: asserted absent from every output. */
export const SECRET_KEY = 'sk-sim-SECRET-4f9a2c';

export interface StatusSim {
  sim: Sim;
  nodesFile: string;
  stateDir: string;
  stop(): Promise<void>;
}

/** A sim with `count` nodes (spark1 protected unless `protected` says otherwise), its nodes.json and an empty pulse state dir. */
export async function startStatusSim(count: number, opts: { readyDelayMs?: number; protected?: string[] } = {}): Promise<StatusSim> {
  const sim = await startSim({ nodes: count, readyDelayMs: opts.readyDelayMs ?? 200, readyPollS: 0.1 });
  const nodesFile = path.join(sim.dir, 'nodes.json');
  sim.writeNodesJson(nodesFile, {
    protected: opts.protected ?? ['spark1'],
    transform: (json) => {
      // The schema wants dockerArgs as one string; older sim versions wrote a list.
      for (const n of Object.values(json['nodes'] as Record<string, { recipes: Record<string, { dockerArgs?: unknown }> }>)) {
        for (const r of Object.values(n.recipes)) if (Array.isArray(r.dockerArgs)) r.dockerArgs = r.dockerArgs.join(' ');
      }
      return json;
    },
  });
  const stateDir = path.join(sim.dir, 'pulse-state');
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  return { sim, nodesFile, stateDir, stop: () => sim.stop() };
}

/** Write a pulse-rendered .env (correct pulse-sha256) on the node, with API_KEY carried at the end. */
export function writePulseEnv(node: SimNode, opts: { profile?: string; readyTimeoutS?: number } = {}): string[] {
  const lines = [
    `IMAGE="${PROFILE_IMAGE}"`,
    `MODEL="${MODEL_ID}"`,
    'SERVED_MODEL_NAME="qwen38"',
    'MAX_MODEL_LEN="524288"',
    'GPU_MEMORY_UTILIZATION="0.85"',
    `READY_TIMEOUT_S="${opts.readyTimeoutS ?? 60}"`,
    `HF_HOME="${node.hfHome}"`,
    'BIND="127.0.0.1"',
    `PORT="${node.vllmPort}"`,
    'REQUIRE_IDLE_GPU="0"',
  ];
  const header = [
    `# pulse-profile: ${opts.profile ?? 'best'}`,
    `# pulse-node: ${node.name}`,
    `# pulse-recipe: ${RECIPE_NAME}`,
    '# pulse-overlay: none',
    '# pulse-rendered: 2026-09-23T10:15:00Z',
    `# pulse-sha256: ${sha256OfLines(lines)}`,
  ];
  writeFileSync(node.envPath, [...header, ...lines, `API_KEY="${SECRET_KEY}"`, ''].join('\n'));
  return lines;
}

/** Run the recipe's start.sh on the node as `up` does (setsid, env -i); resolves when start.sh returns. */
export function startServer(node: SimNode, background = false): void {
  const log = path.join(node.paths.logsDir, 'test-start.log');
  const cmd = `cd '${node.recipeDir}' && mkdir -p logs && setsid env -i PATH="$PATH" HOME=/root bash ./start.sh >'${log}' 2>&1 </dev/null`;
  node.exec(background ? `(${cmd}) >/dev/null 2>&1 </dev/null &` : `${cmd} || { cat '${log}' >&2; exit 1; }`);
}

/**
 * Wait until the node's server has logged start.sh's successful readiness poll (its last request), so request
 * counts taken afterwards belong to the test alone. The sim logs a request after answering it.
 */
export async function settleRequests(node: SimNode): Promise<void> {
  for (let i = 0; i < 400 && !node.requests().some((r) => r.status === 200); i++) await new Promise((r) => setTimeout(r, 25));
}

/** Save a node state as `up`/`down` would. */
export async function saveState(stateDir: string, node: string, over: Partial<NodeState> = {}): Promise<void> {
  await writeNodeState(stateDir, nodeState(node, over));
}

/**
 * Run `pulse <args>` against the sim (its ssh config, the test's state dir, no Temporal configured, colour left to
 * the CLI); a CLI killed by a signal reads as exit 1.
 */
export async function runSimCli(s: StatusSim, args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult & { code: number }> {
  const r = await runCli(['--nodes', s.nodesFile, ...args], { ...s.sim.env(), PULSE_STATE_DIR: s.stateDir, TEMPORAL_ADDRESS: undefined, NO_COLOR: undefined, ...extraEnv });
  return { ...r, code: r.code ?? 1 };
}
