/** `pulse model fragment` end to end: per-endpoint report, operator steps, --json, and no Temporal SDK or ssh2. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeNodeState } from '../../runtime/state/state.js';
import { nodeState, tempDir } from './fixtures.js';
import { REPO_ROOT } from '../helpers/paths.js';

const deny = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'deny-heavy.js');

function fragment(stateDir: string, nodesFile: string, extra: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', deny, path.join(REPO_ROOT, 'bin/pulse-cli'), '--nodes', nodesFile, 'model', 'fragment', ...extra],
      { env: { ...process.env, PULSE_STATE_DIR: stateDir }, encoding: 'utf8' }, (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
  });
}

/** The example nodes.json: spark1 local (gateway host), spark2 ssh with a loopback BIND. */
function nodesFile(dir: string): string {
  const file = path.join(dir, 'nodes.json');
  writeFileSync(file, readFileSync(path.join(REPO_ROOT, 'runtime/nodes.example.json'), 'utf8').replace('"./nodes.schema.json"', '"x"'));
  return file;
}

test('fragment reports each endpoint and why, the three operator steps, and loads no Temporal SDK or ssh2', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const state = path.join(dir, 'state');
    const nodes = nodesFile(dir);
    const first = await fragment(state, nodes);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /gateway backend file: .*gateway-backends\.json \(rewritten\)/);
    assert.match(first.stdout, /spark1 +enabled +\(new\)/);
    assert.match(first.stdout, /spark2 +disabled +\(new\) +http:\/\/127\.0\.0\.1:18002\/v1 +no tunnel runs: start `pulse tunnel`/);
    assert.match(first.stdout, /PULSE_GATEWAY_CONFIG=.*gateway-backends\.json \(or start it with --config /);
    assert.match(first.stdout, /Unset PULSE_QWEN_BACKENDS.*~\/\.config\/pulse\/qwen38\.env/s);
    assert.match(first.stdout, /systemctl --user restart pulse-qwen38/);

    await writeNodeState(state, nodeState('spark1', { state: 'failed', error: 'verify failed' }));
    const second = await fragment(state, nodes, ['--json']);
    assert.equal(second.code, 0, second.stderr);
    const out = JSON.parse(second.stdout);
    assert.equal(out.changed, true);
    assert.equal(out.steps.length, 3);
    const [s1, s2] = out.endpoints;
    assert.deepEqual([s1.name, s1.enabled, s1.wasEnabled], ['spark1', true, true], 'the fallback keeps the first node enabled');
    assert.match(s1.reason, /kept enabled by the fallback: state failed/);
    assert.match(out.warnings.join('\n'), /spark1 stays enabled/);
    assert.equal(s2.enabled, false);
    const onDisk = JSON.parse(readFileSync(path.join(state, 'gateway-backends.json'), 'utf8'));
    assert.deepEqual(onDisk, out.fragment);

    const third = await fragment(state, nodes);
    assert.match(third.stdout, /\(unchanged, not rewritten\)/);
    // Nothing changed: the manual gateway steps are not printed again (issue 18), in text or --json.
    assert.doesNotMatch(third.stdout, /systemctl|PULSE_GATEWAY_CONFIG|pulse does not do these steps/);
    assert.match(third.stdout, /nothing changed: the gateway needs no restart for this file/);
    assert.deepEqual(JSON.parse((await fragment(state, nodes, ['--json'])).stdout).steps, []);
  } finally {
    cleanup();
  }
});

test('the deny hook itself works: loading ssh2 under it fails', async () => {
  const r = await new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import', deny, '-e', "import('ssh2').then(() => process.exit(0), (e) => { console.error(e.message); process.exit(3); })"],
      { encoding: 'utf8' }, (err, _o, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }));
  });
  assert.equal(r.code, 3);
  assert.match(r.stderr, /local-only command loaded ssh2/);
});
