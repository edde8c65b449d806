/**
 * Child process of the concurrency test: writes its node's state `count` times, publishing the fragment after
 * each write, as an up/down activity does. argv: stateDir node count fleetJson
 */
import { publishFragment } from '../../../runtime/gateway/gateway.js';
import { writeNodeState } from '../../../runtime/state/state.js';
import type { FleetEntry } from '../../../runtime/model/index.js';
import { nodeState } from '../fixtures.js';

const [stateDir, node, countText, fleetJson] = process.argv.slice(2);
const fleet = JSON.parse(fleetJson ?? '[]') as FleetEntry[];
const count = Number(countText);
for (let k = 1; k <= count; k++) {
  // Odd rounds fail, even rounds are up: the last round decides the final endpoint state.
  await writeNodeState(stateDir ?? '', nodeState(node ?? '', { runId: String(k), state: k % 2 ? 'failed' : 'up', error: k % 2 ? `round ${k}` : null }));
  // Hold the window between reading the states and writing the file open for a moment: without the lock, another
  // process's newer state would be overwritten by this stale view.
  await publishFragment(stateDir ?? '', fleet, { afterRead: () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3) });
}
