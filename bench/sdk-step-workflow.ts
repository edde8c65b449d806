/**
 * The bare workflow of bench/sdk-step.ts: `steps` activities one after the other, each doing nothing. No pulse code:
 * what one step costs the Temporal SDK and server themselves (the workflow task between two activities and the
 * activity's dispatch), on the machine the other benchmarks run on.
 */
import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(i: number): Promise<number> }>({ startToCloseTimeout: '1 minute' });

export async function sdkSteps(steps: number): Promise<number> {
  let sum = 0;
  for (let i = 0; i < steps; i++) sum += await noop(i);
  return sum;
}
