/** The four shipped profiles, rendered for the example nodes: complete key sets and the spec's use of each. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseNodesConfig } from '../../runtime/config/nodes.js';
import { RECIPE_KEYS } from '../../runtime/config/profile-rules.js';
import { loadProfiles } from '../../runtime/config/profiles.js';
import { buildUpPlan } from '../../runtime/plan/plan.js';
import { REPO_ROOT } from '../helpers/paths.js';

const example = path.join(REPO_ROOT, 'runtime/nodes.example.json');
const cfg = parseNodesConfig(readFileSync(example, 'utf8'), example);
const profiles = loadProfiles(path.join(REPO_ROOT, 'runtime/qwen38/profiles'));
const plan = (profile: string, node = 'spark2') =>
  buildUpPlan(cfg, profiles, { profile, node, overlay: null, overlayWins: false, yes: false, restart: false }, new Date('2026-09-23T10:15:00Z'));

/** The proof texts the simulated vLLM logs (docs/ARCHITECTURE.md), by the container env var or mount that causes them. */
const SIM_PROOFS: Record<string, string> = {
  VLLM_MTP_DRAFT_FP8: 'MTP draft head: FP8 rowwise copy engaged',
  VLLM_BLOCK_DROP_BACKPORT: 'block-drop backport: enabled',
  VLLM_MTP_INDEX_SHARE: 'MTP index share: enabled',
  VLLM_MTP_CAPTURE_HIDDEN: 'MTP hidden-state capture: enabled',
};

function expectedProofs(dockerArgs: string): string[] {
  const out = [...dockerArgs.matchAll(/-e (\w+)=1\b/g)].flatMap((m) => (SIM_PROOFS[m[1] ?? ''] ? [SIM_PROOFS[m[1] ?? '']!] : []));
  if (/:\/\S*\/mtp-shard-r2(:ro|:rw)?( |$)/.test(dockerArgs)) out.push('MTP shard r2: loaded');
  return out;
}

test('shipped: best, datagen, capture, tp2 and nothing else', () => {
  assert.deepEqual([...profiles.keys()], ['best', 'capture', 'datagen', 'tp2']);
});

for (const name of ['best', 'datagen', 'capture']) {
  test(`shipped ${name}: a complete recipe key set, drop_caches relief, runnable, stable`, () => {
    const p = plan(name);
    for (const k of RECIPE_KEYS) assert.ok(k in p.env.values, `${name} lacks ${k}`);
    assert.equal(p.env.values['MEMWATCH_RELIEF'], 'drop_caches');
    assert.equal(p.expect.servedModelName, 'qwen38');
    assert.equal(profiles.get(name)?.runnable, true);
    assert.equal(profiles.get(name)?.status, 'stable');
    assert.deepEqual(p.proofs.slice().sort(), expectedProofs(p.env.values['EXTRA_DOCKER_ARGS'] ?? '').sort(), 'every proof is a text the simulator logs for this profile');
  });
}

test('shipped best: K=6, FP8 draft head, block-drop, index share, r2 shard, 524288, triton cache mkdir', () => {
  const p = plan('best');
  assert.equal(p.env.values['MTP_K'], '6');
  assert.equal(p.expect.maxModelLen, 524288);
  const args = p.env.values['EXTRA_DOCKER_ARGS'] ?? '';
  for (const e of ['-e VLLM_MTP_DRAFT_FP8=1', '-e VLLM_BLOCK_DROP_BACKPORT=1', '-e VLLM_MTP_INDEX_SHARE=1']) assert.ok(args.includes(e), e);
  assert.ok(args.includes('-v /srv/models/qwen38/mtp-shard-r2:/root/.cache/huggingface/mtp-shard-r2:ro'));
  assert.ok(args.includes('-v /home/pulse/.cache/pulse/triton-qwen38:/triton-cache'));
  assert.deepEqual(p.mkdirs, ['/home/pulse/.cache/pulse/triton-qwen38']);
  assert.equal(p.proofs.length, 4);
  assert.equal(p.readiness.timeoutS, 1800 + 300);
});

test('shipped datagen: 8 sequences, 262144 context, the stock MTP head (no FP8 copy, no r2 shard)', () => {
  const p = plan('datagen');
  assert.equal(p.env.values['MAX_NUM_SEQS'], '8');
  assert.equal(p.expect.maxModelLen, 262144);
  assert.doesNotMatch(p.env.values['EXTRA_DOCKER_ARGS'] ?? '', /VLLM_MTP_DRAFT_FP8|mtp-shard/);
});

test('shipped capture: hidden-state capture with the client note about cache_salt and X-Request-Id: cap-<row>', () => {
  const p = plan('capture');
  assert.match(p.env.values['EXTRA_DOCKER_ARGS'] ?? '', /-e VLLM_MTP_CAPTURE_HIDDEN=1/);
  assert.equal(p.clientNotes.length, 1);
  assert.match(p.clientNotes[0] ?? '', /unique cache_salt/);
  assert.match(p.clientNotes[0] ?? '', /X-Request-Id: cap-<row>/);
});

test('shipped tp2: render-only, recipe qwen38-dual, renders on spark1 (the head node)', () => {
  assert.equal(profiles.get('tp2')?.runnable, false);
  assert.equal(profiles.get('tp2')?.recipe, 'qwen38-dual');
  const p = plan('tp2', 'spark1');
  assert.equal(p.recipe.name, 'qwen38-dual');
  assert.equal(p.env.values['TENSOR_PARALLEL_SIZE'], '2');
});
