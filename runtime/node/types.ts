/**
 * The contract between the controller and a node. Everything pulse does on a node is a named step script sent to
 * `bash -s` on stdin, with its inputs as exported variables (built by quote.ts, one quoting function), and its
 * findings reported as `@pulse {json}` lines on stdout.
 */

import type { NodeTarget } from '../model/index.js';

/** How to reach a node: the model's one definition, named here too since every session is opened with one. */
export type { NodeTarget };

/**
 * Documented exit codes of every node script (runtime/scripts/prelude.sh defines the same numbers).
 * Anything else is a plain script failure.
 */
export const SCRIPT_EXIT = {
  ok: 0,
  /** A safety rule on the node refuses the step (e.g. another vLLM container runs). Not retryable. */
  refused: 10,
  /** The node lacks something the step needs (mount source, recipe file, image). Not retryable. */
  precondition: 11,
  /** A transient problem (docker daemon busy, lock held). Retryable. */
  temporary: 12,
  /** The goal is not reached yet (server not ready, memory not free). Benign; the caller polls again. */
  notReady: 13,
  /** The server answered 401: it wants an API key (vLLM: --api-key or VLLM_API_KEY) the node .env does not give. */
  unauthorized: 14,
  /**
   * The Docker daemon does not answer (stopped, its socket missing, permission denied on it): never read as "no such
   * container" or "image not on the node". prelude.sh pulse_docker_answers decides it after a docker call failed.
   */
  dockerDown: 15,
} as const;

/** One `@pulse {...}` line. `kind` says what it is; the rest is step-specific JSON. */
export interface PulseRecord {
  kind: string;
  [key: string]: unknown;
}

export type StepName =
  | 'preflight'
  | 'mkdir'
  | 'drain'
  | 'stop'
  | 'memory'
  | 'write-env'
  | 'start'
  | 'readiness'
  | 'verify'
  | 'status'
  | 'smoke'
  | 'gpu-probe'
  | 'kill-group'
  | 'lock'
  | 'logs'
  | 'read-backup'
  | 'backups';

/** The one typed value of a remote run. */
export interface RemoteResult {
  node: string;
  step: StepName;
  exitCode: number | null;
  signal: string | null;
  records: PulseRecord[];
  /** Last lines of stderr (never contains secrets: scripts never print them). */
  stderrTail: string;
  /** Raw `@pulse` lines, for --verbose. */
  rawRecords: string[];
  durationMs: number;
}

export interface RunOptions {
  /** Exported into the script as `export KEY='value'` lines, quoted by quote.ts. */
  env?: Record<string, string>;
  /** Aborting kills the script's process group on the node, not only the channel. */
  signal?: AbortSignal;
  /** Called for each record as it arrives (progress, heartbeats). */
  onRecord?: (record: PulseRecord) => void;
  /**
   * Which records go into the result too (default: all). The others go to onRecord only: a followed log runs for
   * hours, and keeping every line would grow without bound.
   */
  keep?: (record: PulseRecord) => boolean;
}

/** A connection to one node, reused by every step of a deploy. */
export interface NodeSession {
  readonly target: NodeTarget;
  run(step: StepName, opts?: RunOptions): Promise<RemoteResult>;
  /**
   * Which link the next run would use, as the files give it now (a pool's links are judged and may be replaced): the
   * same number while it is the same connection. A node lock confirmed over one link says nothing of another host.
   * Absent: the session is one fixed connection.
   */
  link?(): Promise<number>;
  close(): Promise<void>;
}
