/** The verbs on the deploy that holds a node: `pulse model watch` and `cancel`. */
import type { Command } from 'commander';
import type * as O from '../options.js';
import { durationFlag, flag, globals, nodeArg, num, required } from './flags.js';
import type { Flags, Registration } from './flags.js';

export const watch: Registration = (model, run) => {
  model
    .command('watch')
    .description('Follow the deploy that holds the node (or the rollout it belongs to).')
    .option('--node <node>', 'node name from nodes.json (required)', nodeArg)
    .option('--quiet', 'no step or progress lines: only the result, warnings and errors')
    .option('--verbose', 'show the raw @pulse records of the node scripts')
    .option('--json', 'machine-readable output: the result as up --json prints it')
    .option('--timeout <time>', 'stop following after this long and exit 8 (the deploy goes on): seconds, or 30m, 1h', durationFlag('--timeout', 1, 172_800))
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.WatchOptions = { ...globals(cmd), node: required(o, 'node', cmd), timeoutS: num(o, 'timeout') ?? null };
      await run(() => import('../commands/watch.js'), opts);
    });
};

export const cancel: Registration = (model, run) => {
  model
    .command('cancel')
    .description('Cancel the deploy that holds the node; it then marks the node failed. In a rollout: stop after the current node (--now: at once). A protected node needs --yes.')
    .option('--node <node>', 'node name from nodes.json (required)', nodeArg)
    .option('--yes', 'allow the cancel on a protected node (its compensation changes the live node\'s state and endpoint)')
    .option('--now', 'a rollout: cancel the node that runs too (it compensates); without it the rollout stops after that node')
    .option('--wait', 'wait until the deploy and its compensation (a rollout: it and its current node) have ended, then say how it ended (exit 0 when it ended cancelled or stopped)')
    .action(async (o: Flags, cmd: Command) => {
      const opts: O.CancelOptions = { ...globals(cmd), node: required(o, 'node', cmd), yes: flag(o, 'yes'), now: flag(o, 'now'), wait: flag(o, 'wait') };
      await run(() => import('../commands/cancel.js'), opts);
    });
};
