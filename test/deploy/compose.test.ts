/**
 * docker-compose.yml, proven by what runs without a Docker engine: its structure (services, health checks, restart
 * policies, pinned tags, named volumes, no inline secret), agreement with the code and docs/PRODUCTION.md (task
 * queue, gRPC port, UI port, versions), a compose-spec key check, and `docker compose config` when the plugin is
 * installed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { TASK_QUEUE } from '../../workflows/definitions.js';
import { embeddedPort, SERVER_DYNAMIC_CONFIG } from '../../cli/deploy-client/embedded-server.js';
import { envOf, imageTag, loadCompose, mountsOf, portsOf, referencedVars, withDefaults, type Json, type Service } from './compose-file.js';
import { composeDurationSeconds } from './unit-file.js';
import { workerGrace } from './worker-grace.js';
import { REPO_ROOT } from '../helpers/paths.js';

const { text, compose } = loadCompose(REPO_ROOT);
const services = compose.services;
const docs = readFileSync(path.join(REPO_ROOT, 'docs/PRODUCTION.md'), 'utf8');
const envExample = readFileSync(path.join(REPO_ROOT, 'deploy/compose/env.example'), 'utf8');
const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; engines: { node: string } };

const SERVICES = { db: 'postgresql', temporal: 'temporal', ui: 'temporal-ui', worker: 'pulse-worker' } as const;
const svc = (name: string): Service => {
  const s = services[name];
  assert.ok(s, `service ${name} is missing`);
  return s;
};

function gitIgnored(rel: string): boolean {
  return spawnSync('git', ['check-ignore', '-q', '--no-index', rel], { cwd: REPO_ROOT }).status === 0;
}

test('the four services are there, and only they', () => {
  assert.deepEqual(Object.keys(services).sort(), Object.values(SERVICES).sort());
});

test('every service has a restart policy that survives a crash and a reboot', () => {
  for (const [name, s] of Object.entries(services)) {
    assert.ok(['unless-stopped', 'always'].includes(String(s['restart'])), `${name}: restart is ${String(s['restart'])}`);
  }
});

test('every service has a health check with an interval, a timeout and retries', () => {
  for (const [name, s] of Object.entries(services)) {
    const hc = s['healthcheck'] as Record<string, Json> | undefined;
    assert.ok(hc, `${name}: no healthcheck`);
    const t = hc['test'] as Json[];
    assert.ok(Array.isArray(t) && ['CMD', 'CMD-SHELL'].includes(String(t[0])) && t.length >= 2, `${name}: healthcheck.test must be [CMD|CMD-SHELL, ...]`);
    for (const k of ['interval', 'timeout']) assert.ok(composeDurationSeconds(String(hc[k])) > 0, `${name}: healthcheck.${k}`);
    assert.ok(Number(hc['retries']) >= 3, `${name}: healthcheck.retries`);
    assert.notEqual(hc['disable'], true, `${name}: healthcheck disabled`);
  }
});

test('start order follows health: database, then server, then UI and worker', () => {
  const cond = (from: string, to: string) => ((svc(from)['depends_on'] as Record<string, { condition?: string }> | undefined)?.[to])?.condition;
  assert.equal(cond(SERVICES.temporal, SERVICES.db), 'service_healthy');
  assert.equal(cond(SERVICES.ui, SERVICES.temporal), 'service_healthy');
  assert.equal(cond(SERVICES.worker, SERVICES.temporal), 'service_healthy');
});

test('images are pinned to exact release tags (no latest, no floating major)', () => {
  for (const [name, s] of Object.entries(services)) {
    const image = String(s['image'] ?? '');
    const { repo, tag } = imageTag(image);
    assert.ok(tag, `${name}: image "${image}" has no tag`);
    assert.notEqual(tag, 'latest', `${name}: latest`);
    assert.match(tag, /^\d+\.\d+\.\d+|^\d+\.\d+$/, `${name}: tag ${tag} is not an exact version`);
    if (s['build']) {
      // The locally built image carries the package version, so two builds are told apart.
      assert.equal(repo, 'pulse-worker');
      assert.equal(tag, pkg.version);
    }
  }
  assert.equal(imageTag(String(svc(SERVICES.temporal)['image'])).repo, 'temporalio/auto-setup');
  assert.equal(imageTag(String(svc(SERVICES.ui)['image'])).repo, 'temporalio/ui');
  assert.equal(imageTag(String(svc(SERVICES.db)['image'])).repo, 'postgres');
});

test('data lives on named volumes that the file declares', () => {
  const declared = Object.keys(compose.volumes ?? {});
  for (const [name, s] of Object.entries(services)) {
    for (const m of mountsOf(s)) {
      if (m.type === 'volume') assert.ok(declared.includes(m.source), `${name}: volume ${m.source} is not declared`);
    }
  }
  const pg = mountsOf(svc(SERVICES.db)).find((m) => m.target === '/var/lib/postgresql/data');
  assert.equal(pg?.type, 'volume', 'PostgreSQL data must be on a named volume');
  const stateDir = envOf(svc(SERVICES.worker))['PULSE_STATE_DIR'] ?? '';
  const state = mountsOf(svc(SERVICES.worker)).find((m) => stateDir === m.target || stateDir.startsWith(`${m.target}/`));
  assert.equal(state?.type, 'volume', `the worker state dir ${stateDir} must be on a named volume`);
  assert.equal(state?.readOnly, false);
});

test('no secret is written in the file: passwords come from gitignored Docker secret files', () => {
  const secretish = /PASS|PWD|SECRET|TOKEN|API_KEY|PRIVATE/i;
  for (const [name, s] of Object.entries(services)) {
    for (const [k, v] of Object.entries(envOf(s))) {
      if (!secretish.test(k)) continue;
      assert.ok(k.endsWith('_FILE') && v.startsWith('/run/secrets/'), `${name}: ${k} holds a value inline`);
      const secret = v.slice('/run/secrets/'.length);
      assert.ok((s['secrets'] as string[] | undefined)?.includes(secret), `${name}: uses secret ${secret} without granting it`);
    }
    assert.equal(s['env_file'], undefined, `${name}: env_file would hide values from this check`);
  }
  assert.doesNotMatch(text, /^\s*-?\s*(POSTGRES_PASSWORD|POSTGRES_PWD)\s*[:=]/m, 'a password variable is set in the file');
  const secrets = Object.entries(compose.secrets ?? {});
  assert.ok(secrets.length > 0, 'no secrets section');
  for (const [name, def] of secrets) {
    assert.ok(def.file, `secret ${name} must come from a file`);
    const rel = path.normalize(def.file);
    assert.ok(gitIgnored(rel), `secret file ${rel} is not gitignored`);
    const tracked = execFileSync('git', ['ls-files', '--', rel], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(tracked, '', `secret file ${rel} is committed`);
  }
  // The Temporal server reads the same secret file, through its entrypoint wrapper. `$$` is compose's escape: a
  // single `$(` would be taken as compose interpolation instead of reaching the shell.
  const entry = (svc(SERVICES.temporal)['entrypoint'] as string[]).join(' ');
  assert.match(entry, /POSTGRES_PWD="\$\$\(cat \/run\/secrets\/postgres_password\)"/);
  assert.match(entry, /exec \/etc\/temporal\/entrypoint\.sh autosetup$/);
  assert.ok((svc(SERVICES.temporal)['secrets'] as string[]).includes('postgres_password'));
});

test('the worker gets the ssh files read-only and looks for its ssh config inside them', () => {
  const w = svc(SERVICES.worker);
  const ssh = mountsOf(w).find((m) => m.target === '/home/node/.ssh');
  assert.ok(ssh, 'no ssh mount');
  assert.equal(ssh.type, 'bind');
  assert.equal(ssh.readOnly, true, 'ssh files must be mounted read-only');
  const env = envOf(w);
  assert.ok(env['PULSE_SSH_CONFIG']?.startsWith(`${ssh.target}/`), 'PULSE_SSH_CONFIG must point into the ssh mount');
  assert.equal(env['HOME'], '/home/node', '~ in the ssh config must resolve to the mount');
  // The default ssh dir exists in the repo (so `up` does not fail on a missing bind source) and ignores its keys.
  const def = withDefaults(ssh.source);
  assert.ok(existsSync(path.join(REPO_ROOT, def)), `${def} is missing`);
  assert.ok(gitIgnored(path.join(def, 'id_ed25519')) && gitIgnored(path.join(def, 'known_hosts')) && gitIgnored(path.join(def, 'config')));
});

test('the worker gets the site nodes.json read-only, and PULSE_NODES points at it (the worker is the authority)', () => {
  const w = svc(SERVICES.worker);
  const nodes = mountsOf(w).find((m) => m.target === '/app/runtime/nodes.json');
  assert.ok(nodes, 'no nodes.json mount');
  assert.equal(nodes.type, 'bind');
  assert.equal(nodes.readOnly, true, 'nodes.json must be mounted read-only');
  assert.equal(withDefaults(nodes.source), './runtime/nodes.json');
  assert.equal(envOf(w)['PULSE_NODES'], nodes.target);
});

test('ports and addresses agree with the code: gRPC 7233, task queue pulse-deploy, the UI port', () => {
  const grpc = embeddedPort();
  assert.equal(grpc, 7233, 'the CLI default gRPC port');
  const temporalPorts = portsOf(svc(SERVICES.temporal));
  assert.deepEqual(temporalPorts.map((p) => [p.hostIp, p.hostPort, p.containerPort]), [['127.0.0.1', grpc, grpc]]);
  const address = `${SERVICES.temporal}:${grpc}`;
  assert.equal(envOf(svc(SERVICES.worker))['TEMPORAL_ADDRESS'], address);
  assert.equal(envOf(svc(SERVICES.ui))['TEMPORAL_ADDRESS'], address);
  assert.match(String((svc(SERVICES.temporal)['healthcheck'] as Record<string, Json>)['test']), new RegExp(`--address ${address}`));

  const command = svc(SERVICES.worker)['command'] as string[];
  assert.equal(command[0], 'worker');
  assert.equal(command[command.indexOf('--task-queue') + 1], TASK_QUEUE);

  const uiEnv = envOf(svc(SERVICES.ui));
  const [ui] = portsOf(svc(SERVICES.ui));
  assert.ok(ui);
  assert.equal(ui.containerPort, Number(uiEnv['TEMPORAL_UI_PORT']), 'published UI port must be the port the UI serves on');
  assert.equal(ui.hostIp, '127.0.0.1');
  assert.equal(withDefaults(uiEnv['TEMPORAL_CORS_ORIGINS'] ?? ''), `http://localhost:${ui.hostPort}`);
  assert.match(String((svc(SERVICES.ui)['healthcheck'] as Record<string, Json>)['test']), new RegExp(`:${ui.containerPort}/healthz`));

  // docs/PRODUCTION.md tells the operator the same numbers.
  assert.ok(docs.includes(`TEMPORAL_ADDRESS=127.0.0.1:${grpc}`), 'docs: TEMPORAL_ADDRESS');
  assert.ok(docs.includes(`PULSE_TEMPORAL_UI=http://127.0.0.1:${ui.hostPort}`), 'docs: PULSE_TEMPORAL_UI');
  assert.ok(docs.includes(TASK_QUEUE), 'docs: task queue');
});

test('docs/PRODUCTION.md names the exact image versions the file pins', () => {
  for (const [name, s] of Object.entries(services)) {
    if (s['build']) continue;
    assert.ok(docs.includes(String(s['image'])), `docs do not name ${name}'s image ${String(s['image'])}`);
  }
});

test('every variable the file reads is documented in deploy/compose/env.example with the same default', () => {
  const vars = referencedVars(text);
  assert.ok(vars.size > 0);
  for (const [name, def] of vars) {
    const m = new RegExp(`^${name}=(.*)$`, 'm').exec(envExample);
    assert.ok(m, `env.example does not document ${name}`);
    if (def !== undefined) assert.equal(m[1], def, `${name}: env.example and docker-compose.yml disagree on the default`);
  }
  for (const m of envExample.matchAll(/^([A-Z0-9_]+)=/gm)) assert.ok(vars.has(m[1]!), `env.example sets ${m[1]}, which the file never reads`);
  assert.doesNotMatch(envExample, /PASSWORD|PWD=|SECRET|TOKEN/, 'env.example must not carry a secret');
});

test('the worker stops within Docker\'s grace period, which is longer than its own shutdown grace time', async (t) => {
  const grace = await workerGrace(REPO_ROOT);
  t.diagnostic(`worker shutdown grace: ${grace.seconds} s (${grace.source})`);
  const stop = composeDurationSeconds(String(svc(SERVICES.worker)['stop_grace_period']));
  assert.ok(stop > grace.seconds + 5, `stop_grace_period ${stop} s must exceed the worker grace ${grace.seconds} s with margin`);
});

test('the worker health check tracks its connection to the frontend (run here against a real socket)', async (t) => {
  const w = svc(SERVICES.worker);
  assert.equal(w['init'], true, 'an init process forwards SIGTERM and reaps the ssh children');
  const cmd = (w['healthcheck'] as Record<string, Json>)['test'] as string[];
  assert.deepEqual(cmd.slice(0, 3), ['CMD', 'node', '-e']);
  const port = Number((envOf(w)['TEMPORAL_ADDRESS'] ?? '').split(':')[1]);
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  assert.ok(cmd[3]!.includes(`:${hex} 01 `), `the check must look for remote port ${port} (0x${hex})`);
  const check = (): number | null => spawnSync(process.execPath, ['-e', cmd[3]!]).status;
  // The same script, on this host: healthy only while something holds a connection to 127.0.0.1:<port>.
  const server = net.createServer((sock) => sock.on('error', () => undefined));
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!listening) {
    t.skip(`127.0.0.1:${port} is in use here; the static check above still ran`);
    return;
  }
  try {
    assert.equal(check(), 1, 'no connection: unhealthy');
    const sock = net.connect(port, '127.0.0.1');
    await new Promise((resolve, reject) => sock.once('connect', resolve).once('error', reject));
    try {
      assert.equal(check(), 0, 'an established connection: healthy');
    } finally {
      sock.destroy();
    }
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test('the Temporal dynamic config the server is told to read is mounted and valid YAML', () => {
  const t = svc(SERVICES.temporal);
  const file = envOf(t)['DYNAMIC_CONFIG_FILE_PATH'] ?? '';
  const mount = mountsOf(t).find((m) => m.target === '/etc/temporal/config/dynamicconfig');
  assert.ok(mount && mount.readOnly, 'dynamic config dir mounted read-only');
  assert.equal(path.posix.dirname(`/etc/temporal/${file}`), mount.target);
  const local = path.join(REPO_ROOT, mount.source, path.posix.basename(file));
  const cfg = parse(readFileSync(local, 'utf8')) as Record<string, { value: unknown }[]>;
  assert.ok(Object.keys(cfg).length > 0);
  for (const [k, v] of Object.entries(cfg)) assert.ok(Array.isArray(v) && v.every((e) => 'value' in e), `${k}: each entry needs a value`);
  // The production server runs with the dynamic config of the servers the CLI and the tests start (Worker Versioning on).
  for (const [k, v] of Object.entries(SERVER_DYNAMIC_CONFIG)) assert.deepEqual(cfg[k]?.map((e) => e.value), [v], `${k}: ${String(v)}`);
});

// A subset of the compose-spec keys (those a file like ours can use): a misspelt key fails here instead of being
// silently ignored by an old compose.
const TOP_KEYS = new Set(['name', 'services', 'volumes', 'secrets', 'networks', 'configs', 'include']);
const SERVICE_KEYS = new Set(['build', 'command', 'configs', 'container_name', 'depends_on', 'entrypoint', 'environment', 'env_file', 'expose', 'healthcheck', 'image', 'init', 'labels', 'logging', 'networks', 'ports', 'read_only', 'restart', 'secrets', 'stop_grace_period', 'stop_signal', 'tmpfs', 'user', 'volumes', 'working_dir', 'cap_drop', 'security_opt', 'ulimits', 'extra_hosts']);
const HEALTH_KEYS = new Set(['test', 'interval', 'timeout', 'retries', 'start_period', 'start_interval', 'disable']);

test('schema: only known compose keys', () => {
  for (const k of Object.keys(compose)) assert.ok(TOP_KEYS.has(k) || k.startsWith('x-'), `unknown top-level key ${k}`);
  for (const [name, s] of Object.entries(services)) {
    for (const k of Object.keys(s)) assert.ok(SERVICE_KEYS.has(k), `${name}: unknown key ${k}`);
    for (const k of Object.keys((s['healthcheck'] ?? {}) as object)) assert.ok(HEALTH_KEYS.has(k), `${name}: unknown healthcheck key ${k}`);
  }
});

test('docker compose config accepts the file', (t) => {
  const probe = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    t.skip('the docker compose plugin is not installed here; the structural checks above stand in for it');
    return;
  }
  // A throwaway project directory holds every file the compose file names (secret, ssh dir, dynamic config,
  // Dockerfile), so the check needs nothing from the operator and never touches the real secrets dir.
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'pulse-compose-'));
  try {
    mkdirSync(path.join(tmp, 'deploy/compose/secrets'), { recursive: true });
    mkdirSync(path.join(tmp, 'deploy/compose/ssh'), { recursive: true });
    writeFileSync(path.join(tmp, 'deploy/compose/secrets/postgres_password'), 'not-a-real-password\n');
    cpSync(path.join(REPO_ROOT, 'deploy/compose/dynamicconfig'), path.join(tmp, 'deploy/compose/dynamicconfig'), { recursive: true });
    cpSync(path.join(REPO_ROOT, 'Dockerfile'), path.join(tmp, 'Dockerfile'));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !referencedVars(text).has(k)));
    const out = execFileSync('docker', ['compose', '-f', path.join(REPO_ROOT, 'docker-compose.yml'), '--project-directory', tmp, 'config', '--quiet'], {
      cwd: tmp,
      encoding: 'utf8',
      env,
    });
    assert.equal(out.trim(), '');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
