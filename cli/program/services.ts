/** The top-level verbs beside `model`: the long-running `pulse worker` and `pulse tunnel`, `pulse server` and `pulse completion`. */
import { Argument, Option } from 'commander';
import type { Command } from 'commander';
import type * as O from '../options.js';
import type { WorkerRunOptions } from '../commands/worker.js';
import type { TunnelOptions } from '../commands/tunnel.js';
import type { ServerOptions } from '../commands/server.js';
import { durationFlag, flag, globals, num, str } from './flags.js';
import type { Flags, Registration } from './flags.js';

export const worker: Registration = (program, run) => {
  program
    .command('worker')
    .description('Run the pulse Temporal worker (until SIGTERM/SIGINT).')
    .addOption(new Option('--task-queue <name>', 'task queue (default: pulse-deploy)'))
    .addOption(new Option('--no-gateway', 'do not poll pulse-gateway: for controller hosts that do not hold the gateway file and node state'))
    .addOption(new Option('--metrics <host:port>', 'serve Prometheus metrics on GET /metrics (env PULSE_METRICS_ADDRESS; default off)'))
    // What up/down/watch start beside the embedded server (cli/deploy-client/background-worker.ts); not for operators.
    .addOption(new Option('--background', 'serve the running embedded server until it stops or PULSE_WORKER_IDLE_S idle seconds').hideHelp())
    .action(async (o: Flags, cmd: Command) => {
      const opts: WorkerRunOptions = {
        ...globals(cmd),
        taskQueue: str(o, 'taskQueue'),
        gateway: o['gateway'] !== false,
        metrics: str(o, 'metrics'),
        background: flag(o, 'background'),
      };
      await run(() => import('../commands/worker.js'), opts);
    });
};

export const tunnel: Registration = (program, run) => {
  program
    .command('tunnel')
    .description('On the gateway host: keep an ssh tunnel to each node with gatewayTunnel, and its endpoint in the gateway backend file (until SIGTERM/SIGINT).')
    .option('--probe-interval-s <time>', 'how often GET /health goes through each tunnel: seconds, or 5s, 1m (default 5)', durationFlag('--probe-interval-s', 0.1, 3600))
    .action(async (o: Flags, cmd: Command) => {
      const opts: TunnelOptions = { ...globals(cmd), probeIntervalS: num(o, 'probeIntervalS') };
      await run(() => import('../commands/tunnel.js'), opts);
    });
};

export const completion: Registration = (program, run, root) => {
  program
    .command('completion')
    .description('Print the shell completion script (bash or zsh), generated from this command table.')
    .addArgument(new Argument('[shell]', 'bash or zsh').choices(['bash', 'zsh']))
    .addOption(new Option('--list <what>', 'the names the scripts complete: profiles, nodes, or backups (of --node)').hideHelp())
    .addOption(new Option('--node <node>', 'the node whose backups --list backups names').hideHelp())
    .action(async (shell: string | undefined, o: Flags, cmd: Command) => {
      const opts: O.CompletionOptions = { ...globals(cmd), shell, list: str(o, 'list'), node: str(o, 'node'), root };
      await run(() => import('../commands/completion.js'), opts);
    });
};

/** `pulse server status|stop`: the embedded Temporal server and its background worker (cli/commands/server.ts). */
export const server: Registration = (program, run) => {
  const srv = program
    .command('server')
    .description('The embedded Temporal dev server pulse runs when no TEMPORAL_ADDRESS is set, and the background worker beside it: see them, stop them.')
    .exitOverride();
  const load = () => import('../commands/server.js');
  srv.command('status')
    .description('Address, pid, since, Web UI, database and its size; the background worker\'s pid, build, idle exit and log; the open deploys and watchdog schedules that keep it.')
    .option('--json', 'machine-readable output')
    .action(async (_o: Flags, cmd: Command) => {
      await run(load, { ...globals(cmd), verb: 'status', force: false } satisfies ServerOptions);
    });
  srv.command('stop')
    .description('Stop the background worker, then the embedded server. Refused while a deploy is open or a watchdog schedule exists (a deploy pauses, durable, and resumes when pulse next starts the server; a watchdog stops checking) unless --force.')
    .option('--force', 'stop even while a deploy is open or a watchdog schedule exists')
    .option('--json', 'machine-readable output')
    .action(async (o: Flags, cmd: Command) => {
      await run(load, { ...globals(cmd), verb: 'stop', force: flag(o, 'force') } satisfies ServerOptions);
    });
};
