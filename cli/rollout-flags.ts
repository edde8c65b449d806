/**
 * The rollout's flags on `pulse model up` and `down` (issue 15): `--node a,b` (several nodes, in that order) or
 * `--all` makes the command a rollout (cli/commands/rollout.ts); one node stays a single deploy. Kept out of
 * program.ts: it only adds these options and reads them.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { PulseError } from '../runtime/errors.js';
import type { RolloutRequest } from '../runtime/model/index.js';
import type { GlobalOptions } from './options.js';
import { drainOf } from './program/flags.js';

/** The command's options: the request's flags (runtime/model/rollout.ts says what each means), and the CLI's own. */
export interface RolloutOptions extends GlobalOptions,
  Pick<RolloutRequest, 'action' | 'profile' | 'experimental' | 'restart' | 'autoRollback' | 'allowOutage' | 'maxParallel' | 'timeoutS' | 'minMemGib'> {
  /** --node a,b as given, or 'all' (`nodes` is the global --nodes FILE). */
  targets: string[] | 'all';
  yes: boolean;
  dryRun: boolean;
  detach: boolean;
  /** --drain-s N (0: --no-drain) for each node; null: each node's nodes.json drainBudgetS. */
  drainS: number | null;
}

function wholeNumber(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new InvalidArgumentError(`--max-parallel must be a whole number from 1 to 64, got "${v}"`);
  return n;
}

/** Adds --all, --allow-outage and --max-parallel to up or down (down: also --dry-run, for a rollout only). */
export function addRolloutFlags(cmd: Command, o: { dryRun?: boolean } = {}): Command {
  if (o.dryRun) cmd.option('--dry-run', 'rollout (several nodes or --all): print the plan; run nothing');
  return cmd
    .option('--all', 'a rollout over every node of nodes.json: unprotected nodes first, protected last')
    .option('--allow-outage', 'rollout: let a step leave the model with no enabled endpoint in the gateway backend file')
    .option('--max-parallel <n>', 'rollout: how many nodes go at once (default 1)', wholeNumber);
}

type Flags = Record<string, unknown>;

/** down --dry-run on one node: there is no plan to print but the stop itself, so it is refused rather than run. */
export function refuseSingleDownDryRun(o: Flags): void {
  if (o['dryRun'] === true) throw new PulseError('usage', '--dry-run on down works only for a rollout (--node a,b,... or --all)');
}

/** Whether these flags ask for a rollout: --all, or --node with more than one name. */
export function isRollout(o: Flags): boolean {
  return o['all'] === true || (typeof o['node'] === 'string' && o['node'].includes(','));
}

/** The rollout's options from the command's flags (a single-node flag a rollout cannot take is refused). */
export function rolloutOptions(g: GlobalOptions, action: 'up' | 'down', profile: string | null, o: Flags): RolloutOptions {
  const node = typeof o['node'] === 'string' ? o['node'] : undefined;
  if (o['all'] === true && node !== undefined) throw new PulseError('usage', 'give either --node a,b,... or --all, not both');
  for (const k of ['overlay', 'preflight']) {
    if (o[k] !== undefined && o[k] !== false) throw new PulseError('usage', `--${k} works only with one node, not in a rollout`, { hint: 'run it per node: pulse model up <profile> --node <node> ...' });
  }
  const targets = node === undefined ? 'all' : node.split(',').map((n) => n.trim());
  if (targets !== 'all' && targets.some((n) => n === '')) throw new PulseError('usage', `--node "${node}": an empty node name in the list`);
  const num = (k: string): number | null => (typeof o[k] === 'number' ? o[k] : null);
  return {
    ...g, action, profile, targets,
    yes: o['yes'] === true, experimental: o['experimental'] === true, restart: o['restart'] === true, autoRollback: o['autoRollback'] === true,
    allowOutage: o['allowOutage'] === true, maxParallel: num('maxParallel') ?? 1, timeoutS: num('timeoutS'), minMemGib: num('minMemGib'),
    dryRun: o['dryRun'] === true, detach: o['detach'] === true, drainS: drainOf(o) ?? null,
  };
}
