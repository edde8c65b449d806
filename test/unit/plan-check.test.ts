/**
 * runtime/plan/plan-check.ts, table-driven: the worker accepts exactly the plan its own files make for the names in the
 * input (options may differ), refuses every other difference in one line that names the field, applies the
 * refusals of its own profiles and node, and tells an edit after the plan from a plan made elsewhere.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { loadNodesConfig } from '../../runtime/config/nodes.js';
import { readOverlay } from '../../runtime/config/overlay.js';
import { loadProfiles } from '../../runtime/config/profiles.js';
import { isPulseError } from '../../runtime/errors.js';
import { ownDownPlan, ownStop, ownUpPlan, planDigest, upStart, type WorkerFiles } from '../../runtime/plan/plan-check.js';
import { buildDownPlan, buildUpPlan } from '../../runtime/plan/plan.js';
import type { UpPlan } from '../../runtime/model/index.js';
import { checkInputOf, isUpStart, upCheckInput, upPlanRef } from '../../workflows/plan-ref.js';
import { REPO_ROOT } from '../helpers/paths.js';

const NOW = new Date('2026-09-23T10:15:00Z');
const config = loadNodesConfig(path.join(REPO_ROOT, 'test', 'fixtures', 'nodes', 'fleet.json'));
const profiles = new Map([...loadProfiles(path.join(REPO_ROOT, 'runtime', 'qwen38', 'profiles')), ...loadProfiles(path.join(REPO_ROOT, 'test', 'fixtures', 'profiles'))]);
const files = (over: Partial<WorkerFiles> = {}): WorkerFiles => ({ config, profiles, nodesMtimeMs: NOW.getTime() - 60_000, profileMtimeMs: new Map(), ...over });

function plan(over: Partial<Parameters<typeof buildUpPlan>[2]> = {}): UpPlan {
  return JSON.parse(JSON.stringify(buildUpPlan(config, profiles, { profile: 'best', node: 'spark2', overlay: null, overlayWins: false, yes: false, restart: false, ...over }, NOW))) as UpPlan;
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(isPulseError(e) && e.kind === 'refused', String(e));
    assert.doesNotMatch(e.message, /\n/, 'one line');
    return e.message;
  }
  assert.fail('not refused');
}

test('plan check: the plan the worker would make is accepted, options included', () => {
  const p = plan({ restart: true, yes: true, timeoutS: 99, minMemGib: 0 });
  p.memory.timeoutS = 3; // a wait budget is an option, like --timeout-s
  assert.deepEqual(ownUpPlan(files(), p), p);
  const overlay = readOverlay(path.join(REPO_ROOT, 'test', 'fixtures', 'overlays', 'wins'));
  const o = plan({ overlay, overlayWins: true });
  assert.ok(o.replacements.length > 0);
  assert.deepEqual(ownUpPlan(files(), o), o);
});

const TAMPERS: { name: string; change: (p: UpPlan) => void; field: RegExp }[] = [
  { name: 'protected', change: (p) => (p.protected = true), field: /protected \(plan true, worker false\)/ },
  { name: 'env.path', change: (p) => (p.env.path = '/etc/cron.d/x'), field: /env\.path \(plan "\/etc\/cron\.d\/x"/ },
  { name: 'env.text', change: (p) => (p.env.text += 'X=1\n'), field: /env\.text/ },
  { name: 'recipe.start', change: (p) => (p.recipe.start = '/tmp/evil.sh'), field: /recipe\.start \(plan "\/tmp\/evil\.sh", worker "start\.sh"\)/ },
  { name: 'recipe.container', change: (p) => (p.recipe.container = 'other'), field: /recipe\.container/ },
  { name: 'target.ssh', change: (p) => (p.target.ssh = 'evil.example'), field: /target\.ssh/ },
  { name: 'fleet', change: (p) => (p.fleet[0] = { node: 'spark1', gatewayUrl: 'http://evil/v1', reachable: true }), field: /fleet\[0\]\.gatewayUrl/ },
  { name: 'mkdirs', change: (p) => p.mkdirs.push('/etc/evil'), field: /mkdirs/ },
  { name: 'mounts', change: (p) => (p.mounts = []), field: /mounts/ },
  { name: 'proofs', change: (p) => (p.proofs = []), field: /proofs/ },
  { name: 'expect.port', change: (p) => (p.expect.port = 22), field: /expect\.port/ },
  { name: 'stamp', change: (p) => (p.stamp = '../../x'), field: /stamp/ },
  { name: 'an unknown field', change: (p) => Object.assign(p, { extra: 1 }), field: /extra \(plan 1, worker absent\)/ },
];

for (const t of TAMPERS) {
  test(`plan check: a tampered ${t.name} is refused, naming the field`, () => {
    const p = plan();
    t.change(p);
    const m = refusal(() => ownUpPlan(files(), p));
    assert.match(m, /^plan refused by the worker: the plan was not made from the worker's nodes\.json and profiles/);
    assert.match(m, t.field);
  });
}

test('plan check: names and flags the worker must know or refuse', () => {
  assert.match(refusal(() => ownUpPlan(files(), { ...plan(), node: 'spark9' })), /node "spark9" is not in the worker's nodes\.json/);
  assert.match(refusal(() => ownUpPlan(files(), { ...plan(), profile: 'nope' })), /profile "nope" is not among the worker's profiles/);
  assert.match(refusal(() => ownUpPlan(files(), plan({ profile: 'tp2', node: 'spark1', yes: true }))), /render-only/);
  assert.match(refusal(() => ownUpPlan(files(), plan({ profile: 'exp' }))), /experimental/);
  assert.doesNotThrow(() => ownUpPlan(files(), plan({ profile: 'exp', experimental: true })));
  assert.match(refusal(() => ownUpPlan(files(), plan({ node: 'spark1' }))), /node spark1 is protected; add --yes/);
  assert.match(refusal(() => ownUpPlan(files(), { ...plan(), renderedAt: 'soon' })), /renderedAt/);
  assert.match(refusal(() => ownUpPlan(files(), { ...plan(), rollbackHint: 'curl evil | sh' })), /rollbackHint/);
  assert.match(refusal(() => ownUpPlan(files(), { ...plan(), readiness: { timeoutS: -1 } })), /readiness\.timeoutS/);
  assert.match(refusal(() => ownUpPlan(files(), 'x')), /not an object/);
});

test('plan check: an overlay in the plan is checked by its texts (sha256, rules); a plan without them is refused', () => {
  const overlay = readOverlay(path.join(REPO_ROOT, 'test', 'fixtures', 'overlays', 'wins'));
  const o = plan({ overlay, overlayWins: true });
  const forged = { ...o, overlay: { ...o.overlay!, args: '-v /:/host\n' } };
  assert.match(refusal(() => ownUpPlan(files(), forged)), /overlay\.sha256|env\.text|mounts/);
  const bad = { ...o, overlay: { ...o.overlay!, args: '--privileged\n' } };
  assert.match(refusal(() => ownUpPlan(files(), bad)), /overlay docker-args\.txt/);
  const old = { ...o, overlay: { dir: overlay.dir, sha256: overlay.sha256, manifest: overlay.manifest } };
  assert.match(refusal(() => ownUpPlan(files(), old)), /overlay lacks the docker-args\.txt and manifest\.json texts/);
});

test('plan check: an edit after the plan reads "nodes.json changed since this plan was made" (or the profile)', () => {
  const p = plan();
  p.recipe.start = 'start-old.sh';
  const later = NOW.getTime() + 5000;
  assert.match(refusal(() => ownUpPlan(files({ nodesMtimeMs: later }), p)), /^plan refused by the worker: nodes\.json changed since this plan was made: recipe\.start \(plan "start-old\.sh", worker "start\.sh"\)$/);
  assert.match(refusal(() => ownUpPlan(files({ profileMtimeMs: new Map([['best', later]]) }), p)), /profile best changed since this plan was made/);
});

test('plan check: down plans and the stop step take only names; a protected stop needs confirmed', () => {
  const d = JSON.parse(JSON.stringify(buildDownPlan(config, { node: 'spark2', yes: false }, NOW))) as ReturnType<typeof buildDownPlan>;
  assert.deepEqual(ownDownPlan(files(), d), d);
  assert.match(refusal(() => ownDownPlan(files(), { ...d, recipe: { ...d.recipe, stop: '/tmp/evil.sh' } })), /recipe\.stop/);
  assert.match(refusal(() => ownDownPlan(files(), { ...d, node: 'spark1', target: { name: 'spark1', host: 'local' }, protected: true })), /protected|differ|recipe/);
  const stop = { node: 'spark2', target: d.target, recipe: d.recipe };
  assert.deepEqual(ownStop(files(), stop), stop);
  assert.match(refusal(() => ownStop(files(), { ...stop, recipe: { ...d.recipe, dir: '/' } })), /recipe\.dir/);
  const s1 = JSON.parse(JSON.stringify(buildDownPlan(config, { node: 'spark1', yes: true }, NOW))) as ReturnType<typeof buildDownPlan>;
  const guarded = { node: 'spark1', target: s1.target, recipe: s1.recipe };
  assert.match(refusal(() => ownStop(files(), guarded)), /spark1 is protected: its stop step needs --yes/);
  assert.doesNotThrow(() => ownStop(files(), { ...guarded, confirmed: true }));
});

/** The narrow step inputs of issue 11 (workflows/plan-ref.ts), as the workflow builds them. */
test('plan check: the check input (no env.values) and an UpPlanRef with the digest the check returns are accepted; the worker renders the .env', () => {
  const p = plan({ restart: true, yes: true });
  const digest = planDigest(ownUpPlan(files(), upCheckInput(p)));
  assert.equal(digest, planDigest(p));
  const ref = upPlanRef(p, digest);
  assert.equal(JSON.stringify(ref).includes(p.env.text), false, 'the ref does not carry the .env');
  assert.deepEqual(ownUpPlan(files(), ref), p);
  const overlay = readOverlay(path.join(REPO_ROOT, 'test', 'fixtures', 'overlays', 'wins'));
  const o = plan({ overlay, overlayWins: true });
  assert.deepEqual(ownUpPlan(files(), upPlanRef(o, planDigest(o))), o);
});

test('plan check: an UpPlanRef whose rebuilt plan has another digest is refused (hand-made, or nodes.json edited since the check)', () => {
  const p = plan();
  assert.match(refusal(() => ownUpPlan(files(), upPlanRef(p, 'f'.repeat(64)))), /^plan refused by the worker: .*planDigest/);
  assert.match(refusal(() => ownUpPlan(files(), { ...upPlanRef(p, planDigest(p)), restart: true })), /planDigest/);
  const edited = files({ nodesMtimeMs: NOW.getTime() + 60_000 });
  assert.match(refusal(() => ownUpPlan(edited, upPlanRef(p, 'f'.repeat(64)))), /nodes\.json changed since this plan was made/);
  const c = upCheckInput(plan());
  c.recipe.start = '/tmp/evil.sh';
  assert.match(refusal(() => ownUpPlan(files(), c)), /recipe\.start \(plan "\/tmp\/evil\.sh"/);
  const t = upCheckInput(plan());
  t.env.text += 'X=1\n';
  assert.match(refusal(() => ownUpPlan(files(), t)), /env\.text/);
});

/** The CLI's workflow input since issue 11 (UpStart): the plan without its rendered .env, and the plan's digest. */
test('plan check: an UpStart (no .env text, the digest instead) is accepted and is the check input as it came; a whole plan is not an UpStart', () => {
  const p = plan({ restart: true, yes: true });
  const s = upStart(p);
  assert.equal(isUpStart(s), true);
  assert.equal(isUpStart(p), false);
  assert.equal(JSON.stringify(s).includes(p.env.text), false, 'the start input does not carry the .env');
  assert.equal('values' in s.env, false);
  assert.equal(s.planDigest, planDigest(p));
  assert.equal(checkInputOf(s, true), s);
  assert.deepEqual(checkInputOf(p, true), upCheckInput(p));
  assert.equal(checkInputOf(p, false), p);
  assert.deepEqual(ownUpPlan(files(), s), p);
  assert.deepEqual(ownUpPlan(files(), upPlanRef(s, planDigest(p))), p, 'the step ref made from an UpStart is the same');
});

test('plan check: an UpStart still names a tampered field, refuses another digest (the .env it does not carry), and a plan without env.text needs a digest', () => {
  const p = plan();
  const fresh = (): ReturnType<typeof upStart> => JSON.parse(JSON.stringify(upStart(p))) as ReturnType<typeof upStart>;
  const t = fresh();
  t.recipe.start = '/tmp/evil.sh';
  assert.match(refusal(() => ownUpPlan(files(), t)), /recipe\.start \(plan "\/tmp\/evil\.sh", worker "start\.sh"\)/);
  const f = fresh();
  f.fleet[0] = { node: 'spark1', gatewayUrl: 'http://evil/v1', reachable: true };
  assert.match(refusal(() => ownUpPlan(files(), f)), /fleet\[0\]\.gatewayUrl/);
  const d = { ...fresh(), planDigest: 'f'.repeat(64) };
  assert.match(refusal(() => ownUpPlan(files(), d)), /^plan refused by the worker: .*rendered \.env differs .*\(planDigest\)$/);
  const edited = files({ nodesMtimeMs: NOW.getTime() + 60_000 });
  assert.match(refusal(() => ownUpPlan(edited, d)), /nodes\.json changed since this plan was made/);
  const { planDigest: _digest, ...noDigest } = fresh();
  assert.match(refusal(() => ownUpPlan(files(), noDigest)), /env\.text \(plan absent/);
});

test('plan check: the stop and lock inputs may name only the node and the recipe; any path they carry is still compared', () => {
  const d = JSON.parse(JSON.stringify(buildDownPlan(config, { node: 'spark2', yes: false }, NOW))) as ReturnType<typeof buildDownPlan>;
  const own = { node: 'spark2', target: d.target, recipe: d.recipe };
  assert.deepEqual(ownStop(files(), { node: 'spark2', recipe: { name: d.recipe.name } }), own);
  assert.match(refusal(() => ownStop(files(), { node: 'spark2', recipe: { name: d.recipe.name, stop: '/tmp/evil.sh' } })), /recipe\.stop \(plan "\/tmp\/evil\.sh"/);
  assert.match(refusal(() => ownStop(files(), { node: 'spark2', target: { name: 'spark2', host: 'ssh', ssh: 'evil' }, recipe: { name: d.recipe.name } })), /target\.ssh/);
  assert.match(refusal(() => ownStop(files(), { node: 'spark2', recipe: { name: d.recipe.name, extra: 1 } })), /recipe\.extra \(plan 1, worker absent\)/);
  assert.match(refusal(() => ownStop(files(), { node: 'spark1', recipe: { name: d.recipe.name } })), /spark1 is protected: its stop step needs --yes/);
});
