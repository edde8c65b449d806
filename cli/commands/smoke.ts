/**
 * `pulse model smoke --node <node> [--yes]`: one short chat completion through the node's server. Prints the
 * model, latency, tokens, the first line of the reply and of the reasoning, and the finish reason; exit 0 on pass
 * (HTTP 200 with a choice and generated tokens). A protected node is refused without --yes
 * before any connection is made.
 */
import { loadNodesConfig, nodeOf } from '../../runtime/config/nodes.js';
import { FAILURES } from '../../runtime/failures.js';
import { resolveNodesPath } from '../../runtime/state/paths.js';
import { targetOf } from '../../runtime/config/nodes.js';
import { checkSmokeAllowed, runSmoke, type SmokeResult } from '../../runtime/status/smoke.js';
import type { SmokeOptions } from '../options.js';

function report(r: SmokeResult): string {
  const t = r.tokens;
  return [
    `smoke ${r.node}: ${r.ok ? 'PASS' : 'FAIL'}`,
    `  model    ${r.model ?? '?'}`,
    `  latency  ${r.latencyS === null ? '?' : `${Math.round(r.latencyS * 1000)} ms`}  (HTTP ${r.httpStatus ?? 'none'})`,
    `  tokens   prompt ${t.prompt ?? '?'}, completion ${t.completion ?? '?'}, total ${t.total ?? '?'}`,
    `  reply    ${r.reply ?? '(none)'}`,
    ...(r.reasoning ? [`  reasoning ${r.reasoning}`] : []),
    `  finish   ${r.finishReason ?? '?'}${r.finishReason === 'length' ? ' (max_tokens reached)' : ''}`,
    ...(r.error ? [`  error    ${r.error}`] : []),
  ].join('\n');
}

/** Run the smoke test on one node. */
export async function run(opts: SmokeOptions): Promise<number> {
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const node = nodeOf(config, opts.node);
  checkSmokeAllowed(opts.node, node, opts.yes);
  const { openSession } = await import('../../runtime/node/connect.js');
  const session = await openSession(targetOf(opts.node, node));
  try {
    const result = await runSmoke(session, opts.node, node);
    process.stdout.write(opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${report(result)}\n`);
    return result.ok ? 0 : FAILURES.script.exit;
  } finally {
    await session.close().catch(() => undefined);
  }
}
