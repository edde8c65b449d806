/**
 * The engine rig: a real `temporal server start-dev`, simulated nodes over real sshd, a state dir, nodes.json and
 * plans built exactly as the CLI builds them. Everything it starts is stopped by close(), also after a failure.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadInputs } from '../../runtime/config/index.js';
import { buildDownPlan, buildUpPlan } from '../../runtime/plan/plan.js';
import { upStart } from '../../runtime/plan/plan-check.js';
import { createPulseWorker } from '../../worker/main.js';
import type { PulseWorker, PulseWorkerOptions } from '../../worker/main.js';
import { SA_ACTION, SA_NODE, SA_PROFILE, TASK_QUEUE, workflowIdFor } from '../../workflows/definitions.js';
import type { DownPlan, UpPlan } from '../../runtime/model/index.js';
import { startDevServer } from '../helpers/dev-server.js';
import { startSim } from '../sim/index.js';
import type { Sim, SimOptions } from '../sim/index.js';
import { SECRETS } from './secrets.js';

export { SECRETS } from './secrets.js';

/** The Temporal server a rig runs on: the dev server by default, a production-shaped cluster when given. */
export interface RigServer {
  address: string;
  stop(): Promise<void>;
}

export interface Rig {
  server: RigServer;
  sim: Sim;
  stateDir: string;
  nodesJson: string;
  client: Client;
  /** `over.now`: the render time, so the stamp (the backup's name, second resolution) of each plan can be told apart. */
  upPlan(node: string, profile: string, over?: { timeoutS?: number; restart?: boolean; now?: Date }): UpPlan;
  downPlan(node: string): DownPlan;
  /** Start a deploy as the CLI does: its input (an up: UpStart), workflow ID = the node lock, search attributes, static summary. */
  start(plan: UpPlan | DownPlan): ReturnType<Client['workflow']['start']>;
  /** A worker in this process, on the rig's server and sim (`over`: another bundle, identity...). */
  worker(over?: Partial<Omit<PulseWorkerOptions, 'connection'>>): Promise<PulseWorker & { connection: NativeConnection }>;
  /** The .env.pulse-bak-* files in a node's recipe dir. */
  backups(node: string): string[];
  close(): Promise<void>;
}

/** Plant an .env (with secret lines) so the first up writes a backup and carries the secrets. */
export function plantEnv(sim: Sim, node: string): void {
  const n = sim.node(node);
  const sample = readFileSync(path.join(n.recipeDir, '.env.sample'), 'utf8');
  writeFileSync(n.envPath, `${sample}\nAPI_KEY=${SECRETS.API_KEY}\nHF_TOKEN=${SECRETS.HF_TOKEN}\n`, { mode: 0o600 });
}

export async function startRig(nodes: SimOptions['nodes'], simOpts: Partial<SimOptions> = {}, startServer: () => Promise<RigServer> = startDevServer): Promise<Rig> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'pulse-engine-'));
  const closers: (() => Promise<unknown>)[] = [async () => rmSync(stateDir, { recursive: true, force: true })];
  const close = async (): Promise<void> => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const [server, sim] = await Promise.all([startServer(), startSim({ nodes, readyDelayMs: 300, ...simOpts })]);
    closers.push(() => server.stop(), () => sim.stop());
    process.env['PULSE_SSH_CONFIG'] = sim.sshConfigPath;
    const nodesJson = path.join(stateDir, 'nodes.json');
    sim.writeNodesJson(nodesJson);
    for (const n of sim.nodes) plantEnv(sim, n.name);
    const connection = await Connection.connect({ address: server.address });
    closers.push(() => connection.close());
    const client = new Client({ connection });
    return { server, sim, stateDir, nodesJson, client, close, ...helpers(stateDir, nodesJson, client, server, sim) };
  } catch (err) {
    await close();
    throw err;
  }
}

function helpers(stateDir: string, nodesJson: string, client: Client, server: RigServer, sim: Sim) {
  const inputs = loadInputs({ nodes: nodesJson });
  return {
    upPlan(node: string, profile: string, over: { timeoutS?: number; restart?: boolean; now?: Date } = {}): UpPlan {
      return buildUpPlan(inputs.config, inputs.profiles, { profile, node, overlay: null, overlayWins: false, yes: true, restart: over.restart ?? false, timeoutS: over.timeoutS }, over.now ?? new Date());
    },
    downPlan(node: string): DownPlan {
      return buildDownPlan(inputs.config, { node, yes: true }, new Date());
    },
    async start(plan: UpPlan | DownPlan) {
      const profile = plan.action === 'up' ? plan.profile : '';
      return client.workflow.start(plan.action === 'up' ? 'upWorkflow' : 'downWorkflow', {
        // An up with the CLI's input (cli/deploy-client/deploys.ts): the plan without its .env, and its digest.
        args: [plan.action === 'up' ? upStart(plan) : plan],
        taskQueue: TASK_QUEUE,
        workflowId: workflowIdFor(plan.node),
        typedSearchAttributes: [{ key: SA_NODE, value: plan.node }, { key: SA_PROFILE, value: profile || 'none' }, { key: SA_ACTION, value: plan.action }],
        staticSummary: `${plan.action} ${profile} on ${plan.node}`,
      });
    },
    async worker(over: Partial<Omit<PulseWorkerOptions, 'connection'>> = {}) {
      const connection = await NativeConnection.connect({ address: server.address });
      const w = await createPulseWorker({ connection, stateDir, nodesPath: nodesJson, logger: { info: () => undefined, warn: () => undefined }, ...over });
      return Object.assign(w, { connection });
    },
    backups(node: string): string[] {
      const dir = path.dirname(sim.node(node).envPath);
      return readdirSync(dir).filter((f) => f.startsWith('.env.pulse-bak-'));
    },
  };
}
