/**
 * An operator's profile that pulse would run must set every recipe key (runtime/config/profile-rules.ts RECIPE_KEYS):
 * start.sh has its own default for a missing one, different from .env.sample, so a profile without MAX_MODEL_LEN
 * would serve another context length than anyone wrote down. Through the real CLI over a profiles folder of the
 * test's own: `pulse model profiles` and `pulse model up --dry-run` refuse it with one line naming the file and the
 * keys; a render-only profile (`# pulse-runnable: false`) may leave keys out.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';

const cli = path.join(REPO_ROOT, 'bin/pulse-cli');
const fleet = path.join(REPO_ROOT, 'test/fixtures/nodes/fleet.json');
const BEST = readFileSync(path.join(REPO_ROOT, 'runtime/qwen38/profiles/best.env'), 'utf8');
const CONFIG = 3;

function pulse(dir: string, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, '--nodes', fleet, ...args], {
    encoding: 'utf8',
    env: { ...process.env, HOME: dir, PULSE_STATE_DIR: path.join(dir, 'state'), TEMPORAL_ADDRESS: '127.0.0.1:1', PULSE_PROFILES_DIR: path.join(dir, 'profiles') },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function withProfiles(files: Record<string, string>, fn: (dir: string) => void): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-recipe-keys-'));
  try {
    spawnSync('mkdir', [path.join(dir, 'profiles')]);
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, 'profiles', name), text);
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const without = (text: string, ...keys: string[]): string => text.split('\n').filter((l) => !keys.some((k) => l.startsWith(`${k}=`))).join('\n');

test('a runnable profile without MAX_MODEL_LEN is refused by profiles and up --dry-run, in one line', () => {
  assert.notEqual(without(BEST, 'MAX_MODEL_LEN'), BEST, 'the shipped best sets MAX_MODEL_LEN');
  withProfiles({ 'best.env': BEST, 'short.env': without(BEST, 'MAX_MODEL_LEN') }, (dir) => {
    for (const args of [['model', 'profiles'], ['model', 'up', 'short', '--node', 'spark2', '--dry-run'], ['model', 'up', 'best', '--node', 'spark2', '--dry-run']]) {
      const r = pulse(dir, args);
      assert.equal(r.code, CONFIG, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, '', 'nothing rendered');
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0] ?? '', /^pulse: \S*short\.env: MAX_MODEL_LEN is not set: a runnable profile sets every recipe key \(start\.sh would use its own default\); set it, or mark the profile # pulse-runnable: false$/);
    }
  });
});

test('every missing key is named; a render-only profile may leave them out; a complete folder loads', () => {
  withProfiles({ 'short.env': without(BEST, 'MTP_K', 'IMAGE') }, (dir) => {
    const r = pulse(dir, ['model', 'profiles']);
    assert.equal(r.code, CONFIG, r.stderr);
    assert.match(r.stderr, /short\.env: IMAGE, MTP_K are not set: .*set them, or mark/);
  });
  withProfiles({ 'best.env': BEST, 'draft.env': '# pulse-recipe: qwen38-flash\n# pulse-runnable: false\nMAX_MODEL_LEN=4096\n' }, (dir) => {
    const r = pulse(dir, ['model', 'profiles', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /"draft"/);
    assert.equal(pulse(dir, ['model', 'up', 'best', '--node', 'spark2', '--dry-run']).code, 0);
  });
});
