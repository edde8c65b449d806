import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildFragment, disableReason, fragmentPath, operatorSteps, publishFragment } from '../../runtime/gateway/gateway.js';
import { writeNodeState } from '../../runtime/state/state.js';
import { isPulseError } from '../../runtime/errors.js';
import type { NodeState } from '../../runtime/model/index.js';
import { fleetEntry, nodeState, tempDir } from './fixtures.js';

const rules: { name: string; reachable: boolean; state: NodeState['state'] | null; enabled: boolean; reason?: RegExp }[] = [
  { name: 'up + reachable', reachable: true, state: 'up', enabled: true },
  { name: 'no state + reachable (never deployed by pulse)', reachable: true, state: null, enabled: true },
  { name: 'down', reachable: true, state: 'down', enabled: false, reason: /state down/ },
  { name: 'failed', reachable: true, state: 'failed', enabled: false, reason: /state failed.*readiness timed out/ },
  { name: 'starting', reachable: true, state: 'starting', enabled: false, reason: /state starting/ },
  { name: 'up but unreachable (loopback BIND on another node)', reachable: false, state: 'up', enabled: false, reason: /cannot reach/ },
  { name: 'no state and unreachable', reachable: false, state: null, enabled: false, reason: /cannot reach/ },
];

for (const r of rules) {
  test(`enable rule: ${r.name} → ${r.enabled ? 'enabled' : 'disabled'}`, () => {
    // spark0 is always up and reachable, so the all-disabled fallback never hides the rule under test.
    const fleet = [fleetEntry('spark0'), fleetEntry('spark1', r.reachable)];
    const states: Record<string, NodeState> = { spark0: nodeState('spark0') };
    if (r.state) states['spark1'] = nodeState('spark1', { state: r.state, error: r.state === 'failed' ? 'readiness timed out' : null });
    const { fragment, warnings } = buildFragment(fleet, states);
    const ep = fragment.models[0].endpoints[1];
    assert.equal(ep?.enabled, r.enabled);
    if (r.reason) assert.match(ep?.reason ?? '', r.reason);
    else assert.equal(ep?.reason, undefined);
    assert.deepEqual(warnings, []);
    assert.equal(disableReason(fleet[1]!, states['spark1'] ?? null) === null, r.enabled);
  });
}

test('all disabled: the first node stays enabled, with a warning and a reason', () => {
  const fleet = [fleetEntry('spark1'), fleetEntry('spark2', false)];
  const { fragment, warnings } = buildFragment(fleet, { spark1: nodeState('spark1', { state: 'down', action: 'down' }) });
  const [a, b] = fragment.models[0].endpoints;
  assert.equal(a?.enabled, true);
  assert.match(a?.reason ?? '', /kept enabled by the fallback: state down/);
  assert.equal(b?.enabled, false);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? '', /spark1 stays enabled because the gateway rejects a model with no enabled endpoint/);
});

test('the fragment has the gateway config shape: one qwen38 model, one endpoint per node, in fleet order', () => {
  const fleet = [fleetEntry('spark1'), fleetEntry('spark2', false), fleetEntry('spark3')];
  const { fragment } = buildFragment(fleet, { spark1: nodeState('spark1', { servedModelName: 'qwen38' }) });
  assert.equal(fragment.models.length, 1);
  const m = fragment.models[0];
  assert.equal(m.profile, 'qwen38');
  assert.equal(m.upstreamModel, 'qwen38');
  assert.deepEqual(m.endpoints.map((e) => [e.name, e.baseUrl]), fleet.map((f) => [f.node, f.gatewayUrl]));
  assert.deepEqual(Object.keys(fragment), ['models'], 'the file holds only models');
});

test('an empty fleet is a config error; a gatewayUrl without /v1 warns', () => {
  assert.throws(() => buildFragment([], {}), (e) => isPulseError(e) && e.kind === 'config');
  const { warnings } = buildFragment([{ node: 'spark1', gatewayUrl: 'http://h:8888/', reachable: true }], {});
  assert.match(warnings[0] ?? '', /does not end in \/v1/);
});

test('publishFragment writes 0600 atomically, only when the content changes, and reports each change', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const fleet = [fleetEntry('spark1'), fleetEntry('spark2')];
    await writeNodeState(dir, nodeState('spark1'));
    const first = await publishFragment(dir, fleet);
    assert.equal(first.changed, true);
    assert.equal(statSync(fragmentPath(dir)).mode & 0o777, 0o600);
    assert.deepEqual(first.endpoints.map((e) => [e.name, e.enabled, e.wasEnabled]), [['spark1', true, null], ['spark2', true, null]]);
    const mtime = statSync(fragmentPath(dir)).mtimeMs;
    const ino = statSync(fragmentPath(dir)).ino;

    const again = await publishFragment(dir, fleet);
    assert.equal(again.changed, false);
    assert.equal(statSync(fragmentPath(dir)).ino, ino, 'an unchanged file is not rewritten');
    assert.equal(statSync(fragmentPath(dir)).mtimeMs, mtime);

    await writeNodeState(dir, nodeState('spark2', { state: 'failed', error: 'verify failed' }));
    const third = await publishFragment(dir, fleet);
    assert.equal(third.changed, true);
    assert.deepEqual(third.endpoints.map((e) => [e.name, e.enabled, e.wasEnabled, e.changed]), [['spark1', true, true, false], ['spark2', false, true, true]]);
    const onDisk = JSON.parse(readFileSync(fragmentPath(dir), 'utf8'));
    assert.deepEqual(onDisk, third.fragment);
  } finally {
    cleanup();
  }
});

test('a damaged previous file is replaced with a warning', async () => {
  const { dir, cleanup } = tempDir();
  try {
    writeFileSync(fragmentPath(dir), '{"models": [');
    const r = await publishFragment(dir, [fleetEntry('spark1')]);
    assert.equal(r.changed, true);
    assert.match(r.warnings.join('\n'), /not valid JSON/);
    JSON.parse(readFileSync(fragmentPath(dir), 'utf8'));
  } finally {
    cleanup();
  }
});

test('operatorSteps names PULSE_GATEWAY_CONFIG/--config, PULSE_QWEN_BACKENDS in qwen38.env, and the restart', () => {
  const text = operatorSteps('/s/gateway-backends.json').join('\n');
  assert.match(text, /PULSE_GATEWAY_CONFIG=\/s\/gateway-backends\.json/);
  assert.match(text, /--config \/s\/gateway-backends\.json/);
  assert.match(text, /PULSE_QWEN_BACKENDS.*~\/\.config\/pulse\/qwen38\.env/s);
  assert.match(text, /systemctl --user restart pulse-qwen38/);
});

test('a damaged state file disables that endpoint with a warning instead of failing the publish', async () => {
  const { dir, cleanup } = tempDir();
  try {
    await writeNodeState(dir, nodeState('spark1'));
    mkdirSync(path.join(dir, 'nodes'), { recursive: true });
    writeFileSync(path.join(dir, 'nodes', 'spark2.json'), '{"node":');
    const r = await publishFragment(dir, [fleetEntry('spark1'), fleetEntry('spark2')]);
    assert.deepEqual(r.endpoints.map((e) => [e.name, e.enabled]), [['spark1', true], ['spark2', false]]);
    assert.match(r.endpoints[1]?.reason ?? '', /state file cannot be read .*spark2\.json: not valid JSON/);
    assert.match(r.warnings.join('\n'), /damaged state file/);
  } finally {
    cleanup();
  }
});
