/** `status --gpu-probe` on one node: runs the node's gpuProbe command (it starts a GPU container). */
import { failureOf } from '../node/outcome.js';
import type { NodeConfig } from '../config/nodes.js';
import type { NodeSession } from '../node/types.js';
import type { GpuProbeStatus } from './types.js';

/** Run the gpuProbe command of `node` over `session`; the caller has already applied the protected-node rule. */
export async function runGpuProbe(session: NodeSession, node: NodeConfig): Promise<GpuProbeStatus> {
  if (!node.gpuProbe) return { ran: false, skipped: 'no gpuProbe command in nodes.json for this node', exitCode: null, output: null };
  const result = await session.run('gpu-probe', { env: { PULSE_GPU_PROBE: node.gpuProbe } });
  const failure = failureOf(result);
  const rec = result.records.filter((r) => r.kind === 'gpu-probe').at(-1);
  if (failure || !rec) return { ran: false, skipped: failure?.message ?? 'the probe script gave no result', exitCode: result.exitCode, output: null };
  const exitCode = typeof rec['exitCode'] === 'number' ? rec['exitCode'] : null;
  const output = typeof rec['output'] === 'string' ? rec['output'] : null;
  return { ran: true, skipped: null, exitCode, output, line: probeLine(output, exitCode) };
}

/** docker's closing advice after every daemon error of a command (28.x: `Run 'docker run --help' for more information`). */
const DOCKER_TRAILER = /^Run '[^']*--help' for more information\.?$/;
const ERROR_WORD = /error|failed|fail:|denied|not found|no such|cannot|could not/i;

/**
 * The one line of the probe's output that says what happened: on a failure the last line that names an error (the
 * docker CLI ends every daemon error with a `Run 'docker run --help'` line, so the last line is never the cause), else
 * the last line with text. null without output.
 */
export function probeLine(output: string | null, exitCode: number | null): string | null {
  const lines = (output ?? '').split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !DOCKER_TRAILER.test(l));
  if (lines.length === 0) return null;
  if (exitCode !== 0) {
    const err = lines.findLast((l) => ERROR_WORD.test(l));
    if (err) return err;
  }
  return lines.at(-1) ?? null;
}
