/**
 * The deploys the browser test looks at, made the way an operator makes them in production: a `pulse worker`
 * process and `node bin/pulse-cli model up|down`, both with TEMPORAL_ADDRESS and PULSE_TEMPORAL_UI pointing at a
 * dev server with its UI, against simulated nodes (test/sim, real sshd). The UI link is read from what the CLI
 * prints.
 */
import path from 'node:path';
import { startCli, waitForOutput, type CliResult } from '../helpers/cli.js';
import type { DevServer } from '../helpers/dev-server.js';
import type { Sim } from '../sim/index.js';

export interface CliDeploy {
  result: CliResult;
  /** The Temporal UI link the CLI printed for the run. */
  link: string;
  workflowId: string;
  runId: string;
}

/** Each CLI run gets this long; a hung run is killed so the test still cleans up and fails with its output. */
const CLI_LIMIT_MS = 60_000;

/** Environment that points the CLI at the dev server, the sim's nodes and ssh config, and a private state dir. */
export function cliEnv(server: Pick<DevServer, 'address' | 'namespace' | 'uiUrl'>, sim: Sim, stateDir: string): NodeJS.ProcessEnv {
  const nodes = path.join(stateDir, 'nodes.json');
  sim.writeNodesJson(nodes);
  return {
    ...sim.env(),
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    PULSE_TEMPORAL_UI: server.uiUrl ?? '',
    PULSE_STATE_DIR: path.join(stateDir, 'state'),
    PULSE_NODES: nodes,
  };
}

/** Runs `pulse model <args>` to its end (killed after CLI_LIMIT_MS) and returns the UI link it printed. */
export async function runCliDeploy(args: string[], env: NodeJS.ProcessEnv): Promise<CliDeploy> {
  const run = startCli(['model', ...args], env);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), CLI_LIMIT_MS);
  let result: CliResult;
  try {
    result = await run.done;
  } finally {
    clearTimeout(timer);
  }
  const out = `${result.stdout}\n${result.stderr}`;
  if (result.code !== 0) throw new Error(`pulse model ${args.join(' ')} exited ${result.code ?? result.signal}:\n${out}`);
  const base = env['PULSE_TEMPORAL_UI'] ?? '';
  const link = out.split(/\s+/).find((w) => base !== '' && w.startsWith(`${base}/`));
  if (!link) throw new Error(`pulse model ${args.join(' ')} printed no UI link under ${base}:\n${out}`);
  const m = /\/workflows\/([^/]+)\/([^/]+)\/history$/.exec(link);
  if (!m) throw new Error(`unexpected UI link ${link}`);
  return { result, link, workflowId: decodeURIComponent(m[1]!), runId: decodeURIComponent(m[2]!) };
}

export interface WorkerProcess {
  /** SIGTERM (the worker's graceful shutdown), SIGKILL if it is still there after 15 s. Idempotent. */
  stop(): Promise<void>;
  output(): string;
}

/** Starts `pulse worker` and resolves once it polls the task queue. */
export async function startWorker(env: NodeJS.ProcessEnv): Promise<WorkerProcess> {
  const run = startCli(['worker'], env);
  // A test process that dies (or times out) must not leave a worker polling behind.
  const onExit = (): void => {
    run.child.kill('SIGKILL');
  };
  process.once('exit', onExit);
  void run.done.then(() => process.off('exit', onExit));
  const stop = async (): Promise<void> => {
    if (run.child.exitCode !== null || run.child.signalCode !== null) return;
    run.child.kill('SIGTERM');
    const timer = setTimeout(() => run.child.kill('SIGKILL'), 15_000);
    await run.done;
    clearTimeout(timer);
  };
  try {
    await waitForOutput(run, /polling task queue/, 30_000);
  } catch (e) {
    await stop();
    throw e;
  }
  return { stop, output: run.output };
}
