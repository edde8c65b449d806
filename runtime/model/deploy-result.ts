/** What an up or down returns (and, on failure, carries in its ApplicationFailure's details[0]). */
import type { NodeStateKind } from './node-state.js';

export interface DeployResult {
  ok: boolean;
  node: string;
  action: 'up' | 'down';
  profile: string | null;
  /** 'full', 'same-identity' (steps 1,7,8,9), 'down'. */
  mode: 'full' | 'same-identity' | 'down';
  /** The node after the deploy; 'unchanged': it ended before its stop step and before preflight saw the container,
   * so pulse changed nothing there and does not know whether it serves (the CLI then looks: cli/live-state.ts). */
  state: NodeStateKind | 'unchanged';
  backupPath: string | null;
  rollbackCommand: string | null;
  error: string | null;
  warnings: string[];
  clientNotes: string[];
  steps: { step: string; ok: boolean; ms: number; note?: string }[];
  /** The ApplicationFailure type of the first error (Refused, Timeout, VerifyFailed, Cancelled...), null on success. */
  errorType?: string | null;
  /** Whether the compensation (node marked failed, endpoint disabled) ran. */
  compensated?: boolean;
}
