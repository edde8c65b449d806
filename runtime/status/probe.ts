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
  return {
    ran: true,
    skipped: null,
    exitCode: typeof rec['exitCode'] === 'number' ? rec['exitCode'] : null,
    output: typeof rec['output'] === 'string' ? rec['output'] : null,
  };
}
