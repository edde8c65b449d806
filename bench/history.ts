/**
 * History size: the protobuf-encoded workflow history of one full up (`best --restart`) and one same-identity up on
 * a simulated node, as the Temporal server stores and replays it, with the bytes per event type (the largest first).
 * test/engine/history-size.test.ts bounds the full up's figure; this row puts it beside the other issue 17 figures.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/history.js (results: bench/results/history.json)
 */
import { bytesByEventType, encodedBytes } from '../test/helpers/history-bytes.js';
import { startStack } from '../test/helpers/stack.js';
import { printTable, round, runMain, writeResult } from './lib.js';

/** Issue 17 (with issue 11): a full up's history at most 16 KB. */
const GOAL_BYTES = 16 * 1024;

async function main(): Promise<void> {
  const stack = await startStack({ nodes: ['simH'], readyDelayMs: 0, memory: { recoverMs: 0 } });
  try {
    const rows = [];
    const parts: Record<string, Record<string, number>> = {};
    for (const [what, restart] of [['full up (best --restart)', true], ['same identity (best)', false]] as const) {
      const handle = await stack.start(stack.planUp('simH', 'best', { restart }), { as: 'cli' });
      const out = await stack.outcome(handle);
      if (out.status !== 'succeeded') throw new Error(`deploy ${out.status}: ${out.error}`);
      const history = await handle.fetchHistory();
      const bytes = encodedBytes(history);
      parts[what] = Object.fromEntries(bytesByEventType(history).map((t) => [t.type, t.bytes]));
      rows.push({ what, bytes, kib: round(bytes / 1024, 1), events: history.events?.length ?? 0, goal: restart ? `<= ${GOAL_BYTES} B` : '-' });
    }
    printTable('workflow history of one up (protobuf-encoded, as the server stores it)', rows);
    const full = rows[0];
    writeResult('history', { goalBytes: GOAL_BYTES, rows, met: full ? full.bytes <= GOAL_BYTES : false, bytesByEventType: parts });
  } finally {
    await stack.stop();
  }
}

runMain(main);
