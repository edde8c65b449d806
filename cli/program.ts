/**
 * The command table: `pulse model <verb>` and `pulse worker`. Each verb lazy-imports its module, so local-only
 * commands (profiles, --dry-run, fragment) never load the Temporal SDK or ssh2 and start fast.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { PulseError } from '../runtime/errors.js';
import type * as O from './options.js';
import type { WorkerRunOptions } from './commands/worker.js';

function positiveNumber(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive number, got "${v}"`);
    return n;
  };
}

function globals(cmd: Command): O.GlobalOptions {
  const o = cmd.optsWithGlobals();
  return {
    nodes: (o['nodes'] as string | undefined) ?? process.env['PULSE_NODES'],
    temporal: (o['temporal'] as string | undefined) ?? process.env['TEMPORAL_ADDRESS'],
    temporalUi: (o['temporalUi'] as string | undefined) ?? process.env['PULSE_TEMPORAL_UI'],
    verbose: Boolean(o['verbose']),
    json: Boolean(o['json']),
  };
}

type Runner = (opts: never) => Promise<number>;
/** Set by main(): receives the exit code of the command that ran. */
export let lastExitCode = 0;
async function runLazy(load: () => Promise<{ run: Runner }>, opts: unknown): Promise<void> {
  const mod = await load();
  lastExitCode = await mod.run(opts as never);
}

export function buildProgram(): Command {
  const program = new Command('pulse')
    .description('Bring measured vLLM serving profiles up and down on DGX Spark nodes, as durable Temporal workflows')
    .option('--nodes <file>', 'nodes.json to use (default: runtime/nodes.json, or $PULSE_NODES)')
    .option('--temporal <address>', 'Temporal frontend host:port (default: $TEMPORAL_ADDRESS, else the embedded dev server)')
    .option('--temporal-ui <url>', 'base URL of that server\'s Web UI, for the printed links (default: $PULSE_TEMPORAL_UI)')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();

  const model = program.command('model').description('profiles, deploys and status of the qwen38 server').exitOverride();

  model
    .command('profiles')
    .description('List the profiles and the nodes.')
    .option('--json', 'machine-readable output')
    .action(async (_o, cmd: Command) => runLazy(() => import('./commands/profiles.js'), globals(cmd)));

  model
    .command('up')
    .description('Bring the profile up on the node.')
    .argument('<profile>', 'profile name (runtime/qwen38/profiles/<profile>.env)')
    .requiredOption('--node <node>', 'node name from nodes.json')
    .option('--overlay <dir>', 'add the pairs in DIR/docker-args.txt to EXTRA_DOCKER_ARGS')
    .option('--overlay-wins', 'let an overlay mount replace a profile mount on the same path')
    .option('--yes', 'allow a change on a protected node')
    .option('--experimental', 'allow a profile with pulse-status: experimental')
    .option('--restart', 'restart the server also when the node already runs the same .env')
    .option('--timeout-s <n>', 'readiness timeout (default READY_TIMEOUT_S + readyGraceS)', positiveNumber('--timeout-s'))
    .option('--min-mem-gib <n>', 'memory gate (MemAvailable GiB) for this run', positiveNumber('--min-mem-gib'))
    .option('--dry-run', 'print the rendered .env and the script of each step; run nothing')
    .option('--preflight', 'with --dry-run: also run the read-only checks on the node')
    .option('--detach', 'start the deploy and return without following it')
    .option('--json', 'machine-readable output')
    .option('--verbose', 'show the raw @pulse records of the node scripts')
    .action(async (profile: string, o: Record<string, unknown>, cmd: Command) => {
      const opts: O.UpOptions = {
        ...globals(cmd),
        profile,
        node: o['node'] as string,
        overlay: o['overlay'] as string | undefined,
        overlayWins: Boolean(o['overlayWins']),
        yes: Boolean(o['yes']),
        experimental: Boolean(o['experimental']),
        restart: Boolean(o['restart']),
        timeoutS: o['timeoutS'] as number | undefined,
        minMemGib: o['minMemGib'] as number | undefined,
        dryRun: Boolean(o['dryRun']),
        preflight: Boolean(o['preflight']),
        detach: Boolean(o['detach']),
      };
      if (opts.preflight && !opts.dryRun) throw new PulseError('usage', '--preflight works only with --dry-run');
      await runLazy(() => (opts.dryRun ? import('./commands/dry-run.js') : import('./commands/up.js')), opts);
    });

  model
    .command('down')
    .description('Stop the server on the node.')
    .requiredOption('--node <node>', 'node name')
    .option('--yes', 'allow a change on a protected node')
    .option('--detach', 'start the deploy and return without following it')
    .option('--json', 'machine-readable output')
    .option('--verbose', 'show the raw @pulse records of the node scripts')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      const opts: O.DownOptions = { ...globals(cmd), node: o['node'] as string, yes: Boolean(o['yes']), detach: Boolean(o['detach']) };
      await runLazy(() => import('./commands/down.js'), opts);
    });

  model
    .command('status')
    .description('Show the container, the profile, drift, health, the KV cache size and memory.')
    .option('--node <node>', 'only this node')
    .option('--json', 'machine-readable output')
    .option('--no-http', 'send no request to the server')
    .option('--gpu-probe', 'start a GPU container on the node (runs the gpuProbe command)')
    .option('--yes', 'allow HTTP and the GPU probe on a protected node')
    .option('--verbose', 'show the raw @pulse records of the node scripts')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      const opts: O.StatusOptions = {
        ...globals(cmd),
        node: o['node'] as string | undefined,
        noHttp: o['http'] === false,
        gpuProbe: Boolean(o['gpuProbe']),
        yes: Boolean(o['yes']),
      };
      await runLazy(() => import('./commands/status.js'), opts);
    });

  model
    .command('smoke')
    .description('Send one short chat completion on the node. A protected node needs --yes.')
    .requiredOption('--node <node>', 'node name')
    .option('--yes', 'allow the request on a protected node')
    .option('--json', 'machine-readable output')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      const opts: O.SmokeOptions = { ...globals(cmd), node: o['node'] as string, yes: Boolean(o['yes']) };
      await runLazy(() => import('./commands/smoke.js'), opts);
    });

  model
    .command('fragment')
    .description('Write the gateway backend file again from the saved state.')
    .option('--json', 'machine-readable output')
    .action(async (_o, cmd: Command) => runLazy(() => import('./commands/fragment.js'), globals(cmd)));

  model
    .command('watch')
    .description('Follow the deploy that holds the node.')
    .requiredOption('--node <node>', 'node name')
    .option('--verbose', 'show the raw @pulse records of the node scripts')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      const opts: O.NodeOnlyOptions = { ...globals(cmd), node: o['node'] as string };
      await runLazy(() => import('./commands/watch.js'), opts);
    });

  model
    .command('cancel')
    .description('Cancel the deploy that holds the node; it then marks the node failed. A protected node needs --yes.')
    .requiredOption('--node <node>', 'node name')
    .option('--yes', 'allow the cancel on a protected node (its compensation changes the live node\'s state and endpoint)')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      const opts: O.CancelOptions = { ...globals(cmd), node: o['node'] as string, yes: Boolean(o['yes']) };
      await runLazy(() => import('./commands/cancel.js'), opts);
    });

  model
    .command('history')
    .description('List past deploys.')
    .option('--node <node>', 'only this node')
    .option('--limit <n>', 'how many', positiveNumber('--limit'), 20)
    .option('--json', 'machine-readable output')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      const opts: O.HistoryOptions = { ...globals(cmd), node: o['node'] as string | undefined, limit: o['limit'] as number };
      await runLazy(() => import('./commands/history.js'), opts);
    });

  program
    .command('worker')
    .description('Run the pulse Temporal worker (until SIGTERM/SIGINT).')
    .addOption(new Option('--task-queue <name>', 'task queue (default: pulse-deploy)'))
    .addOption(new Option('--no-gateway', 'do not poll pulse-gateway: for controller hosts that do not hold the gateway file and node state'))
    .addOption(new Option('--metrics <host:port>', 'serve Prometheus metrics on GET /metrics (env PULSE_METRICS_ADDRESS; default off)'))
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      const opts: WorkerRunOptions = {
        ...globals(cmd),
        taskQueue: o['taskQueue'] as string | undefined,
        gateway: o['gateway'] !== false,
        metrics: o['metrics'] as string | undefined,
      };
      await runLazy(() => import('./commands/worker.js'), opts);
    });

  return program;
}
