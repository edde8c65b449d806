/** `pulse model watchdog on|off|list`: the scheduled health watch of a node (cli/commands/watchdog.ts runs it). */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import type { WatchdogOptions } from '../commands/watchdog.js';
import { WATCHDOG_DEFAULTS, WATCHDOG_MAX_EVERY_S, WATCHDOG_MIN_EVERY_S } from '../../runtime/fleet/watchdog.js';
import { durationFlag, flag, globals, nodeArg, num, required } from './flags.js';
import type { Flags, Registration } from './flags.js';

/** `--every 60s`, `5m`, `1h` or plain seconds: whole seconds from the minimum to a day. */
export const everySeconds = durationFlag('--every', WATCHDOG_MIN_EVERY_S, WATCHDOG_MAX_EVERY_S, true);

function wholeNumber(name: string, lo: number, hi: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < lo || n > hi) throw new InvalidArgumentError(`${name} must be a whole number from ${lo} to ${hi}, got "${v}"`);
    return n;
  };
}

export const watchdog: Registration = (model, run) => {
  const wd = model
    .command('watchdog')
    .description('A scheduled health check of a node (a Temporal Schedule): disables its gateway endpoint after N failed checks, and with --heal brings last known good back up.')
    .exitOverride();
  const load = () => import('../commands/watchdog.js');
  wd.command('on')
    .description('Check the node every interval (read-only, as status); turn it on again to change the settings.')
    .option('--node <node>', 'node name from nodes.json (required)', nodeArg)
    .option('--every <time>', `interval, e.g. 60s, 5m (default ${WATCHDOG_DEFAULTS.everyS}s, at least ${WATCHDOG_MIN_EVERY_S}s)`, everySeconds)
    .option('--after <n>', `failed checks in a row before the endpoint is disabled (and a heal); good ones before it is enabled again (default ${WATCHDOG_DEFAULTS.after})`, wholeNumber('--after', 1, 100))
    .option('--heal', 'after N failed checks, bring the node\'s last known good .env back up (the rollback workflow)')
    .option('--heals-per-hour <k>', `at most K heals in any hour, with growing pauses; then healing stops and the node is marked failed (default ${WATCHDOG_DEFAULTS.healsPerHour})`, wholeNumber('--heals-per-hour', 1, 60))
    .option('--yes', 'a protected node: allow the HTTP checks (and, with --heal, the heals)')
    .option('--json', 'machine-readable output')
    .action(async (o: Flags, cmd: Command) => {
      const opts: WatchdogOptions = {
        ...globals(cmd), verb: 'on', node: required(o, 'node', cmd), everyS: num(o, 'every') ?? WATCHDOG_DEFAULTS.everyS,
        after: num(o, 'after') ?? WATCHDOG_DEFAULTS.after, heal: flag(o, 'heal'), healsPerHour: num(o, 'healsPerHour') ?? WATCHDOG_DEFAULTS.healsPerHour, yes: flag(o, 'yes'),
      };
      await run(load, opts);
    });
  wd.command('off')
    .description('Remove the node\'s schedule and its record (the endpoint\'s watchdog reason with it).')
    .option('--node <node>', 'node name from nodes.json (required)', nodeArg)
    .option('--json', 'machine-readable output')
    .action(async (o: Flags, cmd: Command) => {
      await run(load, { ...globals(cmd), verb: 'off', node: required(o, 'node', cmd), everyS: 0, after: 0, heal: false, healsPerHour: 0, yes: false } satisfies WatchdogOptions);
    });
  wd.command('list')
    .description('List the watchdog schedules: node, interval, heal, next run, the last verdict.')
    .option('--json', 'machine-readable output')
    .action(async (_o: Flags, cmd: Command) => {
      await run(load, { ...globals(cmd), verb: 'list', node: '', everyS: 0, after: 0, heal: false, healsPerHour: 0, yes: false } satisfies WatchdogOptions);
    });
};
