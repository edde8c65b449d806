/** Shared test setup of the node tier: a simulator, a nodes.json for it, and real plans built by runtime/plan/plan.ts. */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadNodesConfig } from '../../runtime/config/nodes.js';
import { loadProfiles } from '../../runtime/config/profiles.js';
import { buildUpPlan } from '../../runtime/plan/plan.js';
import type { NodeSession, RemoteResult } from '../../runtime/node/types.js';
import type { UpPlan } from '../../runtime/model/index.js';
import { startSim } from '../sim/index.js';
import type { Sim } from '../sim/index.js';

/** nodes.json takes a recipe's dockerArgs as one string (the sim may write a list). */
function joinDockerArgs(json: Record<string, unknown>): Record<string, unknown> {
  for (const node of Object.values(json.nodes as Record<string, { recipes: Record<string, { dockerArgs?: unknown }> }>)) {
    for (const r of Object.values(node.recipes)) if (Array.isArray(r.dockerArgs)) r.dockerArgs = r.dockerArgs.join(' ');
  }
  return json;
}

/** The profiles name files/mtp/draft_vocab.json; give every sim recipe that file (the sim may ship another name). */
function ensureDraftVocab(recipeDir: string): void {
  const f = join(recipeDir, 'files/mtp/draft_vocab.json');
  if (existsSync(f)) return;
  mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, '{"draft_vocab": []}\n');
}

export interface Harness {
  sim: Sim;
  nodesFile: string;
  tmp: string;
  /** A real plan for `profile` on `node` (as the CLI builds it). */
  plan(node: string, profile?: string, opts?: { restart?: boolean; minMemGib?: number; now?: Date }): UpPlan;
  stop(): Promise<void>;
}

/** Start a sim with `nodes` and point PULSE_SSH_CONFIG at it; `local` nodes get `host: local`. */
export async function harness(nodes: string[], local: string[] = []): Promise<Harness> {
  const sim = await startSim({ nodes, readyDelayMs: 200, memory: { recoverMs: 300 } });
  const tmp = mkdtempSync(join(tmpdir(), 'pulse-node-test-'));
  const nodesFile = join(tmp, 'nodes.json');
  sim.writeNodesJson(nodesFile, { protected: [], local, minMemAvailableGiB: 100, transform: joinDockerArgs });
  for (const n of sim.nodes) ensureDraftVocab(n.recipeDir);
  const before = process.env.PULSE_SSH_CONFIG;
  process.env.PULSE_SSH_CONFIG = sim.sshConfigPath;
  const config = loadNodesConfig(nodesFile);
  const profiles = loadProfiles();
  return {
    sim,
    nodesFile,
    tmp,
    plan: (node, profile = 'datagen', opts = {}) =>
      buildUpPlan(config, profiles, { profile, node, overlay: null, overlayWins: false, yes: true, restart: opts.restart ?? false, minMemGib: opts.minMemGib }, opts.now ?? new Date()),
    stop: async () => {
      if (before === undefined) delete process.env.PULSE_SSH_CONFIG;
      else process.env.PULSE_SSH_CONFIG = before;
      await sim.stop();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** Wraps a session so every RemoteResult is kept (tests assert over all output, e.g. that no secret appears). */
export function recording(session: NodeSession): { session: NodeSession; results: RemoteResult[] } {
  const results: RemoteResult[] = [];
  return {
    results,
    session: {
      target: session.target,
      run: async (step, opts) => {
        const r = await session.run(step, opts);
        results.push(r);
        return r;
      },
      close: () => session.close(),
    },
  };
}

