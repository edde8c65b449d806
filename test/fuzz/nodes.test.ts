/**
 * Fuzz: runtime/nodes.json through the real loader (a file on disk per case). Generated files are near-valid
 * fleets with hostile strings, wrong types, unknown keys, missing keys and broken JSON. Each one is either
 * rejected with one line per problem, each `FILE: json.path: message`, or accepted with every value that can
 * reach a node script made of the spec's safe word characters.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { loadNodesConfig, loadProfiles } from '../../runtime/config/index.js';
import { buildDownPlan, buildUpPlan } from '../../runtime/plan/plan.js';
import { RUNS, SAFE_WORD, assertGoodRejection, assertStaticallySafe, hostile, mixed, scratch } from './gen.js';
import { REPO_ROOT } from '../helpers/paths.js';

const tmp = scratch('pulse-fuzz-nodes-');
after(() => tmp.cleanup());
const FILE = path.join(tmp.dir, 'nodes.json');
const profiles = loadProfiles(path.join(REPO_ROOT, 'runtime/qwen38/profiles'));

function strArbOf(bad: boolean, good: readonly string[]): fc.Arbitrary<unknown> {
  if (!bad) return fc.constantFrom(...good);
  return fc.oneof(
    { arbitrary: fc.constantFrom(...good), weight: 60 },
    { arbitrary: hostile(path.join(tmp.dir, 'CANARY')).map((h) => `${good[0] ?? ''}${h}`), weight: 2 },
    { arbitrary: mixed(path.join(tmp.dir, 'CANARY')), weight: 1 },
    { arbitrary: fc.constantFrom(1, null, true, [], {}, ''), weight: 1 },
  );
}

/** Mostly one of `good`, sometimes one of `bad`. */
function pickOf<T>(mutate: boolean, good: readonly T[], bad: readonly T[]): fc.Arbitrary<T> {
  if (!mutate) return fc.constantFrom(...good);
  return fc.oneof({ arbitrary: fc.constantFrom(...good), weight: 12 }, { arbitrary: fc.constantFrom(...bad), weight: 1 });
}

/** An optional field: mostly present, sometimes absent. */
function opt(arb: fc.Arbitrary<unknown>, absentWeight = 1): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: arb, weight: 8 }, { arbitrary: fc.constant(undefined), weight: absentWeight });
}

/**
 * A generated nodes.json text. With `bad` false every choice is valid (so a good share of files is accepted and
 * reaches the render); with `bad` true each field now and then takes a hostile, mistyped or missing value.
 */
function fileArbOf(bad: boolean): fc.Arbitrary<string> {
  const strArb = (good: readonly string[]) => strArbOf(bad, good);
  const pick = <T>(good: readonly T[], badValues: readonly T[]) => pickOf(bad, good, badValues);
  const recipeArb = fc.record({
    dir: strArb(['/srv/recipes/flash', '/r']),
    start: strArb(['start.sh', '/r/start.sh']),
    stop: strArb(['stop.sh']),
    container: strArb(['vllm-qwen38', 'c.1']),
    dockerArgs: opt(pick<unknown>(['-v /srv/hf:/root/.cache/huggingface -v {{recipeDir}}/mtp.py:/opt/vllm/vllm/model_executor/models/qwen3_next_mtp.py:ro', '-e A=1'], ['-v {{nope}}:/x', '--privileged', '-e A=$(id)', '-v /a:/b;id', '-e A=1\nid', 'a  b']), 2),
    vars: opt(fc.dictionary(pick(['tp2Worker', 'x'], ['recipeDir', 'a b']), strArb(['spark2', '/v'])), 3),
  });

  const hostArb = fc.oneof(
    { arbitrary: strArb(['spark2', 'pulse@spark3', '127.0.0.1']).map((ssh) => ({ host: 'ssh', ssh })), weight: 8 },
    { arbitrary: fc.constant({ host: 'local' }), weight: 4 },
    { arbitrary: fc.constantFrom(...(bad ? [{ host: 'ssh' }, { host: 'local', ssh: 'x' }, { host: 'ftp', ssh: 'x' }, { host: 1 }] : [{ host: 'local' }])), weight: 1 },
  );

  const nodeFieldsArb = fc.record({
    protected: opt(pick<unknown>([true, false], ['yes', 1])),
    env: fc.record({
      HF_HOME: strArb(['/srv/hf', '/h']),
      BIND: strArb(['127.0.0.1', '0.0.0.0']),
      PORT: pick<unknown>(['8000', '8001'], ['70000', '0', 'http', 8000]),
      REQUIRE_IDLE_GPU: opt(strArb(['1', '0'])),
    }),
    vars: opt(fc.dictionary(pick(['tritonCache', 'mtpShardR2', 'captureDir'], ['recipeDir', '1x', 'a-b']), strArb(['/srv/triton', '/srv/shard-r2']))),
    gatewayUrl: pick<unknown>(['http://127.0.0.1:8000/v1', 'https://203.0.113.2:8000/v1'], ['ftp://x', 'not a url', 'http://a b']),
    gpuProbe: opt(strArb(['nvidia-smi -L', 'docker run --rm --gpus all img nvidia-smi -L']), 2),
    minMemAvailableGiB: opt(pick<unknown>([90, 100.5], [0, -1, '100']), 3),
    recipes: fc.dictionary(pick(['qwen38-flash', 'qwen38-dual'], ['bad name', '-x']), recipeArb, { maxKeys: 2 }),
    extra: bad ? opt(fc.constantFrom('typo'), 20) : fc.constant(undefined),
  });
  const nodeArb = fc.tuple(hostArb, nodeFieldsArb).map(([h, n]) => ({ ...h, ...n }));

  return fc
    .tuple(
      fc.record({
        $schema: opt(fc.constant('./nodes.schema.json'), 2),
        gatewayNode: opt(strArb(['spark1', 'nowhere']), 2),
        minMemAvailableGiB: opt(pick<unknown>([100], [0, 'x']), 3),
        memTimeoutS: opt(pick<unknown>([600], [1.5, -3]), 3),
        readyGraceS: opt(pick<unknown>([300, 0], [-1]), 3),
        nodes: fc.dictionary(pick(['spark1', 'spark2', 'spark3'], ['a b', '', '-n', 'x;y']), nodeArb, { minKeys: 1, maxKeys: 3 }),
        unknownTop: bad ? opt(fc.constant(1), 20) : fc.constant(undefined),
      }),
      fc.nat(30),
    )
    .map(([obj, cut]) => {
      const clean = JSON.parse(JSON.stringify(obj, (k, v: unknown) => (k === 'extra' ? undefined : v))) as Record<string, unknown>;
      const text = JSON.stringify(obj.unknownTop === undefined ? clean : obj, null, 1);
      // Now and then a broken file: truncated JSON.
      return bad && cut === 0 ? text.slice(0, Math.max(0, text.length - 7)) : text;
    });
}

const fileArb = fc.oneof({ arbitrary: fileArbOf(false), weight: 1 }, { arbitrary: fileArbOf(true), weight: 3 });

/** The JSON path prefixes the loader may name. */
const WHERE = /^\/.*\/nodes\.json: (\(top level\)|not valid JSON|nodes|gatewayNode|minMemAvailableGiB|memTimeoutS|readyGraceS|\$schema|unknownTop)[^\n]*: \S|^\/.*\/nodes\.json: not valid JSON/;

function assertNodeSafe(cfg: ReturnType<typeof loadNodesConfig>): void {
  for (const [name, node] of Object.entries(cfg.nodes)) {
    assert.match(name, /^[A-Za-z0-9][A-Za-z0-9_.-]*$/);
    const words = [node.env.HF_HOME, node.env.BIND, node.env.PORT, node.env.REQUIRE_IDLE_GPU, node.ssh, ...Object.values(node.vars), ...(node.gpuProbe?.split(' ') ?? [])];
    for (const r of Object.values(node.recipes)) words.push(r.dir, r.start, r.stop, r.container, ...Object.values(r.vars ?? {}));
    for (const w of words) if (w !== undefined) assert.match(w, SAFE_WORD);
    assert.match(node.env.HF_HOME, /^\//);
  }
}

test(`nodes.json loader: ${RUNS} generated files, each rejected with FILE: json.path lines or accepted with only safe words`, () => {
  let accepted = 0;
  let planned = 0;
  fc.assert(
    fc.property(fileArb, (text) => {
      writeFileSync(FILE, text);
      let cfg;
      try {
        cfg = loadNodesConfig(FILE);
      } catch (e) {
        assertGoodRejection(e, WHERE);
        if (process.env['PULSE_FUZZ_DEBUG']) console.log((e as Error).message.split('\n')[0]);
        return;
      }
      accepted += 1;
      assertNodeSafe(cfg);
      // Accepted fleets plan: the shipped best profile on every node renders safe or is refused naming where.
      for (const node of Object.keys(cfg.nodes)) {
        try {
          const plan = buildUpPlan(cfg, profiles, { profile: 'best', node, overlay: null, overlayWins: false, yes: false, restart: false }, new Date(0));
          assertStaticallySafe(plan.env.text, plan.env.values);
          buildDownPlan(cfg, { node, yes: false }, new Date(0));
          planned += 1;
        } catch (e) {
          if (e instanceof assert.AssertionError) throw e;
          assertGoodRejection(e, /nodes\.json: nodes\.|nodes\.[^.]+\.recipes\.|best\.env:\d+: /);
        }
      }
    }),
    { numRuns: RUNS },
  );
  assert.ok(accepted > RUNS / 50, `too few accepted files (${accepted})`);
  assert.ok(planned > 0);
  console.log(`# nodes.json: ${RUNS} generated, ${accepted} accepted, ${planned} node plans rendered`);
});
