/**
 * Fuzz: the overlay reader (docker-args.txt over one or more lines, # comments, manifest.json). Every generated
 * overlay is either rejected with one line naming the file, or accepted with pairs that render into a
 * bash-safe EXTRA_DOCKER_ARGS (checked for every case, and by really sourcing a sample).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { loadNodesConfig, loadProfiles, parseOverlayArgs, readOverlay, type Overlay } from '../../runtime/config/index.js';
import { buildUpPlan } from '../../runtime/plan/plan.js';
import { RUNS, SAFE_WORD, assertGoodRejection, assertSourcesVerbatim, assertStaticallySafe, hostile, mixed, scratch } from './gen.js';
import { REPO_ROOT } from '../helpers/paths.js';

const tmp = scratch('pulse-fuzz-overlay-');
after(() => tmp.cleanup());
const config = loadNodesConfig(path.join(REPO_ROOT, 'test/fixtures/nodes/fleet.json'));
const profiles = loadProfiles(path.join(REPO_ROOT, 'runtime/qwen38/profiles'));
const FILE = 'ov/docker-args.txt';

function pairArb(canary: string): fc.Arbitrary<string> {
  const piece = mixed(canary);
  const abs = fc.oneof({ arbitrary: fc.constantFrom('/srv/a', '/srv/b/', '/x', '/triton-cache', '/root/.cache/huggingface', '/opt/vllm/vllm/model_executor/models/qwen3_next_mtp.py'), weight: 6 }, { arbitrary: piece, weight: 2 });
  return fc.oneof(
    fc.tuple(fc.constantFrom('VLLM_A', 'X_1', 'API_KEY', 'HF_TOKEN', 'a-b', ''), piece).map(([n, v]) => `-e ${n}=${v}`),
    fc.tuple(abs, abs, fc.constantFrom('', ':ro', ':rw', ':z', ':ro:ro')).map(([s, d, m]) => `-v ${s}:${d}${m}`),
    fc.constantFrom('-e', '-v', '--privileged', '--network=host', '-it', '--entrypoint=/bin/sh'),
    hostile(canary),
  );
}

function argsTextArb(canary: string): fc.Arbitrary<string> {
  const line = fc.oneof(
    { arbitrary: fc.tuple(fc.array(pairArb(canary), { maxLength: 4 }), fc.constantFrom(' ', '  ', '\t')).map(([p, sep]) => p.join(sep)), weight: 8 },
    { arbitrary: fc.constantFrom('# comment', '   # indented comment', '', '  ', '#-e A=$(id)'), weight: 2 },
  );
  return fc.array(line, { maxLength: 5 }).map((ls) => ls.join('\n'));
}

function assertSafePairs(o: { pairs: Overlay['pairs'] }): void {
  for (const p of o.pairs) {
    const words = p.kind === 'env' ? [p.name, p.value] : [p.src, p.dst];
    for (const w of words) if (w !== '') assert.match(w, SAFE_WORD);
  }
}

function render(overlay: Overlay, overlayWins: boolean) {
  return buildUpPlan(config, profiles, { profile: 'best', node: 'spark2', overlay, overlayWins, yes: false, restart: false }, new Date(0));
}

test(`overlay reader: ${RUNS} generated docker-args.txt texts, each rejected in one line naming the file or rendered safe`, () => {
  let accepted = 0;
  let rendered = 0;
  let sourced = 0;
  fc.assert(
    fc.property(argsTextArb(tmp.canary), fc.boolean(), (text, wins) => {
      let pairs: Overlay['pairs'];
      try {
        pairs = parseOverlayArgs(text, FILE);
      } catch (e) {
        assertGoodRejection(e, /^ov\/docker-args\.txt(:\d+)?: \S/);
        return;
      }
      accepted += 1;
      assertSafePairs({ pairs });
      const overlay: Overlay = { dir: '/srv/overlays/o1', pairs, sha256: 'f'.repeat(64), manifest: {}, argsText: text, manifestText: '{}' };
      let plan;
      try {
        plan = render(overlay, wins);
      } catch (e) {
        // Mount conflicts with the recipe or the profile are refused naming where each side came from.
        assertGoodRejection(e, /(docker-args\.txt|nodes\.spark2\.recipes|best\.env:\d+)/);
        return;
      }
      rendered += 1;
      assertStaticallySafe(plan.env.text, plan.env.values);
      if (rendered % 5 === 1) {
        assertSourcesVerbatim(tmp.dir, tmp.canary, plan.env.text, plan.env.values);
        sourced += 1;
      }
    }),
    { numRuns: RUNS },
  );
  assert.ok(rendered > RUNS / 20, `too few rendered overlays (${rendered})`);
  assert.equal(existsSync(tmp.canary), false);
  console.log(`# overlays: ${RUNS} generated, ${accepted} accepted, ${rendered} rendered, ${sourced} sourced in bash`);
});

test('readOverlay on real folders: bad manifest JSON, missing files and hostile args are one-line errors naming the file', () => {
  let n = 0;
  fc.assert(
    fc.property(argsTextArb(tmp.canary), fc.constantFrom('{}', '{"set":["a"]}', '{', '', 'null', '{"a":"$(id)"}'), fc.boolean(), (text, manifest, withManifest) => {
      const dir = path.join(tmp.dir, `o${n++}`);
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'docker-args.txt'), text);
      if (withManifest) writeFileSync(path.join(dir, 'manifest.json'), manifest);
      try {
        const o = readOverlay(dir);
        assert.equal(o.dir, dir);
        assert.match(o.sha256, /^[0-9a-f]{64}$/);
        assertSafePairs(o);
      } catch (e) {
        assertGoodRejection(e, new RegExp(`^${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(docker-args\\.txt(:\\d+)?|manifest\\.json): \\S`));
      }
    }),
    { numRuns: 500 },
  );
});
