// Placeholder until its issue lands; the owner replaces this module.
import { PulseError } from '../../runtime/errors.js';

export async function run(_opts: unknown): Promise<number> {
  throw new PulseError('internal', '`worker` is not implemented yet');
}
