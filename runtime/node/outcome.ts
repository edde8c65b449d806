/**
 * Turns a RemoteResult's exit code into the one PulseError the rest of pulse understands. Exit codes are the
 * documented SCRIPT_EXIT contract; the message names the node, the step, the meaning and the stderr tail.
 */
import { PulseError } from '../errors.js';
import type { PulseErrorKind } from '../errors.js';
import { SCRIPT_EXIT } from './types.js';
import type { PulseRecord, RemoteResult } from './types.js';

const MEANING: Record<number, { kind: PulseErrorKind; text: string }> = {
  [SCRIPT_EXIT.refused]: { kind: 'refused', text: 'refused by a safety rule on the node' },
  [SCRIPT_EXIT.precondition]: { kind: 'precondition', text: 'precondition failed' },
  // Retryable like unreachable, but the node answered: its own kind, so it never reads as "unreachable".
  [SCRIPT_EXIT.temporary]: { kind: 'temporary', text: 'temporary failure on the node' },
  [SCRIPT_EXIT.notReady]: { kind: 'not-ready', text: 'not ready yet' },
  [SCRIPT_EXIT.unauthorized]: { kind: 'unauthorized', text: 'the server wants an API key that the node .env does not give' },
  [SCRIPT_EXIT.dockerDown]: { kind: 'docker-down', text: 'the Docker daemon on the node does not answer' },
};

/**
 * Human meaning of a script exit code, e.g. `precondition failed`. A documented code is the node scripts' own
 * numbering (SCRIPT_EXIT), which is not pulse's exit-code table (runtime/failures.ts): its number is never shown, only
 * its words; the CLI shows the kind's exit code from the table. Any other code is the shell's status, said as such.
 */
export function exitMeaning(code: number | null, signal: string | null): string {
  if (code === null) return `killed by ${signal ?? 'a signal'}`;
  const m = MEANING[code];
  if (m) return m.text;
  if (code === 127) return 'command not found (shell status 127)';
  return `the script failed (shell status ${code})`;
}

/** The `message` of the last `error` record, which a script emits just before a documented failure exit. */
function lastError(records: PulseRecord[]): string | null {
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i];
    if (r && r.kind === 'error' && typeof r.message === 'string') return r.message;
  }
  return null;
}

/**
 * Whether the step's Docker daemon was silent (prelude.sh pulse_fail_docker_down: its `docker` record says timedOut):
 * it took the call and did not answer within the bound, as a frozen daemon does. Such a failure is final for the step:
 * each retry would wait the bound again with the node's lock held. A daemon that refused at once (stopped, socket
 * missing, restarting) keeps its few attempts.
 */
function daemonSilent(records: PulseRecord[]): boolean {
  return records.some((r) => r.kind === 'docker' && r.timedOut === true);
}

/** The PulseError for a failed run, or null when it exited 0. */
export function failureOf(result: RemoteResult): PulseError | null {
  if (result.exitCode === 0) return null;
  const kind = (result.exitCode !== null && MEANING[result.exitCode]?.kind) || 'script';
  const why = lastError(result.records);
  const tail = result.stderrTail.trim().split('\n').slice(-3).join(' | ');
  const parts = [`${result.node}: step ${result.step}: ${exitMeaning(result.exitCode, result.signal)}`];
  if (why) parts.push(why);
  if (tail && kind === 'script') parts.push(`stderr: ${tail}`);
  return new PulseError(kind, parts.join(': '), { final: kind === 'docker-down' && daemonSilent(result.records) });
}

/** Throw the PulseError of a failed run; return the result otherwise. */
export function ensureOk(result: RemoteResult): RemoteResult {
  const err = failureOf(result);
  if (err) throw err;
  return result;
}
