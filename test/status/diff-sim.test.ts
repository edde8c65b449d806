/**
 * `pulse model diff <profile> --node N` through the CLI against a simulated node over real sshd: the same .env
 * exits 0; changed, removed and added keys show old → new and exit 1; secret lines never show (masked on the
 * node), only counted; a node without a .env has every key unset.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import type { SimNode } from '../sim/index.js';
import type { UpPlan } from '../../runtime/model/index.js';
import { SECRET_KEY, runSimCli, startStatusSim } from './sim-helpers.js';
import type { StatusSim } from './sim-helpers.js';

let s: StatusSim;
let n: SimNode;
const outputs: string[] = [];
const HF = 'hf_simSECRETtoken123';

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await runSimCli(s, args);
  outputs.push(r.stdout, r.stderr);
  return r;
}

describe('pulse model diff on a simulated node', () => {
  before(async () => {
    s = await startStatusSim(2);
    n = s.sim.node('spark2');
    const dry = await cli('model', 'up', 'best', '--node', 'spark2', '--dry-run', '--json');
    assert.equal(dry.code, 0, dry.stderr);
    const plan = JSON.parse(dry.stdout) as UpPlan;
    // The .env as up writes it: the render, then the carried secrets at the end.
    writeFileSync(n.envPath, `${plan.env.text}API_KEY="${SECRET_KEY}"\nHF_TOKEN=${HF}\n`);
  });
  after(async () => {
    for (const o of outputs) {
      assert.ok(!o.includes(SECRET_KEY), 'the API key never reaches any output');
      assert.ok(!o.includes(HF), 'the HF token never reaches any output');
    }
    await s?.stop();
  });

  test('the running .env of the same profile: exit 0, same, secrets counted only', async () => {
    const r = await cli('model', 'diff', 'best', '--node', 'spark2');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^diff best → spark2: .*\.env \(running profile best, rendered \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/m);
    assert.match(r.stdout, /^same: the running \.env has every value of best; 2 secret line\(s\) \(API_KEY\/HF_TOKEN\) not shown/m);
  });

  test('a changed, a removed and an added key: old → new, exit 1; --json gives the same differences', async () => {
    const text = readFileSync(n.envPath, 'utf8')
      .replace(/^MAX_MODEL_LEN=.*$/m, 'MAX_MODEL_LEN="131072"')
      .replace(/^MTP_K=.*\n/m, '')
      .replace(/^API_KEY=/m, 'EXTRA_LOG="debug"\nAPI_KEY=');
    writeFileSync(n.envPath, text);
    const r = await cli('model', 'diff', 'best', '--node', 'spark2');
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^ {2}MAX_MODEL_LEN +131072 → 524288$/m);
    assert.match(r.stdout, /^ {2}MTP_K +\(unset\) → 6$/m);
    assert.match(r.stdout, /^ {2}EXTRA_LOG +debug → \(unset\)$/m);
    assert.match(r.stdout, /^3 key\(s\) differ; 2 secret line/m);
    const j = await cli('model', 'diff', 'best', '--node', 'spark2', '--json');
    assert.equal(j.code, 1);
    const report = JSON.parse(j.stdout) as { same: boolean; differences: { key: string; old: string | null; new: string | null }[] };
    assert.equal(report.same, false);
    assert.deepEqual(report.differences, [
      { key: 'MAX_MODEL_LEN', old: '131072', new: '524288' },
      { key: 'MTP_K', old: null, new: '6' },
      { key: 'EXTRA_LOG', old: 'debug', new: null },
    ]);
  });

  test('another profile differs; no .env on the node: every key unset; an unknown profile is config (3)', async () => {
    const other = await cli('model', 'diff', 'datagen', '--node', 'spark2');
    assert.equal(other.code, 1, other.stderr);
    assert.match(other.stdout, /running profile best/);
    // EXTRA_DOCKER_ARGS pair by pair: what best has that datagen drops, not one long string each side (issue 30 item 12)
    assert.match(other.stdout, /^ {2}EXTRA_DOCKER_ARGS -e VLLM_MTP_DRAFT_FP8 +-e VLLM_MTP_DRAFT_FP8=1 → \(unset\)$/m);
    assert.match(other.stdout, /^ {2}EXTRA_DOCKER_ARGS -v \/root\/\.cache\/huggingface\/mtp-shard-r2\n {4}- -v \S+:\/root\/\.cache\/huggingface\/mtp-shard-r2:ro\n {4}\+ \(unset\)$/m);
    assert.doesNotMatch(other.stdout, /^ {2}EXTRA_DOCKER_ARGS {2,}-e/m, "not the whole string");
    const none = await cli('model', 'diff', 'best', '--node', 'spark1');
    assert.equal(none.code, 1, none.stderr);
    assert.match(none.stdout, /\(no \.env there\)/);
    assert.match(none.stdout, /^ {2}MODEL +\(unset\) → /m);
    const bad = await cli('model', 'diff', 'bets', '--node', 'spark2');
    assert.equal(bad.code, 3, bad.stderr);
    assert.match(bad.stderr, /did you mean best/);
  });
});
