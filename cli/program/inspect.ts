/** The verbs that read (or only re-render) and never start a deploy: profiles, status, smoke, fragment, diff, logs, history. */
import type { Command } from 'commander';
import type * as O from '../options.js';
import { durationFlag, flag, globals, historySince, logsSince, nodeArg, num, positiveNumber, required, str, tailLines } from './flags.js';
import { PulseError } from '../../runtime/errors.js';
import type { Flags, Registration } from './flags.js';

export const profiles: Registration = (model, run) => {
  model
    .command('profiles')
    .description('List the profiles and the nodes.')
    .option('--json', 'machine-readable output')
    .action(async (_o, cmd: Command) => run(() => import('../commands/profiles.js'), globals(cmd)));
};

/** `status --watch`'s interval when none is given (s). */
export const STATUS_WATCH_DEFAULT_S = 5;

export const status: Registration = (model, run) => {
  model
    .command('status')
    .description('Show the container, the profile, drift, health, the KV cache size and memory.')
    .option('--node <node>', 'only this node', nodeArg)
    .option('--json', 'machine-readable output')
    .option('--no-http', 'send no request to the server')
    .option('--gpu-probe', 'start a GPU container on the node (runs the gpuProbe command)')
    .option('--yes', 'allow HTTP and the GPU probe on a protected node')
    .option('--verbose', 'show the raw @pulse records of the node scripts')
    .option('--wide', 'every node\'s detail under the table (--node shows its node\'s)')
    .option('--watch [interval]', 'redraw every interval (default 5s; e.g. 2, 10s, 1m) until Ctrl-C', durationFlag('--watch', 1, 3600))
    .action(async (o: Flags, cmd: Command) => {
      const watch = o['watch'];
      const opts: O.StatusOptions = {
        ...globals(cmd),
        node: str(o, 'node'),
        noHttp: o['http'] === false,
        gpuProbe: flag(o, 'gpuProbe'),
        yes: flag(o, 'yes'),
        wide: flag(o, 'wide'),
        watchS: watch === true ? STATUS_WATCH_DEFAULT_S : typeof watch === 'number' ? watch : undefined,
      };
      await run(() => import('../commands/status.js'), opts);
    });
};

export const smoke: Registration = (model, run) => {
  model
    .command('smoke')
    .description('Send one short chat completion on the node. A protected node needs --yes.')
    .option('--node <node>', 'node name from nodes.json (required)', nodeArg)
    .option('--yes', 'allow the request on a protected node')
    .option('--json', 'machine-readable output')
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.SmokeOptions = { ...globals(cmd), node: required(o, 'node', cmd), yes: flag(o, 'yes') };
      await run(() => import('../commands/smoke.js'), opts);
    });
};

export const fragment: Registration = (model, run) => {
  model
    .command('fragment')
    .description('Write the gateway backend file again from the saved state.')
    .option('--json', 'machine-readable output')
    .action(async (_o, cmd: Command) => run(() => import('../commands/fragment.js'), globals(cmd)));
};

export const diff: Registration = (model, run) => {
  model
    .command('diff')
    .description('Show old → new of every key where the profile differs from the node\'s running .env (secrets masked); exit 1 when it differs.')
    .argument('<profile>', 'profile name (runtime/qwen38/profiles/<profile>.env)')
    .option('--node <node>', 'node name from nodes.json (required)', nodeArg)
    .option('--overlay <dir>', 'render with the pairs in DIR/docker-args.txt, as up --overlay would')
    .option('--overlay-wins', 'let an overlay mount replace a profile mount on the same path')
    .option('--json', 'machine-readable output')
    .action(async (profile: string, o: Flags, cmd: Command) => {
      const opts: O.DiffOptions = { ...globals(cmd), profile, node: required(o, 'node', cmd), overlay: str(o, 'overlay'), overlayWins: flag(o, 'overlayWins') };
      await run(() => import('../commands/diff.js'), opts);
    });
};

export const logs: Registration = (model, run) => {
  model
    .command('logs')
    .description('Show the container\'s log on the node (or, with --deploy, the last deploy\'s start log); secrets redacted on the node.')
    .option('--node <node>', 'node name from nodes.json (required)', nodeArg)
    .option('-f, --follow', 'go on printing new lines until Ctrl-C (or until the container stops)')
    .option('--tail <n>', 'only the last N lines ("all": every line)', tailLines, 100)
    .option('--deploy [start-log]', 'a start log (the recipe\'s logs/pulse-up-*.log; default: the last deploy\'s) instead of the container\'s log')
    .option('--since <time>', 'only lines since then: a duration back from now (90, 45s, 10m, 1h30m) or a UTC time (2026-12-04T03:00:00Z)', logsSince)
    .option('--timestamps', 'each line with its time stamp (the container\'s log)')
    .option('--quiet', 'only the log lines: not the line that says what is shown')
    .action(async (o: Flags, cmd: Command) => {
      const tail = o['tail'];
      const opts: O.LogsOptions = {
        ...globals(cmd),
        node: required(o, 'node', cmd),
        tail: typeof tail === 'number' ? tail : null,
        follow: flag(o, 'follow'),
        deploy: o['deploy'] !== undefined && o['deploy'] !== false,
        deployLog: typeof o['deploy'] === 'string' ? o['deploy'] : null,
        since: str(o, 'since') ?? null,
        timestamps: flag(o, 'timestamps'),
      };
      if (opts.deploy && (opts.since !== null || opts.timestamps)) throw new PulseError('usage', '--since and --timestamps read the container\'s log; a start log (--deploy) has its own times in each line');
      await run(() => import('../commands/logs.js'), opts);
    });
};

export const history: Registration = (model, run) => {
  model
    .command('history')
    .description('List past deploys.')
    .option('--node <node>', 'only this node', nodeArg)
    .option('--limit <n>', 'how many', positiveNumber('--limit'), 20)
    .option('--since <time>', 'only deploys started since then: a duration back from now (45m, 2h, 1h30m) or a UTC time', historySince)
    .option('--failed', 'only deploys that failed or were rolled back (and the watchdog\'s downs)')
    .option('--wide', 'each row\'s Web UI link (or workflow ID) below it')
    .option('--steps [id]', 'the steps of one deploy (a workflow ID, or workflowId/runId); no ID: of the newest one listed')
    .option('--json', 'machine-readable output')
    .action(async (o: Flags, cmd: Command) => {
      const steps = o['steps'];
      const opts: O.HistoryOptions = {
        ...globals(cmd), node: str(o, 'node'), limit: num(o, 'limit') ?? 20, since: str(o, 'since') ?? null, failed: flag(o, 'failed'), wide: flag(o, 'wide'),
        steps: steps === true ? true : typeof steps === 'string' ? steps : null,
      };
      await run(() => import('../commands/history.js'), opts);
    });
};
