/**
 * The last lines of a failed server's log, for the way out of a failed deploy: the container log's tail (or, when
 * the container is gone, its start log's: start.sh writes the last container lines there when the container exits
 * before it is ready), and a vLLM failure pulse knows by its line. Read-only, through logs.sh, so every line is
 * redacted on the node before it leaves it. The failure block reads it after a deploy closed (cli/failure-block.ts);
 * an up whose auto-rollback will remove the failed container reads it first, into its result (activities/node-steps.ts).
 */
import type { NodeConfig } from '../config/nodes.js';
import type { NodeSession } from '../node/types.js';
import { knownFailure, type KnownFailure } from '../vllm/known-failures.js';
import { readLogs, type LogsRequest, type LogsSource } from './logs.js';

/** How many of the log's last lines the failure block shows. */
export const LOG_LINES = 8;
/** How many it reads to look for a failure pulse knows (runtime/vllm/known-failures.ts): a traceback follows its line. */
const SCAN_LINES = 200;

export interface LogTail {
  source: LogsSource;
  /** The last LOG_LINES lines, oldest first, redacted on the node. */
  lines: string[];
  known: KnownFailure | null;
}

/** Reads the last lines of the container log (`source: 'container'`) or of the start log `deployLog` (`'deploy'`). */
export async function readLogTail(
  session: NodeSession, node: NodeConfig, source: LogsRequest['source'], deployLog: string | null, signal?: AbortSignal,
): Promise<LogTail> {
  const all: string[] = [];
  const sink = { source: () => undefined, line: (l: string) => void all.push(l) };
  const read = await readLogs(session, node, { source, tail: SCAN_LINES, follow: false, deployLog }, sink, signal);
  return { source: read, lines: all.slice(-LOG_LINES), known: knownFailure(all) };
}
