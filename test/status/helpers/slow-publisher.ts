/**
 * Child process of the concurrency test: publishes the fragment but stops between reading the states and writing
 * the file until the test creates `goFile` (it creates `insideFile` when it is there). argv: stateDir fleetJson
 * insideFile goFile
 */
import { existsSync, writeFileSync } from 'node:fs';
import { publishFragment } from '../../../runtime/gateway/gateway.js';
import type { FleetEntry } from '../../../runtime/model/index.js';

const [stateDir, fleetJson, insideFile, goFile] = process.argv.slice(2) as [string, string, string, string];
const pause = new Int32Array(new SharedArrayBuffer(4));
await publishFragment(stateDir, JSON.parse(fleetJson) as FleetEntry[], {
  afterRead: () => {
    writeFileSync(insideFile, '');
    // Blocking on purpose: this process holds the state lock (if the lock works) for the whole pause.
    for (let i = 0; i < 6000 && !existsSync(goFile); i++) Atomics.wait(pause, 0, 0, 5);
  },
});
