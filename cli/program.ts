/**
 * The command table: `pulse model <verb>`, `pulse worker` and `pulse tunnel`. Each verb lazy-imports its module, so local-only
 * commands (profiles, --dry-run, fragment) never load the Temporal SDK or ssh2 and start fast.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { PulseError } from '../runtime/errors.js';
import { teach, version } from './help.js';
import type * as O from './options.js';
import type { WorkerRunOptions } from './commands/worker.js';
import type { TunnelOptions } from './commands/tunnel.js';

function positiveNumber(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive number, got "${v}"`);
    return n;
  };
}

/** `--tail N`: a whole number of lines (0 too), or `all`. */
function tailLines(v: string): number | null {
  if (v === 'all') return null;
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`--tail must be a whole number of lines or "all", got "${v}"`);
  return Number(v);
}

/** Commander's parsed options: read each by its kind, so no flag is cast to a type it may not have. */
type Flags = Record<string, unknown>;
function str(o: Flags, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' ? v : undefined;
}
function num(o: Flags, key: string): number | undefined {
  const v = o[key];
  return typeof v === 'number' ? v : undefined;
}
const flag = (o: Flags, key: string): boolean => o[key] === true;
/**
 * A required option. Not commander's requiredOption: that check runs before the unknown-option check, so `--nod`
 * would get "required option" instead of commander's did-you-mean `--node`.
 */
function required(o: Flags, key: string, cmd: Command): string {
  const v = str(o, key);
  if (v === undefined) {
    const names: string[] = [];
    for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
    throw new PulseError('usage', `--${key} is required`, { hint: `see: pulse ${names.join(' ')} --help` });
  }
  return v;
}

function globals(cmd: Command): O.GlobalOptions {
  const o: Flags = cmd.optsWithGlobals();
  return {
    nodes: str(o, 'nodes') ?? process.env['PULSE_NODES'],
    temporal: str(o, 'temporal') ?? process.env['TEMPORAL_ADDRESS'],
    temporalUi: str(o, 'temporalUi') ?? process.env['PULSE_TEMPORAL_UI'],
    verbose: flag(o, 'verbose'),
    json: flag(o, 'json'),
    quiet: flag(o, 'quiet'),
  };
}

/** A command module: run(opts) returns the exit code (errors are thrown as PulseError, main prints them). */
interface CommandModule<T> {
  run(opts: T): Promise<number>;
}
/** Receives the exit code of the command that ran (main's, passed to buildProgram). */
export type ExitSink = (code: number) => void;

export function buildProgram(exit: ExitSink): Command {
  const runLazy = async <T>(load: () => Promise<CommandModule<T>>, opts: T): Promise<void> => exit(await (await load()).run(opts));

  const program = new Command('pulse')
    .description('Bring measured vLLM serving profiles up and down on DGX Spark nodes, as durable Temporal workflows')
    .option('--nodes <file>', 'nodes.json to use (default: runtime/nodes.json, or $PULSE_NODES)')
    .option('--temporal <address>', 'Temporal frontend host:port (default: $TEMPORAL_ADDRESS, else the embedded dev server)')
    .option('--temporal-ui <url>', 'base URL of that server\'s Web UI, for the printed links (default: $PULSE_TEMPORAL_UI)')
    .version(version(), '--version', 'print pulse\'s version')
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
    .option('--node <node>', 'node name from nodes.json (required)')
    .option('--overlay <dir>', 'add the pairs in DIR/docker-args.txt to EXTRA_DOCKER_ARGS')
    .option('--overlay-wins', 'let an overlay mount replace a profile mount on the same path')
    .option('--yes', 'allow a change on a protected node')
    .option('--experimental', 'allow a profile with pulse-status: experimental')
    .option('--restart', 'restart the server also when the node already runs the same .env')
    .option('--timeout-s <n>', 'readiness timeout (default READY_TIMEOUT_S + readyGraceS)', positiveNumber('--timeout-s'))
    .option('--min-mem-gib <n>', 'memory gate (MemAvailable GiB) for this run', positiveNumber('--min-mem-gib'))
    .option('--dry-run', 'print the rendered .env and the script of each step; run nothing')
    .option('--preflight', 'with --dry-run: also run the read-only checks on the node')
    .option('--detach', 'start the deploy and return; it runs to its end without this terminal (Ctrl-C while following does the same)')
    .option('--auto-rollback', 'if it fails after the stop began, bring the previous .env back up (nodes.json autoRollback)')
    .option('--json', 'machine-readable output')
    .option('--quiet', 'no step or progress lines: only the result, warnings and errors')
    .option('--verbose', 'show the raw @pulse records of the node scripts')
    .action(async (profile: string, o: Flags, cmd: Command) => {
      const opts: O.UpOptions = {
        ...globals(cmd),
        profile,
        node: required(o, 'node', cmd),
        overlay: str(o, 'overlay'),
        overlayWins: flag(o, 'overlayWins'),
        yes: flag(o, 'yes'),
        experimental: flag(o, 'experimental'),
        restart: flag(o, 'restart'),
        timeoutS: num(o, 'timeoutS'),
        minMemGib: num(o, 'minMemGib'),
        dryRun: flag(o, 'dryRun'),
        preflight: flag(o, 'preflight'),
        detach: flag(o, 'detach'),
        autoRollback: flag(o, 'autoRollback'),
      };
      if (opts.preflight && !opts.dryRun) throw new PulseError('usage', '--preflight works only with --dry-run');
      await runLazy<O.UpOptions>(() => (opts.dryRun ? import('./commands/dry-run.js') : import('./commands/up.js')), opts);
    });

  model
    .command('down')
    .description('Stop the server on the node.')
    .option('--node <node>', 'node name from nodes.json (required)')
    .option('--yes', 'allow a change on a protected node')
    .option('--detach', 'start the deploy and return; it runs to its end without this terminal (Ctrl-C while following does the same)')
    .option('--json', 'machine-readable output')
    .option('--quiet', 'no step or progress lines: only the result, warnings and errors')
    .option('--verbose', 'show the raw @pulse records of the node scripts')
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.DownOptions = { ...globals(cmd), node: required(o, 'node', cmd), yes: flag(o, 'yes'), detach: flag(o, 'detach') };
      await runLazy(() => import('./commands/down.js'), opts);
    });

  model
    .command('rollback')
    .description('Bring the node back to the exact bytes of a .env backup (default: the one last known good points to).')
    .option('--node <node>', 'node name from nodes.json (required)')
    .option('--to <backup>', 'the backup to restore (a path, or a .env.pulse-bak-* name in the recipe dir)')
    .option('--yes', 'allow a change on a protected node')
    .option('--force', 'restore a backup that pulse did not write or that was edited by hand')
    .option('--timeout-s <n>', 'readiness timeout (default READY_TIMEOUT_S of the backup + readyGraceS)', positiveNumber('--timeout-s'))
    .option('--dry-run', 'show which backup, its profile and the key difference to the live .env; run nothing')
    .option('--detach', 'start the rollback and return without following it')
    .option('--json', 'machine-readable output')
    .option('--quiet', 'no step or progress lines: only the result, warnings and errors')
    .option('--verbose', 'show the raw @pulse records of the node scripts')
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.RollbackOptions = {
        ...globals(cmd), node: required(o, 'node', cmd), to: str(o, 'to'), yes: flag(o, 'yes'), force: flag(o, 'force'),
        timeoutS: num(o, 'timeoutS'), dryRun: flag(o, 'dryRun'), detach: flag(o, 'detach'),
      };
      await runLazy(() => import('./commands/rollback.js'), opts);
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
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.StatusOptions = {
        ...globals(cmd),
        node: str(o, 'node'),
        noHttp: o['http'] === false,
        gpuProbe: flag(o, 'gpuProbe'),
        yes: flag(o, 'yes'),
      };
      await runLazy(() => import('./commands/status.js'), opts);
    });

  model
    .command('smoke')
    .description('Send one short chat completion on the node. A protected node needs --yes.')
    .option('--node <node>', 'node name from nodes.json (required)')
    .option('--yes', 'allow the request on a protected node')
    .option('--json', 'machine-readable output')
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.SmokeOptions = { ...globals(cmd), node: required(o, 'node', cmd), yes: flag(o, 'yes') };
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
    .option('--node <node>', 'node name from nodes.json (required)')
    .option('--quiet', 'no step or progress lines: only the result, warnings and errors')
    .option('--verbose', 'show the raw @pulse records of the node scripts')
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.NodeOnlyOptions = { ...globals(cmd), node: required(o, 'node', cmd) };
      await runLazy(() => import('./commands/watch.js'), opts);
    });

  model
    .command('cancel')
    .description('Cancel the deploy that holds the node; it then marks the node failed. A protected node needs --yes.')
    .option('--node <node>', 'node name from nodes.json (required)')
    .option('--yes', 'allow the cancel on a protected node (its compensation changes the live node\'s state and endpoint)')
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.CancelOptions = { ...globals(cmd), node: required(o, 'node', cmd), yes: flag(o, 'yes') };
      await runLazy(() => import('./commands/cancel.js'), opts);
    });

  model
    .command('diff')
    .description('Show old → new of every key where the profile differs from the node\'s running .env (secrets masked); exit 1 when it differs.')
    .argument('<profile>', 'profile name (runtime/qwen38/profiles/<profile>.env)')
    .option('--node <node>', 'node name from nodes.json (required)')
    .option('--overlay <dir>', 'render with the pairs in DIR/docker-args.txt, as up --overlay would')
    .option('--overlay-wins', 'let an overlay mount replace a profile mount on the same path')
    .option('--json', 'machine-readable output')
    .action(async (profile: string, o: Flags, cmd: Command) => {
      const opts: O.DiffOptions = { ...globals(cmd), profile, node: required(o, 'node', cmd), overlay: str(o, 'overlay'), overlayWins: flag(o, 'overlayWins') };
      await runLazy(() => import('./commands/diff.js'), opts);
    });

  model
    .command('logs')
    .description('Show the container\'s log on the node (or, with --deploy, the last deploy\'s start log); secrets redacted on the node.')
    .option('--node <node>', 'node name from nodes.json (required)')
    .option('-f, --follow', 'go on printing new lines until Ctrl-C (or until the container stops)')
    .option('--tail <n>', 'only the last N lines ("all": every line)', tailLines, 100)
    .option('--deploy', 'the start log of the last deploy (the recipe\'s logs/pulse-up-*.log) instead of the container\'s log')
    .option('--quiet', 'only the log lines: not the line that says what is shown')
    .action(async (o: Flags, cmd: Command) => {
      const tail = o['tail'];
      const opts: O.LogsOptions = {
        ...globals(cmd),
        node: required(o, 'node', cmd),
        tail: typeof tail === 'number' ? tail : null,
        follow: flag(o, 'follow'),
        deploy: flag(o, 'deploy'),
      };
      await runLazy(() => import('./commands/logs.js'), opts);
    });

  model
    .command('history')
    .description('List past deploys.')
    .option('--node <node>', 'only this node')
    .option('--limit <n>', 'how many', positiveNumber('--limit'), 20)
    .option('--json', 'machine-readable output')
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.HistoryOptions = { ...globals(cmd), node: str(o, 'node'), limit: num(o, 'limit') ?? 20 };
      await runLazy(() => import('./commands/history.js'), opts);
    });

  program
    .command('worker')
    .description('Run the pulse Temporal worker (until SIGTERM/SIGINT).')
    .addOption(new Option('--task-queue <name>', 'task queue (default: pulse-deploy)'))
    .addOption(new Option('--no-gateway', 'do not poll pulse-gateway: for controller hosts that do not hold the gateway file and node state'))
    .addOption(new Option('--metrics <host:port>', 'serve Prometheus metrics on GET /metrics (env PULSE_METRICS_ADDRESS; default off)'))
    // What up/down/watch start beside the embedded server (cli/background-worker.ts); not for operators.
    .addOption(new Option('--background', 'serve the running embedded server until it stops or PULSE_WORKER_IDLE_S idle seconds').hideHelp())
    .action(async (o: Flags, cmd: Command) => {
      const opts: WorkerRunOptions = {
        ...globals(cmd),
        taskQueue: str(o, 'taskQueue'),
        gateway: o['gateway'] !== false,
        metrics: str(o, 'metrics'),
        background: flag(o, 'background'),
      };
      await runLazy(() => import('./commands/worker.js'), opts);
    });

  program
    .command('tunnel')
    .description('On the gateway host: keep an ssh tunnel to each node with gatewayTunnel, and its endpoint in the gateway backend file (until SIGTERM/SIGINT).')
    .option('--probe-interval-s <n>', 'how often GET /health goes through each tunnel (default 5)', positiveNumber('--probe-interval-s'))
    .action(async (o: Flags, cmd: Command) => {
      const opts: TunnelOptions = { ...globals(cmd), probeIntervalS: num(o, 'probeIntervalS') };
      await runLazy(() => import('./commands/tunnel.js'), opts);
    });

  program
    .command('completion')
    .description('Print the shell completion script (bash or zsh), generated from this command table.')
    .argument('[shell]', 'bash or zsh')
    .addOption(new Option('--list <what>', 'the names the scripts complete: profiles or nodes').hideHelp())
    .action(async (shell: string | undefined, o: Flags, cmd: Command) => {
      const opts: O.CompletionOptions = { ...globals(cmd), shell, list: str(o, 'list'), root: program };
      await runLazy(() => import('./commands/completion.js'), opts);
    });

  teach(program);
  return program;
}
