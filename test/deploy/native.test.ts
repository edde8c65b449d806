/**
 * The native server (deploy/native, run by the cluster tier) and docker-compose.yml run the same Temporal: the
 * version scripts/setup.sh builds is the auto-setup image's tag, deploy/native/temporal.env carries the compose
 * server's database, namespace and retention settings, and both read the one dynamic config file. The native
 * systemd unit runs the deploy/native scripts the cluster tier runs (test/helpers/cluster.ts), in its order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { envOf, imageTag, loadCompose, mountsOf, withDefaults } from './compose-file.js';
import { nativeSettings, nativeUiSettings } from './native-files.js';
import { last, parseUnit } from './unit-file.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { SETUP_SCRIPT, SERVER_SCRIPT, UI_SCRIPT } from '../helpers/cluster.js';

const { compose } = loadCompose(REPO_ROOT);
const temporal = compose.services['temporal'];
assert.ok(temporal, 'docker-compose.yml has the temporal service');
const composeEnv = envOf(temporal);
const native = nativeSettings();

test('scripts/setup.sh builds the Temporal server version docker-compose.yml runs', () => {
  const { repo, tag } = imageTag(String(temporal['image']));
  assert.equal(repo, 'temporalio/auto-setup');
  assert.equal(native['TEMPORAL_SERVER_VERSION'], tag);
});

test('deploy/native/temporal.env has the compose server\'s database, namespace and retention settings', () => {
  for (const key of ['DB', 'DB_PORT', 'POSTGRES_USER', 'DEFAULT_NAMESPACE', 'DEFAULT_NAMESPACE_RETENTION']) {
    assert.equal(native[key], composeEnv[key], key);
  }
  // auto-setup's defaults where compose sets nothing (temporalio/docker-builds: config_template.yaml, auto-setup.sh).
  const imageDefaults: Record<string, string> = { NUM_HISTORY_SHARDS: '4', DBNAME: 'temporal', VISIBILITY_DBNAME: 'temporal_visibility', FRONTEND_GRPC_PORT: '7233' };
  for (const [key, def] of Object.entries(imageDefaults)) assert.equal(native[key], composeEnv[key] ?? def, key);
  // pulse registers its own search attributes in both setups (on a server that has none of them:
  // test/cluster/search-attributes.test.ts, on the native server the cluster tier sets up).
  assert.equal(composeEnv['SKIP_ADD_CUSTOM_SEARCH_ATTRIBUTES'], 'true');
});

test('the native server reads the dynamic config file the compose server mounts', () => {
  const file = composeEnv['DYNAMIC_CONFIG_FILE_PATH'] ?? '';
  const mount = mountsOf(temporal).find((m) => m.target === path.posix.dirname(`/etc/temporal/${file}`));
  assert.ok(mount, 'the dynamic config dir is mounted');
  const composeFile = path.posix.join(mount.source.replace(/^\.\//, ''), path.posix.basename(file));
  // What the native scripts really get: lib.sh sourced by bash, as temporal-server.sh does, with no path set.
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', PULSE_HOME: REPO_ROOT, POSTGRES_PWD: 'unused' };
  const r = spawnSync('bash', ['-c', `. ${JSON.stringify(path.join(REPO_ROOT, 'deploy/native/lib.sh'))} && printf %s "$DYNAMIC_CONFIG_FILE_PATH"`], { encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, path.join(REPO_ROOT, composeFile), `deploy/native/lib.sh defaults to ${composeFile} under PULSE_HOME`);
  const yaml = readFileSync(path.join(REPO_ROOT, 'deploy/native/temporal.yaml'), 'utf8');
  assert.match(yaml, /filepath: "\{\{ env "DYNAMIC_CONFIG_FILE_PATH" \}\}"/);
});

test('pulse-temporal-server.service runs the scripts the cluster tier runs: setup schema, the server, setup namespace', () => {
  const unit = parseUnit(readFileSync(path.join(REPO_ROOT, 'deploy/systemd/pulse-temporal-server.service'), 'utf8'));
  const script = (name: string, arg = '') => `/usr/bin/env bash \${PULSE_HOME}/deploy/native/${name}${arg ? ` ${arg}` : ''}`;
  assert.equal(last(unit, 'Service', 'ExecStartPre'), script('temporal-setup.sh', 'schema'));
  assert.equal(last(unit, 'Service', 'ExecStart'), script('temporal-server.sh'));
  assert.equal(last(unit, 'Service', 'ExecStartPost'), script('temporal-setup.sh', 'namespace'));
  assert.equal(last(unit, 'Service', 'Restart'), 'on-failure');
  const env = unit.get('Service')?.get('Environment') ?? [];
  assert.ok(env.includes('POSTGRES_PWD_FILE=%h/.config/pulse/postgres_password'), 'the password comes from a file');
  assert.ok(!env.some((e) => e.startsWith('POSTGRES_PWD=')), 'never the password itself');
  // The scripts the cluster tier runs are these (the harness's own paths, not a text search of its source).
  const rel = (p: string): string => path.relative(REPO_ROOT, p);
  assert.deepEqual([SETUP_SCRIPT, SERVER_SCRIPT].map(rel), ['deploy/native/temporal-setup.sh', 'deploy/native/temporal-server.sh']);
});

test('the native UI is the compose file\'s temporalio/ui version, with its settings and its own config template', () => {
  const ui = compose.services['temporal-ui'];
  assert.ok(ui, 'docker-compose.yml has the temporal-ui service');
  const { repo, tag } = imageTag(String(ui['image']));
  assert.equal(repo, 'temporalio/ui');
  assert.equal(native['TEMPORAL_UI_VERSION'], tag);
  const composeUi = envOf(ui);
  const nativeUi = nativeUiSettings();
  assert.deepEqual(Object.keys(nativeUi).sort(), Object.keys(composeUi).sort(), 'the same settings');
  for (const [k, v] of Object.entries(composeUi)) {
    // compose reaches the server by its service name; the native UI on the same host by loopback.
    const want = k === 'TEMPORAL_ADDRESS' ? v.replace(/^temporal:/, '127.0.0.1:') : withDefaults(v);
    assert.equal(nativeUi[k], want, k);
  }
  const unit = parseUnit(readFileSync(path.join(REPO_ROOT, 'deploy/systemd/pulse-temporal-ui.service'), 'utf8'));
  assert.equal(last(unit, 'Service', 'ExecStart'), '/usr/bin/env bash ${PULSE_HOME}/deploy/native/temporal-ui.sh');
  assert.equal(path.relative(REPO_ROOT, UI_SCRIPT), 'deploy/native/temporal-ui.sh', 'the script the cluster tier runs');
});

const uiTag = imageTag(String(compose.services['temporal-ui']?.['image'])).tag;
const builtUi = path.join(REPO_ROOT, '.tools', `temporal-ui-server-${uiTag}`, 'config', 'docker.yaml');
test('deploy/native/ui/docker.yaml is the built UI server\'s own template, unchanged', { skip: !existsSync(builtUi) && `the UI server ${uiTag} is not built here (scripts/setup.sh builds it)` }, () => {
  assert.equal(readFileSync(path.join(REPO_ROOT, 'deploy/native/ui/docker.yaml'), 'utf8'), readFileSync(builtUi, 'utf8'));
});
