/**
 * `pulse model fragment`: rewrite gateway-backends.json from the saved node states and nodes.json, print what
 * changed per endpoint and, when the file changed, the steps the operator takes (pulse never touches the gateway;
 * a file that did not change needs none, so they are not printed again). Local only: it
 * loads neither the Temporal SDK nor ssh2.
 */
import { loadNodesConfig } from '../../runtime/config/nodes.js';
import { operatorSteps, publishFragment, type EndpointChange, type FragmentResult } from '../../runtime/gateway/gateway.js';
import { resolveNodesPath } from '../../runtime/state/paths.js';
import { fleetOf } from '../../runtime/plan/plan.js';
import { trustedStateDir } from '../../runtime/state/state.js';
import type { FragmentOptions } from '../options.js';

function endpointLine(e: EndpointChange): string {
  const now = e.enabled ? 'enabled' : 'disabled';
  const was = e.wasEnabled === null ? 'new' : e.changed ? `was ${e.wasEnabled ? 'enabled' : 'disabled'}` : 'unchanged';
  const why = e.reason ? `  ${e.reason}` : '';
  return `  ${e.name.padEnd(12)} ${now.padEnd(9)} (${was})  ${e.baseUrl}${why}`;
}

/** The human report of a publish: the file, each endpoint, the warnings and the operator's steps. */
export function fragmentReport(r: FragmentResult): string[] {
  const lines = [`gateway backend file: ${r.path} (${r.changed ? 'rewritten' : 'unchanged, not rewritten'})`];
  lines.push(...r.endpoints.map(endpointLine));
  lines.push(...r.warnings.map((w) => `warning: ${w}`));
  // Unchanged, the gateway already has it (or the steps were printed when it last changed): no steps to repeat.
  if (r.changed) lines.push('', 'The gateway reads this file only when it starts. pulse does not do these steps:', ...operatorSteps(r.path).map((s) => `  ${s}`));
  else lines.push('nothing changed: the gateway needs no restart for this file');
  return lines;
}

/** Rebuild the fragment; exit 0 (a warning, such as the all-disabled fallback, does not fail the command). */
export async function run(opts: FragmentOptions): Promise<number> {
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const result = await publishFragment(trustedStateDir(), fleetOf(config));
  if (opts.json) {
    const { fragment, ...rest } = result;
    process.stdout.write(`${JSON.stringify({ ...rest, fragment, steps: result.changed ? operatorSteps(result.path) : [] }, null, 2)}\n`);
  } else {
    process.stdout.write(`${fragmentReport(result).join('\n')}\n`);
  }
  return 0;
}
