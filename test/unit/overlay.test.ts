/** Overlays: reading docker-args.txt, overlay-sha256, and the mount conflict rules with and without --overlay-wins. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseNodesConfig } from '../../runtime/config/nodes.js';
import { parseOverlayArgs, readOverlay, type Overlay } from '../../runtime/config/overlay.js';
import { parseProfile } from '../../runtime/config/profile.js';
import { isPulseError } from '../../runtime/errors.js';
import { renderEnv } from '../../runtime/plan/render.js';
import { REPO_ROOT } from '../helpers/paths.js';

const fixtures = path.join(REPO_ROOT, 'test/fixtures');
const cfg = parseNodesConfig(readFileSync(path.join(fixtures, 'nodes/fleet.json'), 'utf8'), 'fleet.json');
const node = cfg.nodes['spark2']!;
const NOW = new Date('2026-09-23T10:15:00Z');

const PROFILE = '# pulse-recipe: qwen38-flash\nEXTRA_DOCKER_ARGS="\n  -e A=1\n  -v {{mtpShardR2}}:/root/.cache/huggingface/mtp-shard-r2:ro\n"\n';

function render(overlay: Overlay | null, overlayWins: boolean, text = PROFILE) {
  const profile = parseProfile(text, 'p.env');
  return renderEnv({ profile, nodeName: 'spark2', node, recipeName: 'qwen38-flash', recipe: node.recipes['qwen38-flash']!, overlay, overlayWins, now: NOW });
}

function withDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-overlay-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const parseCases: { name: string; text: string; error?: RegExp; pairs?: number }[] = [
  { name: 'one line of pairs', text: '-e A=1 -v /a:/b:ro\n', pairs: 2 },
  { name: 'pairs over lines with comments', text: '# built by hand\n-e A=1\n  # the shard\n-v /a:/b\n\n', pairs: 2 },
  { name: 'a pair split over two lines', text: '-e\nA=1\n', pairs: 1 },
  { name: 'empty', text: '# nothing\n', pairs: 0 },
  { name: 'a relative source', text: '-v a:/b\n', error: /^o\/docker-args\.txt:1: -v a:\/b: SRC must be an absolute path on the node$/ },
  { name: 'a relative target', text: '-v /a:b\n', error: /DST must be an absolute path/ },
  { name: 'another flag', text: '--gpus all\n', error: /only -e NAME=VALUE and -v SRC:DST/ },
  { name: 'a $ in a value', text: '-e A=$HOME\n', error: /contains "\$"/ },
  { name: 'two mounts on one target', text: '-v /a:/t -v /b:/t\n', error: /two mounts on the same target \/t/ },
  { name: 'a secret', text: '-e API_KEY=k\n', error: /-e API_KEY= is not allowed/ },
  { name: 'a bad word on line 4 (after comments and a pair over two lines)', text: '# c\n-e\nA=1\n-v /a:/b&id\n', error: /^o\/docker-args\.txt:4: "-v \/a:\/b&id" contains "&"/ },
];

for (const c of parseCases) {
  test(`overlay docker-args.txt: ${c.name} ${c.error ? 'fails' : 'passes'}`, () => {
    if (c.error) {
      assert.throws(() => parseOverlayArgs(c.text, 'o/docker-args.txt'), (e: unknown) => isPulseError(e) && e.kind === 'config' && c.error!.test(e.message));
    } else {
      assert.equal(parseOverlayArgs(c.text, 'o/docker-args.txt').length, c.pairs);
    }
  });
}

test('readOverlay: overlay-sha256 is sha256(docker-args.txt bytes then manifest.json bytes)', () => {
  withDir((dir) => {
    writeFileSync(path.join(dir, 'docker-args.txt'), '-e A=1\n');
    writeFileSync(path.join(dir, 'manifest.json'), '{"sets":["a"]}\n');
    const o = readOverlay(dir);
    assert.equal(o.sha256, createHash('sha256').update('-e A=1\n{"sets":["a"]}\n').digest('hex'));
    assert.deepEqual(o.manifest, { sets: ['a'] });
    assert.equal(o.dir, dir);
    writeFileSync(path.join(dir, 'manifest.json'), '{"sets":["b"]}\n');
    assert.notEqual(readOverlay(dir).sha256, o.sha256, 'a changed manifest changes the sha');
  });
});

test('readOverlay: a missing file or a bad manifest is a config error naming the file', () => {
  withDir((dir) => {
    assert.throws(() => readOverlay(dir), (e: unknown) => isPulseError(e) && e.kind === 'config' && /docker-args\.txt: not found/.test(e.message));
    writeFileSync(path.join(dir, 'docker-args.txt'), '-e A=1\n');
    assert.throws(() => readOverlay(dir), /manifest\.json: not found/);
    writeFileSync(path.join(dir, 'manifest.json'), '{');
    assert.throws(() => readOverlay(dir), /manifest\.json: not valid JSON/);
  });
});

test('overlay: pairs are appended to EXTRA_DOCKER_ARGS and the header names the overlay and its sha', () => {
  withDir((dir) => {
    writeFileSync(path.join(dir, 'docker-args.txt'), '-e NCCL_DEBUG=INFO -v /srv/extra:/extra\n');
    writeFileSync(path.join(dir, 'manifest.json'), '{}\n');
    const o = readOverlay(dir);
    const r = render(o, false);
    assert.equal(r.values['EXTRA_DOCKER_ARGS'], '-e A=1 -v /srv/shard-r2:/root/.cache/huggingface/mtp-shard-r2:ro -e NCCL_DEBUG=INFO -v /srv/extra:/extra');
    assert.match(r.text, new RegExp(`^# pulse-overlay: ${dir} overlay-sha256=${o.sha256}$`, 'm'));
    assert.equal(r.identity.overlay, `${dir} overlay-sha256=${o.sha256}`);
    assert.deepEqual(r.mounts.at(-1), { src: '/srv/extra', dst: '/extra', mode: null, from: 'overlay' });
    assert.notEqual(r.identity.sha256, render(null, false).identity.sha256);
    // A profile without EXTRA_DOCKER_ARGS gets the key from the overlay.
    assert.equal(render(o, false, '# pulse-recipe: qwen38-flash\nA=1\n').values['EXTRA_DOCKER_ARGS'], '-e NCCL_DEBUG=INFO -v /srv/extra:/extra');
  });
});

test('overlay: a mount on a profile mount target is an error without --overlay-wins', () => {
  const o = readOverlay(path.join(fixtures, 'overlays/wins'));
  assert.throws(
    () => render(o, false),
    (e: unknown) =>
      isPulseError(e) &&
      e.kind === 'config' &&
      /docker-args\.txt: the overlay mounts \/root\/\.cache\/huggingface\/mtp-shard-r2, which the profile mounts too/.test(e.message) &&
      /--overlay-wins/.test(e.hint ?? ''),
  );
});

test('overlay: with --overlay-wins the overlay mount replaces the profile mount and the plan shows it', () => {
  const o = readOverlay(path.join(fixtures, 'overlays/wins'));
  const r = render(o, true);
  assert.deepEqual(r.replacements, [
    'overlay mount /srv/shard-r3:/root/.cache/huggingface/mtp-shard-r2 replaces profile mount /srv/shard-r2:/root/.cache/huggingface/mtp-shard-r2',
  ]);
  assert.equal(r.values['EXTRA_DOCKER_ARGS'], '-e A=1 -e NCCL_DEBUG=INFO -v /srv/shard-r3:/root/.cache/huggingface/mtp-shard-r2:ro');
  assert.deepEqual(
    r.mounts.filter((m) => m.dst.endsWith('mtp-shard-r2')),
    [{ src: '/srv/shard-r3', dst: '/root/.cache/huggingface/mtp-shard-r2', mode: 'ro', from: 'overlay' }],
  );
});

test('overlay: a mount on a target the recipe mounts itself is an error, also with --overlay-wins', () => {
  const o = readOverlay(path.join(fixtures, 'overlays/recipe-target'));
  for (const wins of [false, true]) {
    assert.throws(
      () => render(o, wins),
      (e: unknown) => isPulseError(e) && /a mount on \/opt\/vllm\/vllm\/model_executor\/models\/qwen3_next_mtp\.py is not allowed: the recipe mounts that path itself/.test(e.message),
    );
  }
});

test('readOverlay: a folder path with a character outside the word rule is refused before reading', () => {
  assert.throws(() => readOverlay('/tmp/my overlay'), (e: unknown) => isPulseError(e) && e.kind === 'config' && /the folder path contains white space/.test(e.message));
  assert.throws(() => readOverlay('/tmp/$x'), /the folder path contains "\$"/);
});
