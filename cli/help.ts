/**
 * What `--help` teaches beyond commander's option list: examples for each command, the exit codes (from the one
 * failure table) and the environment variables; and one error style for commander's own errors (`pulse: …`, a
 * did-you-mean, then where the usage is), the same as every other error of pulse.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { exitCodeLines } from '../runtime/failures.js';

/** Examples by command path (`model up`), printed under the options. */
const EXAMPLES: Record<string, string[]> = {
  '': ['pulse model profiles', 'pulse model up best --node spark2', 'pulse model status', 'pulse help model up'],
  model: ['pulse model up best --node spark2', 'pulse model status --node spark2', 'pulse model history --node spark2'],
  'model profiles': ['pulse model profiles', 'pulse model profiles --json'],
  'model up': [
    'pulse model up best --node spark2              # deploy and follow it live',
    'pulse model up best --node spark2 --dry-run    # the steps; runs nothing',
    'pulse model up best --node spark2 --dry-run --preflight',
    'pulse model up datagen --node spark1 --yes     # spark1 is protected',
    'pulse model up best --node spark2 --detach     # runs on without this terminal',
    'pulse model up best --node spark2,spark1 --yes # a rollout, a gate after each',
    'pulse model up best --all --yes --dry-run      # the rollout plan: who serves',
  ],
  'model down': ['pulse model down --node spark2', 'pulse model down --node spark1 --yes', 'pulse model down --node spark2,spark3 --dry-run'],
  'model status': ['pulse model status', 'pulse model status --node spark2 --json', 'pulse model status --no-http'],
  'model smoke': ['pulse model smoke --node spark2', 'pulse model smoke --node spark1 --yes'],
  'model fragment': ['pulse model fragment'],
  'model watch': ['pulse model watch --node spark2'],
  'model cancel': ['pulse model cancel --node spark2', 'pulse model cancel --node spark1 --yes', 'pulse model cancel --node spark2 --now   # in a rollout: the running node too'],
  'model rollback': [
    'pulse model rollback --node spark2 --dry-run   # which backup, why, its diff',
    'pulse model rollback --node spark2',
    'pulse model rollback --node spark2 --to .env.pulse-bak-20260923T101500Z',
  ],
  'model watchdog': ['pulse model watchdog on --node spark2 --every 60s', 'pulse model watchdog list', 'pulse model watchdog off --node spark2'],
  'model watchdog on': ['pulse model watchdog on --node spark2 --every 60s --after 3', 'pulse model watchdog on --node spark2 --heal   # 3 failures: last good back'],
  'model watchdog off': ['pulse model watchdog off --node spark2'],
  'model watchdog list': ['pulse model watchdog list', 'pulse model watchdog list --json'],
  'model history': ['pulse model history', 'pulse model history --node spark2 --limit 5 --json'],
  'model diff': ['pulse model diff best --node spark2   # exit 1 when the running .env differs'],
  'model logs': ['pulse model logs --node spark2 --tail 50', 'pulse model logs --node spark2 -f', 'pulse model logs --node spark2 --deploy'],
  completion: ['pulse completion bash > ~/.local/share/bash-completion/completions/pulse', 'pulse completion zsh > "${fpath[1]}/_pulse"'],
  worker: ['pulse worker', 'pulse worker --metrics 127.0.0.1:9464', 'pulse worker --no-gateway'],
  tunnel: ['pulse tunnel   # on the gateway host (deploy/systemd/pulse-tunnel.service)'],
  server: ['pulse server status', 'pulse server stop', 'pulse server stop --force   # even with a deploy open (it pauses)'],
  'server status': ['pulse server status', 'pulse server status --json'],
  'server stop': [
    'pulse server stop           # refused while a deploy or a watchdog is on',
    'pulse server stop --force   # a deploy pauses, resumes with the next server',
  ],
};

/**
 * One line each in a parent's command list (commander's summary; a command's own --help keeps its description), so
 * `pulse model --help` fits 80x24 with its commands first.
 */
const SUMMARIES: Record<string, string> = {
  'model rollback': 'Restore the exact bytes of a .env backup.',
  'model status': 'Container, profile, drift and health of the nodes.',
  'model smoke': 'Send one short chat completion on the node.',
  'model fragment': 'Write the gateway backend file again.',
  'model watch': 'Follow the deploy or rollout that holds the node.',
  'model cancel': 'Cancel the deploy that holds the node.',
  'model diff': 'Where a profile differs from the running .env.',
  'model logs': 'The container\'s log (or the last start log).',
  'model watchdog': 'A scheduled health check of a node.',
  worker: 'Run the worker that executes deploys.',
  tunnel: 'Keep the gateway\'s ssh tunnels to the nodes.',
  server: 'See or stop the embedded Temporal server and its worker.',
  'server status': 'The embedded server, its worker and what keeps them.',
  'server stop': 'Stop the background worker and the embedded server.',
  completion: 'Print the shell completion script.',
};

const ENVIRONMENT: [string, string][] = [
  ['PULSE_NODES', 'nodes.json to use (like --nodes)'],
  ['PULSE_PROFILES_DIR', 'the profiles folder (default runtime/qwen38/profiles)'],
  ['PULSE_STATE_DIR', 'node state and gateway file (default $XDG_STATE_HOME/pulse/runtime)'],
  ['PULSE_SSH_CONFIG', 'the ssh config that names the nodes\' ssh targets'],
  ['PULSE_STATUS_TIMEOUT_S', 'how long status waits for one node (default 45)'],
  ['TEMPORAL_ADDRESS', 'a Temporal server you run (like --temporal); unset: the embedded one'],
  ['TEMPORAL_NAMESPACE', 'that server\'s namespace (default: default)'],
  ['TEMPORAL_API_KEY', 'that server\'s API key'],
  ['TEMPORAL_TLS...', 'that server\'s TLS (docs/PRODUCTION.md)'],
  ['PULSE_TEMPORAL_UI', 'that server\'s Web UI base URL, for links (like --temporal-ui)'],
  ['PULSE_TEMPORAL_PORT', 'gRPC port of the embedded dev server (default 7233)'],
  ['PULSE_METRICS_ADDRESS', 'pulse worker: serve Prometheus metrics there (like --metrics)'],
  ['PULSE_WORKER_IDLE_S', 'the embedded server\'s background worker exits after this many idle seconds (default 300; never while a watchdog schedule exists)'],
  ['NO_COLOR', 'no colour in the output'],
];

/** The exit codes of every command, from runtime/failures.ts. */
export function exitCodesText(): string {
  return `Exit codes:\n${exitCodeLines().map((l) => `  ${l}`).join('\n')}\n`;
}

export function environmentText(): string {
  const w = Math.max(...ENVIRONMENT.map(([n]) => n.length));
  return `Environment:\n${ENVIRONMENT.map(([n, what]) => `  ${n.padEnd(w)}  ${what}`).join('\n')}\n`;
}

/** pulse's version, from its package.json (dist/cli/ is two levels below the package root). */
export function version(): string {
  const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../package.json');
  const v = (JSON.parse(readFileSync(pkg, 'utf8')) as { version?: unknown }).version;
  return typeof v === 'string' ? v : 'unknown';
}

/** The git commit of this checkout (short), or null when pulse does not run from one. */
function commitOf(root: string): string | null {
  const r = spawnSync('git', ['-C', root, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8', timeout: 5000 });
  return r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : null;
}

/** `version` of an installed package, or null. */
function packageVersionOf(root: string, name: string): string | null {
  try {
    return (JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

/**
 * `pulse --version`: the release and what an operator reporting a problem is asked for next (issue 30 item 12): the
 * commit, the workflow build id (what the worker polls as, docs/PRODUCTION.md), the Temporal SDK, and the embedded
 * server's pinned CLI with the server and UI versions it carries. Only this command spawns anything for it.
 */
export function versionText(info: { buildId: string | null; temporalBin: string }): string {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const commit = commitOf(root);
  const parts = [commit ? `commit ${commit}` : null, info.buildId ? `workflow build ${info.buildId}` : null].filter((x) => x !== null);
  const lines = [`pulse ${version()}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`];
  lines.push(`Temporal TypeScript SDK ${packageVersionOf(root, '@temporalio/client') ?? 'unknown'}`);
  const t = spawnSync(info.temporalBin, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const said = t.status === 0 ? /version (\S+)(.*)$/m.exec(t.stdout) : null;
  lines.push(said ? `embedded Temporal server: temporal CLI ${said[1]}${(said[2] ?? '').trimEnd()}` : `embedded Temporal server: not installed (${info.temporalBin}; bash scripts/setup.sh)`);
  return `${lines.join('\n')}\n`;
}

/** True when argv asks for pulse's version (`pulse --version`, global options aside) and for no command. */
export function wantsVersion(argv: string[]): boolean {
  return argv[commandIndex(argv)] === undefined && argv.slice(2).includes('--version');
}

/** `model up` for the command `up` under `model` under `pulse`. */
function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * commander's `error: unknown option '--nod'\n(Did you mean --node?)\n` as pulse says it:
 * `pulse: unknown option '--nod'; did you mean --node?` and `  see: pulse model up --help`.
 */
export function restyle(text: string, cmdPath: string): string {
  const lines = text.trim().split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const first = (lines[0] ?? 'bad command line').replace(/^error:\s*/, '');
  const guess = lines.slice(1).map((l) => /^\(Did you mean (.+)\?\)$/.exec(l)?.[1]).find((g) => g !== undefined);
  const more = lines.slice(1).filter((l) => !/^\(Did you mean /.test(l));
  const said = [first, ...more].join('; ') + (guess ? `; did you mean ${guess}?` : '');
  return `pulse: ${said}\n  see: pulse${cmdPath ? ` ${cmdPath}` : ''} --help\n`;
}

/**
 * Help topics beside the commands' help: `pulse help exit-codes`, `pulse help environment`. They are not in every
 * --help, so the commands come first and fit an 80x24 screen (issue 30 item 11).
 */
export const HELP_TOPICS: Record<string, () => string> = {
  'exit-codes': exitCodesText,
  environment: environmentText,
};

/** The footer that points at the topics, under every command's help (it fits 80 columns, as every help line must). */
const TOPICS_LINE = 'Exit codes: pulse help exit-codes · environment: pulse help environment\n';

/** Adds the examples, the pointer to the help topics and the error style to every command. */
export function teach(cmd: Command): void {
  const p = pathOf(cmd);
  cmd.configureOutput({ outputError: (text, write) => write(restyle(text, p)) });
  const summary = SUMMARIES[p];
  if (summary) cmd.summary(summary);
  const examples = EXAMPLES[p];
  const footer: string[] = [];
  if (examples) footer.push(`Examples:\n${examples.map((e) => `  ${e}`).join('\n')}\n`);
  footer.push(TOPICS_LINE);
  cmd.addHelpText('after', `\n${footer.join('\n')}`);
  for (const sub of cmd.commands) teach(sub);
}

/** Global options that take a value: their value is not a command name. */
const VALUE_OPTIONS = new Set(['--nodes', '--temporal', '--temporal-ui']);

/** The help topic `pulse help <topic>` names (exit-codes, environment), or null when argv asks for none. */
export function helpTopic(argv: string[]): string | null {
  const i = commandIndex(argv);
  const topic = argv[i] === 'help' && argv.length === i + 2 ? (argv[i + 1] ?? '') : '';
  return Object.hasOwn(HELP_TOPICS, topic) ? topic : null;
}

/** Where the command words start: after the global options (and their values). */
function commandIndex(argv: string[]): number {
  let i = 2;
  while (i < argv.length && (argv[i] ?? '').startsWith('-')) i += VALUE_OPTIONS.has(argv[i] ?? '') ? 2 : 1;
  return i;
}

/** `pulse help model up` means `pulse model up --help` (commander's help command takes only one name). */
export function helpArgv(argv: string[]): string[] {
  const i = commandIndex(argv);
  if (argv[i] !== 'help') return argv;
  const names = argv.slice(i + 1);
  return names.length === 0 ? argv : [...argv.slice(0, i), ...names, '--help'];
}
