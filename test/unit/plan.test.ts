/** buildUpPlan / buildDownPlan / fleetOf / checkRefusals: every field from its spec source, and each refusal. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseNodesConfig } from '../../runtime/config/nodes.js';
import { parseProfile, type Profile } from '../../runtime/config/profile.js';
import { isPulseError } from '../../runtime/errors.js';
import { buildDownPlan, buildUpPlan, checkRefusals, fleetOf, stampOf, type UpPlanOptions } from '../../runtime/plan/plan.js';
import { REPO_ROOT } from '../helpers/paths.js';

const fleetText = readFileSync(path.join(REPO_ROOT, 'test/fixtures/nodes/fleet.json'), 'utf8');
const cfg = parseNodesConfig(fleetText, 'fleet.json');
const NOW = new Date('2026-09-23T10:15:00Z');

function profiles(...texts: [string, string][]): Map<string, Profile> {
  return new Map(texts.map(([name, text]) => [name, parseProfile(text, `${name}.env`, name)]));
}
const PROFILES = profiles(
  ['fast', '# pulse-recipe: qwen38-flash\n# pulse-mkdir: {{tritonCache}}\n# pulse-proof: p\n# pulse-client: n\nSERVED_MODEL_NAME=qwen38\nMAX_MODEL_LEN=4096\nREADY_TIMEOUT_S=600\n'],
  ['bare', '# pulse-recipe: qwen38-flash\nSERVED_MODEL_NAME=q\n'],
  ['exp', '# pulse-recipe: qwen38-flash\n# pulse-status: experimental\n'],
  ['draft', '# pulse-recipe: qwen38-flash\n# pulse-runnable: false\n'],
  ['dual', '# pulse-recipe: qwen38-dual\n'],
  ['badready', '# pulse-recipe: qwen38-flash\nREADY_TIMEOUT_S=soon\n'],
);
const opts = (o: Partial<UpPlanOptions> = {}): UpPlanOptions => ({ profile: 'fast', node: 'spark2', overlay: null, overlayWins: false, yes: false, restart: false, ...o });

test('plan: every field of an up plan', () => {
  const p = buildUpPlan(cfg, PROFILES, opts({ rollbackHint: 'pulse model up best --node spark2' }), NOW);
  assert.equal(p.action, 'up');
  assert.equal(p.version, 1);
  assert.equal(p.node, 'spark2');
  assert.deepEqual(p.target, { name: 'spark2', host: 'ssh', ssh: 'spark2' });
  assert.equal(p.profile, 'fast');
  assert.equal(p.protected, false);
  assert.equal(p.confirmed, false);
  assert.deepEqual(p.recipe, { name: 'qwen38-flash', dir: '/srv/recipes/flash', start: 'start.sh', stop: 'stop.sh', container: 'vllm-qwen38' });
  assert.equal(p.env.path, '/srv/recipes/flash/.env');
  assert.match(p.env.text, /^# pulse-profile: fast\n/);
  assert.equal(p.env.values['MAX_MODEL_LEN'], '4096');
  assert.equal(p.stamp, '20260923T101500Z');
  assert.equal(p.renderedAt, '2026-09-23T10:15:00Z');
  assert.deepEqual(p.mkdirs, ['/srv/triton']);
  assert.deepEqual(p.proofs, ['p']);
  assert.deepEqual(p.clientNotes, ['n']);
  assert.equal(p.overlay, null);
  assert.deepEqual(p.replacements, []);
  assert.deepEqual(p.expect, { servedModelName: 'qwen38', maxModelLen: 4096, port: 8001, bind: '127.0.0.1' });
  assert.deepEqual(p.memory, { gateGiB: 90, timeoutS: 600 }, 'the node gate replaces the top-level one');
  assert.deepEqual(p.readiness, { timeoutS: 600 + 120 }, 'READY_TIMEOUT_S + readyGraceS');
  assert.equal(p.restart, false);
  assert.equal(p.rollbackHint, 'pulse model up best --node spark2');
  assert.equal(p.fleet.length, 3);
  assert.deepEqual(JSON.parse(JSON.stringify(p)), p, 'JSON-safe');
});

test('plan: defaults READY_TIMEOUT_S 1800 and the top-level gate; options override', () => {
  const p = buildUpPlan(cfg, PROFILES, opts({ profile: 'bare', node: 'spark3' }), NOW);
  assert.equal(p.readiness.timeoutS, 1800 + 120);
  assert.equal(p.memory.gateGiB, 100);
  assert.equal(p.expect.maxModelLen, null);
  assert.equal(p.rollbackHint, null);
  const q = buildUpPlan(cfg, PROFILES, opts({ timeoutS: 42, minMemGib: 77, restart: true, yes: true }), NOW);
  assert.equal(q.readiness.timeoutS, 42);
  assert.equal(q.memory.gateGiB, 77);
  assert.equal(q.restart, true);
  assert.equal(q.confirmed, true);
});

test('plan: a bad READY_TIMEOUT_S is an error naming the profile line', () => {
  assert.throws(() => buildUpPlan(cfg, PROFILES, opts({ profile: 'badready' }), NOW), /badready\.env:2: READY_TIMEOUT_S must be a whole number/);
});

test('plan: unknown profile or node refuses and lists the known ones', () => {
  assert.throws(
    () => buildUpPlan(cfg, PROFILES, opts({ profile: 'nope' }), NOW),
    (e: unknown) => isPulseError(e) && e.kind === 'config' && e.message === 'unknown profile "nope"; known profiles: fast, bare, exp, draft, dual, badready',
  );
  assert.throws(
    () => buildUpPlan(cfg, PROFILES, opts({ node: 'spark9' }), NOW),
    (e: unknown) => isPulseError(e) && e.kind === 'config' && e.message === 'unknown node "spark9"; known nodes: spark1, spark2, spark3',
  );
  assert.throws(() => buildDownPlan(cfg, { node: 'spark9', yes: false }, NOW), /unknown node "spark9"; known nodes: spark1, spark2, spark3/);
});

test('plan: a recipe the node lacks is a config error listing the recipes it has', () => {
  assert.throws(
    () => buildUpPlan(cfg, PROFILES, opts({ profile: 'dual' }), NOW),
    (e: unknown) => isPulseError(e) && e.kind === 'config' && /needs recipe "qwen38-dual"/.test(e.message) && /qwen38-flash/.test(e.hint ?? ''),
  );
  assert.equal(buildUpPlan(cfg, PROFILES, opts({ profile: 'dual', node: 'spark1' }), NOW).recipe.name, 'qwen38-dual');
});

test('fleetOf: a loopback BIND is unreachable unless the node is the gateway node', () => {
  assert.deepEqual(fleetOf(cfg), [
    { node: 'spark1', gatewayUrl: 'http://127.0.0.1:8000/v1', reachable: true },
    { node: 'spark2', gatewayUrl: 'http://203.0.113.2:8001/v1', reachable: false },
    { node: 'spark3', gatewayUrl: 'http://203.0.113.3:8000/v1', reachable: true },
  ]);
  const j = JSON.parse(fleetText) as { gatewayNode?: string; nodes: Record<string, { env: { BIND: string } }> };
  j.gatewayNode = 'spark2';
  j.nodes['spark3']!.env.BIND = 'localhost';
  const other = parseNodesConfig(JSON.stringify(j), 'f.json');
  assert.deepEqual(fleetOf(other).map((f) => f.reachable), [false, true, false]);
  j.nodes['spark3']!.env.BIND = '::1';
  assert.equal(fleetOf(parseNodesConfig(JSON.stringify(j), 'f.json'))[2]?.reachable, false);
});

test('down plan: target, recipe (first, or named), stamp, fleet', () => {
  const d = buildDownPlan(cfg, { node: 'spark1', yes: true }, NOW);
  assert.deepEqual(d, {
    action: 'down',
    version: 1,
    node: 'spark1',
    target: { name: 'spark1', host: 'local' },
    protected: true,
    confirmed: true,
    recipe: { name: 'qwen38-flash', dir: '/srv/recipes/flash', start: 'start.sh', stop: 'stop.sh', container: 'vllm-qwen38' },
    stamp: '20260923T101500Z',
    fleet: fleetOf(cfg),
  });
  assert.equal(buildDownPlan(cfg, { node: 'spark1', yes: true, recipe: 'qwen38-dual' }, NOW).recipe.name, 'qwen38-dual');
});

test('stampOf: compact UTC', () => {
  assert.equal(stampOf(new Date('2026-01-02T03:04:05.678Z')), '20260102T030405Z');
});

const refusalCases: { name: string; profile: string; node: string; yes: boolean; experimental: boolean; dryRun: boolean; error: RegExp | null }[] = [
  { name: 'experimental without --experimental (real)', profile: 'exp', node: 'spark2', yes: false, experimental: false, dryRun: false, error: /profile exp is experimental .*--experimental/ },
  { name: 'experimental without --experimental (dry-run)', profile: 'exp', node: 'spark2', yes: false, experimental: false, dryRun: true, error: /profile exp is experimental/ },
  { name: 'experimental with --experimental', profile: 'exp', node: 'spark2', yes: false, experimental: true, dryRun: false, error: null },
  { name: 'render-only on a real up', profile: 'draft', node: 'spark2', yes: false, experimental: false, dryRun: false, error: /profile draft is render-only .*--dry-run/ },
  { name: 'render-only on a dry-run', profile: 'draft', node: 'spark2', yes: false, experimental: false, dryRun: true, error: null },
  { name: 'protected without --yes (real)', profile: 'fast', node: 'spark1', yes: false, experimental: false, dryRun: false, error: /node spark1 is protected; add --yes/ },
  { name: 'protected without --yes (dry-run)', profile: 'fast', node: 'spark1', yes: false, experimental: false, dryRun: true, error: null },
  { name: 'protected with --yes', profile: 'fast', node: 'spark1', yes: true, experimental: false, dryRun: false, error: null },
];

for (const c of refusalCases) {
  test(`checkRefusals: ${c.name} ${c.error ? 'refuses' : 'allows'}`, () => {
    const plan = buildUpPlan(cfg, PROFILES, opts({ profile: c.profile, node: c.node, yes: c.yes }), NOW);
    const run = (): void => checkRefusals(plan, PROFILES.get(c.profile)!, { experimental: c.experimental, dryRun: c.dryRun });
    if (c.error === null) run();
    else assert.throws(run, (e: unknown) => isPulseError(e) && e.kind === 'refused' && c.error!.test(e.message) && !e.message.includes('\n'));
  });
}

test('checkRefusals: down on a protected node needs --yes', () => {
  assert.throws(() => checkRefusals(buildDownPlan(cfg, { node: 'spark1', yes: false }, NOW), null, { experimental: false, dryRun: false }), /node spark1 is protected; add --yes to stop the server/);
  checkRefusals(buildDownPlan(cfg, { node: 'spark1', yes: true }, NOW), null, { experimental: false, dryRun: false });
  checkRefusals(buildDownPlan(cfg, { node: 'spark2', yes: false }, NOW), null, { experimental: false, dryRun: false });
});
