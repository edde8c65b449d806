/**
 * The command table: `pulse model <verb>`, `pulse worker`, `pulse tunnel`, `pulse server` and `pulse completion`. Each verb is one
 * registration in cli/program/ (its options, how its flags become its options, its lazily imported module), so
 * local-only commands (profiles, --dry-run, fragment) never load the Temporal SDK or ssh2 and start fast. A new verb
 * is a new registration (in the group module it belongs to, or its own) and one entry below, in help order.
 */
import { Command } from 'commander';
import { teach, version } from './help.js';
import type { Registration, RunLazy } from './program/flags.js';
import { down, rollback, up } from './program/deploy.js';
import { cancel, watch } from './program/follow.js';
import { diff, fragment, history, logs, profiles, smoke, status } from './program/inspect.js';
import { completion, server, tunnel, worker } from './program/services.js';
import { watchdog } from './program/watchdog.js';

/** `pulse model <verb>`, in the order help lists them. */
const MODEL_VERBS: Registration[] = [profiles, up, down, rollback, status, smoke, fragment, watch, cancel, diff, logs, history, watchdog];
/** `pulse <verb>` beside `model`. */
const ROOT_VERBS: Registration[] = [worker, tunnel, server, completion];

/** Receives the exit code of the command that ran (main's, passed to buildProgram). */
export type ExitSink = (code: number) => void;

export function buildProgram(exit: ExitSink): Command {
  const run: RunLazy = async (load, opts) => exit(await (await load()).run(opts));

  const program = new Command('pulse')
    .description('Bring measured vLLM serving profiles up and down on DGX Spark nodes, as durable Temporal workflows')
    .option('--nodes <file>', 'nodes.json to use (default: runtime/nodes.json, or $PULSE_NODES)')
    .option('--temporal <address>', 'Temporal frontend host:port (default: $TEMPORAL_ADDRESS, else the embedded dev server)')
    .option('--temporal-ui <url>', 'base URL of that server\'s Web UI, for the printed links (default: $PULSE_TEMPORAL_UI)')
    .version(version(), '--version', 'print pulse\'s version')
    .exitOverride();

  const model = program.command('model').description('profiles, deploys and status of the qwen38 server').exitOverride();
  for (const register of MODEL_VERBS) register(model, run, program);
  for (const register of ROOT_VERBS) register(program, run, program);

  teach(program);
  return program;
}
