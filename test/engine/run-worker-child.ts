/** `runWorker` in a child process, as `pulse worker` runs it: exit 0 after a graceful stop, 10 when it cannot start. */
import { isPulseError } from '../../runtime/errors.js';
import { runWorker } from '../../worker/main.js';

runWorker({ address: process.env['TEMPORAL_ADDRESS'] as string, stateDir: process.env['PULSE_STATE_DIR'] as string }).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`pulse worker: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(isPulseError(err) && err.kind === 'temporal' ? 10 : 1);
  },
);
