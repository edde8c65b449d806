/**
 * `runWorker` as `pulse worker` uses it, in a child process: a clear message and a non-zero exit when the server
 * cannot be reached; polling, then a graceful exit 0 on SIGTERM; and createPulseWorker refuses a missing bundle
 * (it never bundles at start).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { NativeConnection } from '@temporalio/worker';
import { isPulseError } from '../../runtime/errors.js';
import { createPulseWorker } from '../../worker/main.js';
import { startDevServer } from '../helpers/dev-server.js';
import { freePort } from '../sim/ports.js';
import type { DevServer } from '../helpers/dev-server.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'run-worker-child.js');

function runChild(address: string, stateDir: string, onStderr?: (all: string, kill: (s: NodeJS.Signals) => void) => void): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD], { env: { ...process.env, TEMPORAL_ADDRESS: address, PULSE_STATE_DIR: stateDir }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      onStderr?.(stderr, (s) => child.kill(s));
    });
    child.on('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, stderr });
    });
  });
}

describe('pulse worker (runWorker)', () => {
  let server: DevServer;
  let stateDir: string;
  before(async () => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'pulse-worker-'));
    server = await startDevServer();
  });
  after(async () => {
    await server?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('exits non-zero with a clear message when the server cannot be reached', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const r = await runChild(address, stateDir);
    assert.equal(r.code, 10);
    assert.match(r.stderr, new RegExp(`cannot reach the Temporal server at ${address}`));
  });

  it('polls, then stops gracefully with exit 0 on SIGTERM', async () => {
    let signalled = false;
    const r = await runChild(server.address, stateDir, (all, kill) => {
      if (!signalled && /polling task queue pulse-deploy/.test(all)) {
        signalled = true;
        kill('SIGTERM');
      }
    });
    assert.equal(signalled, true);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /SIGTERM received: handing the waits back, finishing running steps \(up to \d+s\), then exiting/);
  });

  it('createPulseWorker refuses a missing prebuilt bundle instead of bundling', async () => {
    const connection = await NativeConnection.connect({ address: server.address });
    try {
      const err = await createPulseWorker({ connection, stateDir, bundlePath: path.join(stateDir, 'nope.js') }).catch((e: unknown) => e);
      assert.ok(isPulseError(err));
      assert.match(err.message, /workflow bundle not found/);
    } finally {
      await connection.close();
    }
  });
});
