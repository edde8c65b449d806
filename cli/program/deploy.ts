/** The verbs that change a node through a durable deploy: `pulse model up`, `down` and `rollback`. */
import type { Command } from 'commander';
import { PulseError } from '../../runtime/errors.js';
import type * as O from '../options.js';
import { addDrainFlags, drainOf, durationFlag, flag, globals, nodeArg, num, positiveNumber, required, str } from './flags.js';
import type { Flags, Registration } from './flags.js';
import { addRolloutFlags, isRollout, refuseSingleDownDryRun, rolloutOptions } from '../rollout-flags.js';

export const up: Registration = (model, run) => {
  addRolloutFlags(addDrainFlags(model
    .command('up')
    .description('Bring the profile up on the node.')
    .argument('<profile>', 'profile name (runtime/qwen38/profiles/<profile>.env)')
    .option('--node <node>', 'node name from nodes.json (required); a,b,... (in that order) or --all: a rollout, one node after the other', nodeArg)
    .option('--overlay <dir>', 'add the pairs in DIR/docker-args.txt to EXTRA_DOCKER_ARGS')
    .option('--overlay-wins', 'let an overlay mount replace a profile mount on the same path')
    .option('--yes', 'allow a change on a protected node')
    .option('--experimental', 'allow a profile with pulse-status: experimental')
    .option('--restart', 'restart the server also when the node already runs the same .env')
    .option('--timeout-s <time>', 'readiness timeout: seconds, or 45s, 10m, 1h30m (default READY_TIMEOUT_S + readyGraceS)', durationFlag('--timeout-s', 1, 172_800))
    .option('--min-mem-gib <n>', 'memory gate (MemAvailable GiB) for this run', positiveNumber('--min-mem-gib'))
    .option('--dry-run', 'print the rendered .env and the script of each step; run nothing')
    .option('--preflight', 'with --dry-run: also run the read-only checks on the node')
    .option('--detach', 'start the deploy and return; it runs to its end without this terminal (Ctrl-C while following does the same)')
    .option('--auto-rollback', 'if it fails after the stop began, bring the previous .env back up (nodes.json autoRollback)')
    .option('--json', 'machine-readable output')
    .option('--quiet', 'no step or progress lines: only the result, warnings and errors')
    .option('--verbose', 'show the raw @pulse records of the node scripts')))
    .action(async (profile: string, o: Flags, cmd: Command) => {
      if (isRollout(o)) return run(() => import('../commands/rollout.js'), rolloutOptions(globals(cmd), 'up', profile, o));
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
        drainS: drainOf(o),
      };
      if (opts.preflight && !opts.dryRun) throw new PulseError('usage', '--preflight works only with --dry-run');
      await run<O.UpOptions>(() => (opts.dryRun ? import('../commands/dry-run.js') : import('../commands/up.js')), opts);
    });
};

export const down: Registration = (model, run) => {
  addRolloutFlags(addDrainFlags(model
    .command('down')
    .description('Stop the server on the node.')
    .option('--node <node>', 'node name from nodes.json (required); a,b,... (in that order) or --all: a rollout, one node after the other', nodeArg)
    .option('--yes', 'allow a change on a protected node')
    .option('--detach', 'start the deploy and return; it runs to its end without this terminal (Ctrl-C while following does the same)')
    .option('--json', 'machine-readable output')
    .option('--quiet', 'no step or progress lines: only the result, warnings and errors')
    .option('--verbose', 'show the raw @pulse records of the node scripts')), { dryRun: true })
    .action(async (o: Flags, cmd: Command) => {
      if (isRollout(o)) return run(() => import('../commands/rollout.js'), rolloutOptions(globals(cmd), 'down', null, o));
      refuseSingleDownDryRun(o);
      const opts: O.DownOptions = { ...globals(cmd), node: required(o, 'node', cmd), yes: flag(o, 'yes'), detach: flag(o, 'detach'), drainS: drainOf(o) };
      await run(() => import('../commands/down.js'), opts);
    });
};

export const rollback: Registration = (model, run) => {
  addDrainFlags(model
    .command('rollback')
    .description('Bring the node back to the exact bytes of a .env backup (default: the one last known good points to).')
    .option('--node <node>', 'node name from nodes.json (required)', nodeArg)
    .option('--to <backup>', 'the backup to restore (a path, or a .env.pulse-bak-* name in the recipe dir)')
    .option('--yes', 'allow a change on a protected node')
    .option('--force', 'restore a backup that pulse did not write or that was edited by hand')
    .option('--timeout-s <time>', 'readiness timeout: seconds, or 45s, 10m, 1h30m (default READY_TIMEOUT_S of the backup + readyGraceS)', durationFlag('--timeout-s', 1, 172_800))
    .option('--dry-run', 'show which backup, its profile and the key difference to the live .env; run nothing')
    .option('--detach', 'start the rollback and return without following it')
    .option('--list', 'list the node\'s .env backups (newest first, with their profiles) and run nothing')
    .option('--json', 'machine-readable output')
    .option('--quiet', 'no step or progress lines: only the result, warnings and errors')
    .option('--verbose', 'show the raw @pulse records of the node scripts'))
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.RollbackOptions = {
        ...globals(cmd), node: required(o, 'node', cmd), to: str(o, 'to'), yes: flag(o, 'yes'), force: flag(o, 'force'),
        timeoutS: num(o, 'timeoutS'), dryRun: flag(o, 'dryRun'), detach: flag(o, 'detach'), list: flag(o, 'list'), drainS: drainOf(o),
      };
      const others = ['to', 'force', 'dryRun', 'detach', 'timeoutS'].filter((k) => o[k] !== undefined && o[k] !== false);
      if (opts.list && others.length > 0) throw new PulseError('usage', '--list only lists the backups: it takes no --to, --force, --dry-run, --detach or --timeout-s');
      await run(() => import('../commands/rollback.js'), opts);
    });
};
