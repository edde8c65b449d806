/** overlays/qwen38/build.sh: the files it writes, inode behaviour on rebuilds, unknown names, and that pulse reads them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readOverlay } from '../../runtime/config/overlay.js';
import { REPO_ROOT } from '../helpers/paths.js';

const script = path.join(REPO_ROOT, 'overlays/qwen38/build.sh');
const work = mkdtempSync(path.join(os.tmpdir(), 'pulse-build-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

function build(...args: string[]) {
  return spawnSync('bash', [script, ...args], { encoding: 'utf8' });
}
const ino = (f: string): number => statSync(f).ino;

test('build.sh writes all pairs on one line and a manifest of what was set, from which entry, when', () => {
  const out = path.join(work, 'a');
  const r = build('--out', out, '--set', 'fp8-draft,shard-r3');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readFileSync(path.join(out, 'docker-args.txt'), 'utf8'), '-e VLLM_MTP_DRAFT_FP8=1 -v /srv/models/qwen38/mtp-shard-r3:/root/.cache/huggingface/mtp-shard-r2:ro\n');
  const m = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8')) as { catalog: string; sets: { name: string; pairs: string }[]; builtAt: string };
  assert.equal(m.catalog, 'catalog.tsv');
  assert.deepEqual(m.sets.map((s) => s.name), ['fp8-draft', 'shard-r3']);
  assert.equal(m.sets[0]?.pairs, '-e VLLM_MTP_DRAFT_FP8=1');
  assert.match(m.builtAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const o = readOverlay(out);
  assert.equal(o.pairs.length, 2);
});

test('build.sh: the same input leaves both files alone (same inode, same bytes, same overlay-sha256)', () => {
  const out = path.join(work, 'b');
  assert.equal(build('--out', out, '--set', 'block-drop').status, 0);
  const before = { args: ino(path.join(out, 'docker-args.txt')), man: ino(path.join(out, 'manifest.json')), sha: readOverlay(out).sha256 };
  const r = build('--out', out, '--set', 'block-drop');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /unchanged .*docker-args\.txt/);
  assert.equal(ino(path.join(out, 'docker-args.txt')), before.args);
  assert.equal(ino(path.join(out, 'manifest.json')), before.man);
  assert.equal(readOverlay(out).sha256, before.sha);
});

test('build.sh: a changed input replaces the files with new inodes and a new overlay-sha256', () => {
  const out = path.join(work, 'c');
  assert.equal(build('--out', out, '--set', 'block-drop').status, 0);
  const args = path.join(out, 'docker-args.txt');
  const before = { args: ino(args), man: ino(path.join(out, 'manifest.json')), sha: readOverlay(out).sha256 };
  const r = build('--out', out, '--set', 'block-drop,nccl-debug');
  assert.equal(r.status, 0, r.stderr);
  assert.notEqual(ino(args), before.args);
  assert.notEqual(ino(path.join(out, 'manifest.json')), before.man);
  assert.equal(readFileSync(args, 'utf8'), '-e VLLM_BLOCK_DROP_BACKPORT=1 -e NCCL_DEBUG=INFO\n');
  assert.notEqual(readOverlay(out).sha256, before.sha);
});

test('build.sh: an unknown name is an error that lists the known ones and writes nothing', () => {
  const out = path.join(work, 'd');
  const r = build('--out', out, '--set', 'fp8-draft,nope');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /unknown set "nope"; known sets: fp8-draft, block-drop, index-share, capture-hidden, shard-r3, nccl-debug, triton-autotune-log/);
  assert.throws(() => statSync(out));
});

test('build.sh: missing --set or --out is a usage error', () => {
  assert.notEqual(build('--out', path.join(work, 'e')).status, 0);
  assert.notEqual(build('--set', 'fp8-draft').status, 0);
  assert.notEqual(build('--out', path.join(work, 'e'), '--set', 'fp8-draft,fp8-draft').status, 0);
});
