/**
 * The settings of the native Temporal server (deploy/native/temporal.env) plus the server version scripts/setup.sh
 * builds (TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION), and of the native UI (deploy/native/temporal-ui.env), for
 * the checks that keep them equal to docker-compose.yml.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';

/** KEY=value lines of deploy/native/temporal.env, plus TEMPORAL_SERVER_VERSION from scripts/setup.sh. */
export function nativeSettings(root = REPO_ROOT): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(path.join(root, 'deploy', 'native', 'temporal.env'), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!;
  }
  const setup = readFileSync(path.join(root, 'scripts', 'setup.sh'), 'utf8');
  for (const key of ['TEMPORAL_SERVER_VERSION', 'TEMPORAL_UI_VERSION']) {
    const v = new RegExp(`^${key}=(\\S+)`, 'm').exec(setup);
    if (v) env[key] = v[1]!;
  }
  return env;
}

/** KEY=value lines of deploy/native/temporal-ui.env. */
export function nativeUiSettings(root = REPO_ROOT): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(path.join(root, 'deploy', 'native', 'temporal-ui.env'), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}
