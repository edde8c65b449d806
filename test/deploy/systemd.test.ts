/**
 * deploy/systemd: the worker and standalone-Temporal user units. systemd-analyze verify checks syntax when it is
 * installed (any warning about our files fails); the parse checks the promises: restart on failure, a stop timeout
 * longer than the worker's grace time, the environment file, and the same server options as the CLI's embedded one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SEARCH_ATTRIBUTES, TASK_QUEUE } from '../../workflows/definitions.js';
import { embeddedPort, startDevArgs } from '../../cli/deploy-client/embedded-server.js';
import { last, parseUnit, timeSpanSeconds, type UnitFile } from './unit-file.js';
import { workerGrace } from './worker-grace.js';
import { REPO_ROOT } from '../helpers/paths.js';

const dir = path.join(REPO_ROOT, 'deploy/systemd');
const unitPath = (name: string) => path.join(dir, name);
const load = (name: string): UnitFile => parseUnit(readFileSync(unitPath(name), 'utf8'));
const worker = load('pulse-worker.service');
const temporal = load('pulse-temporal.service');
const tunnel = load('pulse-tunnel.service');
const docs = readFileSync(path.join(REPO_ROOT, 'docs/PRODUCTION.md'), 'utf8');

/** KEY=value lines of an env example (comments skipped). */
function envFile(name: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of readFileSync(path.join(dir, name), 'utf8').split('\n')) {
    const kv = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (kv) m.set(kv[1]!, kv[2]!);
  }
  return m;
}

test('the parser reads continuations, repeated keys and time spans (and rejects what it cannot read)', () => {
  const u = parseUnit('[Service]\nExecStart=/bin/a \\\n  --b c\nEnvironment=A=1\nEnvironment=B=2\n');
  assert.equal(last(u, 'Service', 'ExecStart'), '/bin/a --b c');
  assert.deepEqual(u.get('Service')?.get('Environment'), ['A=1', 'B=2']);
  assert.equal(timeSpanSeconds('1min 30s'), 90);
  assert.equal(timeSpanSeconds('60'), 60);
  assert.throws(() => timeSpanSeconds('abc'));
  assert.throws(() => parseUnit('Restart=always\n'));
});

test('systemd-analyze verify accepts the units without a warning', (t) => {
  if (spawnSync('systemd-analyze', ['--version']).status !== 0) {
    t.skip('systemd-analyze is not installed; the parse checks below still run');
    return;
  }
  // --user needs a runtime dir; a private one keeps the check away from any real user manager.
  const runtime = mkdtempSync(path.join(os.tmpdir(), 'pulse-xdg-'));
  try {
    const files = ['pulse-worker.service', 'pulse-temporal.service', 'pulse-temporal-server.service', 'pulse-temporal-ui.service', 'pulse-tunnel.service'].map(unitPath);
    let r = spawnSync('systemd-analyze', ['--user', 'verify', ...files], { encoding: 'utf8', env: { ...process.env, XDG_RUNTIME_DIR: runtime } });
    if (/Failed to initialize manager/.test(r.stderr)) r = spawnSync('systemd-analyze', ['verify', ...files], { encoding: 'utf8' });
    // verify exits 0 on unknown keys and bad values; it only warns, so any line about our files fails.
    const about = r.stderr.split('\n').filter((l) => /pulse-(worker|temporal|tunnel)\.service/.test(l));
    assert.deepEqual(about, [], r.stderr);
    assert.equal(r.status, 0, r.stderr);
  } finally {
    rmSync(runtime, { recursive: true, force: true });
  }
});

test('worker unit: restarts on failure only, reads ~/.config/pulse/worker.env, runs `pulse-cli worker`', () => {
  assert.equal(last(worker, 'Service', 'Restart'), 'on-failure');
  assert.ok(timeSpanSeconds(last(worker, 'Service', 'RestartSec') ?? '0') >= 1, 'RestartSec avoids a hot loop');
  assert.deepEqual(worker.get('Service')?.get('EnvironmentFile'), ['%h/.config/pulse/worker.env']);
  const exec = last(worker, 'Service', 'ExecStart') ?? '';
  assert.match(exec, /^\/usr\/bin\/env node \$\{PULSE_HOME\}\/bin\/pulse-cli worker$/);
  // Environment= defaults come first so the EnvironmentFile can override them.
  assert.ok(worker.get('Service')?.get('Environment')?.some((e) => e.startsWith('PULSE_HOME=')));
  assert.equal(last(worker, 'Service', 'KillSignal'), 'SIGTERM');
  assert.equal(last(worker, 'Service', 'KillMode'), 'mixed');
  assert.equal(last(worker, 'Install', 'WantedBy'), 'default.target', 'a user unit starts with the user manager');
  assert.ok(last(worker, 'Unit', 'Description')?.includes(TASK_QUEUE));
});

test('tunnel unit: `pulse-cli tunnel` with the worker\'s environment (same nodes.json and state dir), restarts on failure', () => {
  assert.match(last(tunnel, 'Service', 'ExecStart') ?? '', /^\/usr\/bin\/env node \$\{PULSE_HOME\}\/bin\/pulse-cli tunnel$/);
  assert.deepEqual(tunnel.get('Service')?.get('EnvironmentFile'), worker.get('Service')?.get('EnvironmentFile'));
  assert.deepEqual(tunnel.get('Service')?.get('Environment'), worker.get('Service')?.get('Environment'), 'the same defaults as the worker');
  assert.equal(last(tunnel, 'Service', 'Restart'), 'on-failure');
  assert.ok(timeSpanSeconds(last(tunnel, 'Service', 'RestartSec') ?? '0') >= 1, 'RestartSec avoids a hot loop');
  assert.equal(last(tunnel, 'Service', 'KillSignal'), 'SIGTERM', 'a clean stop disables the tunnelled endpoints');
  assert.equal(last(tunnel, 'Install', 'WantedBy'), 'default.target');
  const gateway = readFileSync(path.join(REPO_ROOT, 'docs/GATEWAY.md'), 'utf8');
  for (const s of ['deploy/systemd/pulse-tunnel.service', 'systemctl --user enable --now pulse-tunnel', 'journalctl --user -u pulse-tunnel']) {
    assert.ok(gateway.includes(s), `docs/GATEWAY.md shows ${s}`);
  }
});

test('worker unit: the stop timeout is longer than the worker\'s shutdown grace time', async (t) => {
  const grace = await workerGrace(REPO_ROOT);
  t.diagnostic(`worker shutdown grace: ${grace.seconds} s (${grace.source})`);
  const stop = timeSpanSeconds(last(worker, 'Service', 'TimeoutStopSec') ?? '0');
  assert.ok(stop > grace.seconds + 5, `TimeoutStopSec ${stop} s must exceed the grace ${grace.seconds} s with margin`);
  assert.ok(docs.includes(`shutdown grace time (${grace.seconds} s`), 'docs/PRODUCTION.md states the current grace time');
});

test('worker.env.example sets what the worker needs and points it at the shared server', () => {
  const env = envFile('worker.env.example');
  assert.equal(env.get('TEMPORAL_ADDRESS'), `127.0.0.1:${embeddedPort()}`);
  assert.equal(env.get('TEMPORAL_NAMESPACE'), 'default');
  assert.ok(env.get('PULSE_HOME')?.startsWith('/'), 'PULSE_HOME must be absolute (no shell expansion in EnvironmentFile)');
  for (const [k, v] of env) assert.doesNotMatch(v, /[$`~]/, `${k}: EnvironmentFile does not expand ${v}`);
  assert.doesNotMatch(readFileSync(path.join(dir, 'worker.env.example'), 'utf8'), /^[^#]*(PASSWORD|SECRET|API_KEY)=/m);
});

test('temporal unit: start-dev with SQLite in its state dir, the UI, and the same options as the embedded server', () => {
  assert.equal(last(temporal, 'Service', 'Restart'), 'on-failure');
  assert.equal(last(temporal, 'Service', 'StateDirectory'), 'pulse/temporal-server');
  const exec = last(temporal, 'Service', 'ExecStart') ?? '';
  assert.match(exec, /^\/usr\/bin\/env \$\{PULSE_HOME\}\/\.tools\/bin\/temporal server start-dev /);
  assert.match(exec, /--db-filename %S\/pulse\/temporal-server\/temporal\.db/, 'persistent SQLite inside StateDirectory');
  assert.doesNotMatch(exec, /--headless/);
  for (const sa of SEARCH_ATTRIBUTES) assert.ok(exec.includes(`--search-attribute ${sa.name}=Keyword`), `registers ${sa.name}`);
  // Every fixed option of the CLI's embedded server is here too, so both behave alike.
  const embedded = startDevArgs('/db', 7233);
  for (let i = 0; i < embedded.length; i++) {
    const a = embedded[i]!;
    if (!a.startsWith('--') || ['--db-filename', '--ip', '--port', '--ui-port'].includes(a)) continue;
    const next = embedded[i + 1];
    const pair = next && !next.startsWith('--') ? `${a} ${next}` : a;
    assert.ok(exec.includes(pair), `the unit lacks ${pair}`);
  }
  assert.deepEqual(temporal.get('Service')?.get('EnvironmentFile'), ['-%h/.config/pulse/temporal.env'], 'optional env file');
});

test('temporal unit defaults and temporal.env.example agree with the CLI and the docs', () => {
  const defaults = new Map((temporal.get('Service')?.get('Environment') ?? []).map((e) => e.split('=', 2) as [string, string]));
  const example = envFile('temporal.env.example');
  for (const k of ['TEMPORAL_IP', 'TEMPORAL_PORT', 'TEMPORAL_UI_PORT']) assert.equal(example.get(k), defaults.get(k), `${k}`);
  const port = Number(defaults.get('TEMPORAL_PORT'));
  assert.equal(port, embeddedPort());
  assert.equal(Number(defaults.get('TEMPORAL_UI_PORT')), port + 1000, 'the UI port follows the CLI rule gRPC + 1000');
  assert.equal(defaults.get('TEMPORAL_IP'), '127.0.0.1');
  assert.ok(docs.includes(`PULSE_TEMPORAL_UI=http://127.0.0.1:${defaults.get('TEMPORAL_UI_PORT')}`), 'docs: single-box UI link');
});

test('docs/PRODUCTION.md shows install, enable and logs for both units', () => {
  for (const unit of ['pulse-worker', 'pulse-temporal']) {
    assert.ok(docs.includes(`systemctl --user enable --now ${unit}`), `enable ${unit}`);
    assert.ok(docs.includes(`journalctl --user -u ${unit}`), `logs of ${unit}`);
    assert.ok(docs.includes(`deploy/systemd/${unit}.service`), `install ${unit}`);
  }
  assert.ok(docs.includes('loginctl enable-linger'));
  assert.ok(existsSync(unitPath('worker.env.example')) && existsSync(unitPath('temporal.env.example')));
});
