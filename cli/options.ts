/** Parsed options of each command, as program.ts hands them to the command modules. */
import type { Command } from 'commander';

export interface GlobalOptions {
  /** --nodes FILE or PULSE_NODES; default runtime/nodes.json beside the package. */
  nodes: string | undefined;
  /** --temporal ADDRESS or TEMPORAL_ADDRESS; unset = the embedded dev server. */
  temporal: string | undefined;
  /** --temporal-ui URL or PULSE_TEMPORAL_UI: the configured server's Web UI base, for links. */
  temporalUi: string | undefined;
  verbose: boolean;
  json: boolean;
  /** --quiet (up, down, watch): no step or progress lines, only the result and what went wrong. */
  quiet: boolean;
}

export interface UpOptions extends GlobalOptions {
  profile: string;
  node: string;
  overlay: string | undefined;
  overlayWins: boolean;
  yes: boolean;
  experimental: boolean;
  restart: boolean;
  timeoutS: number | undefined;
  minMemGib: number | undefined;
  dryRun: boolean;
  preflight: boolean;
  detach: boolean;
  /** --auto-rollback: a failure after the stop brings the previous .env back (also nodes.json autoRollback). */
  autoRollback: boolean;
  /** --drain-s N (0: --no-drain); undefined: the worker's nodes.json drainBudgetS. */
  drainS: number | undefined;
}

export interface RollbackOptions extends GlobalOptions {
  node: string;
  /** --to BACKUP: a backup path (or a bare .env.pulse-bak-* name in the node's recipe dir). */
  to: string | undefined;
  yes: boolean;
  force: boolean;
  timeoutS: number | undefined;
  dryRun: boolean;
  detach: boolean;
  /** --list: the node's backups instead of a rollback. */
  list: boolean;
  /** --drain-s N (0: --no-drain); undefined: the worker's nodes.json drainBudgetS. */
  drainS: number | undefined;
}

export interface DownOptions extends GlobalOptions {
  node: string;
  yes: boolean;
  detach: boolean;
  /** --drain-s N (0: --no-drain); undefined: the worker's nodes.json drainBudgetS. */
  drainS: number | undefined;
}

export interface StatusOptions extends GlobalOptions {
  node: string | undefined;
  noHttp: boolean;
  gpuProbe: boolean;
  yes: boolean;
  /** --wide: every node's detail block under the table (--node shows its node's). */
  wide?: boolean;
  /** --watch [interval]: seconds between two rounds; undefined without --watch. */
  watchS?: number;
}

export interface SmokeOptions extends GlobalOptions {
  node: string;
  yes: boolean;
}

export interface NodeOnlyOptions extends GlobalOptions {
  node: string;
}

export interface CancelOptions extends NodeOnlyOptions {
  yes: boolean;
  /** A rollout: cancel the running node too, not only the nodes after it. */
  now?: boolean;
  /** Wait until the deploy and its compensation have ended, then say how it ended. */
  wait?: boolean;
}

export interface HistoryOptions extends GlobalOptions {
  node: string | undefined;
  limit: number;
  /** --since: only deploys started after this ISO time (cli: historySince); null: all. */
  since: string | null;
  /** --failed: only deploys that failed or were rolled back (and the watchdog's downs). */
  failed: boolean;
  /** --wide: each row's UI link (or workflow ID) below it. */
  wide: boolean;
  /** --steps [ID]: one deploy's steps (true: the newest listed); null: the table. */
  steps: string | true | null;
}

export interface WatchOptions extends NodeOnlyOptions {
  /** --timeout: stop following after this many seconds and exit 8 (the deploy goes on); null: to its end. */
  timeoutS: number | null;
}

export interface LogsOptions extends NodeOnlyOptions {
  /** --tail N: the last N lines; null: all of them. */
  tail: number | null;
  follow: boolean;
  /** --deploy: a deploy's start log instead of the container's log. */
  deploy: boolean;
  /** --deploy <start-log>: that start log (a failed start's, which the node state no longer names); null: the last deploy's. */
  deployLog: string | null;
  /** --since: docker logs --since, as `<seconds>s` or a UTC time; null: from the start. */
  since: string | null;
  /** --timestamps: each line with docker's time stamp. */
  timestamps: boolean;
}

export interface DiffOptions extends NodeOnlyOptions {
  profile: string;
  overlay: string | undefined;
  overlayWins: boolean;
}

export interface CompletionOptions extends GlobalOptions {
  shell: string | undefined;
  /** --list profiles|nodes: the names the scripts complete. */
  list: string | undefined;
  /** The whole command table, which the scripts are generated from. */
  root: Command;
  /** --node: whose backups `--list backups` names. */
  node: string | undefined;
}

export type FragmentOptions = GlobalOptions;
export type ProfilesOptions = GlobalOptions;

export interface WorkerOptions extends GlobalOptions {
  taskQueue: string | undefined;
}

/** Every command module exports `run(opts): Promise<number>` (the exit code); errors are thrown as PulseError. */
export type CommandRun<O> = (opts: O) => Promise<number>;
