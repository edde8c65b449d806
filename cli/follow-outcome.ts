/** How a followed deploy ended (or that the user detached): what cli/deploy-client/follow-run.ts learns and the printer and exit code read. */
import type { DeployResult } from '../runtime/model/index.js';

export type FollowOutcome =
  | { kind: 'closed'; status: 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed-out'; result: DeployResult | null; error: string | null; errorType: string | null }
  /** From the plan: the command back to what the node ran before (null: none, or a down); a protected node. */
  | { kind: 'detached'; rollbackHint?: string | null; protectedNode?: boolean };
