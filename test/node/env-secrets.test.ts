/**
 * The one .env rule for secrets (prelude.sh's parser): every form bash's `source` sets for certain is carried by
 * write-env byte for byte (the new .env, sourced, gives the same value) in one normalised line per key, and each
 * form pulse cannot carry safely fails write-env and preflight's env-secrets check with file:line: KEY, no value.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseRecords } from '../../runtime/node/records.js';
import { scriptText } from '../../runtime/node/script.js';

const V = 'sk-Form-7e2a.b/c+d=';
const NEW = '# pulse-profile: new\n# pulse-overlay: none\n# pulse-sha256: x\nMAX_NUM_SEQS="4"\n';

function sourced(file: string, key: string): string {
  return spawnSync('env', ['-i', 'bash', '-c', `set -a; source "$0" >/dev/null 2>&1; printf %s "\${${key}-UNSET}"`, file], { encoding: 'utf8' }).stdout;
}

function writeEnv(old: string): { code: number | null; stdout: string; stderr: string; before: string; after: string } {
  const dir = mkdtempSync(join(tmpdir(), 'pulse-carry-'));
  try {
    const env = join(dir, '.env');
    writeFileSync(env, old);
    const before = join(dir, 'before.env');
    writeFileSync(before, old);
    const inputs = { PULSE_ENV_PATH: env, PULSE_NEW_ENV_B64: Buffer.from(NEW).toString('base64'), PULSE_NEW_SHA256: 'x', PULSE_NEW_PROFILE: 'new', PULSE_NEW_OVERLAY: 'none', PULSE_STAMP: '20261202T120000Z' };
    const r = spawnSync('bash', ['-s'], { input: scriptText('write-env', inputs), encoding: 'utf8' });
    const out = { code: r.status, stdout: r.stdout, stderr: r.stderr, before: '', after: readFileSync(env, 'utf8') };
    if (r.status === 0) {
      for (const k of ['API_KEY', 'HF_TOKEN']) assert.equal(sourced(env, k), sourced(before, k), `${k} sourced from the new .env equals the old one for ${JSON.stringify(old)}`);
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CARRIED: [string, string, string][] = [
  ['plain', `API_KEY=${V}\n`, `API_KEY="${V}"`],
  ['export', `export API_KEY=${V}\n`, `API_KEY="${V}"`],
  ['export with blanks and tabs', `export \t  API_KEY=${V}\n`, `API_KEY="${V}"`],
  ['leading blanks and tabs', ` \t API_KEY=${V}\n`, `API_KEY="${V}"`],
  ['double-quoted with blanks', `API_KEY="${V} two'words!"\n`, `API_KEY="${V} two'words!"`],
  ['single-quoted with $, backtick, double quote, backslash', `API_KEY='${V}$HOME\`x\`"\\'\n`, `API_KEY='${V}$HOME\`x\`"\\'`],
  ['a trailing comment', `API_KEY=${V}   # rotated 2026-09\n`, `API_KEY="${V}"`],
  ['empty', 'API_KEY=\n', 'API_KEY=""'],
  ['twice, same value, then `export API_KEY`', `API_KEY=${V}\nexport API_KEY="${V}"\nexport API_KEY HF_TOKEN\n`, `API_KEY="${V}"`],
  ['no newline at the end', `API_KEY=${V}`, `API_KEY="${V}"`],
  ['a key named in another multi-line value', `EXTRA_DOCKER_ARGS="\n -e API_KEY=not-this\n"\nAPI_KEY=${V}\n`, `API_KEY="${V}"`],
];

for (const [name, old, line] of CARRIED) {
  test(`carried: ${name}`, () => {
    const r = writeEnv(`# old\n${old}`);
    assert.equal(r.code, 0, r.stderr);
    const secretLines = r.after.split('\n').filter((l) => /API_KEY|HF_TOKEN/.test(l));
    assert.deepEqual(secretLines, [line]);
    assert.equal(parseRecords(r.stdout).find((x) => x.kind === 'write-env')?.carried, 1);
    assert.ok(!r.stdout.includes(V) && !r.stderr.includes(V));
  });
}

test('carried: both keys, each counted once', () => {
  const r = writeEnv(`export HF_TOKEN='hf_${V}'\n  API_KEY="${V}"\n`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(parseRecords(r.stdout).find((x) => x.kind === 'write-env')?.carried, 2);
});

const REFUSED: [string, string, RegExp][] = [
  ['command substitution', `API_KEY=$(cat /root/key)\n`, /:2: API_KEY: .*treats specially/],
  ['a $ in double quotes', `API_KEY="${V}$X"\n`, /:2: API_KEY: .*double-quoted value holds \$/],
  ['backticks', `HF_TOKEN=\`cat /k\`\n`, /:2: HF_TOKEN: /],
  ['a line continuation', `API_KEY=${V}\\\nmore\n`, /:2: API_KEY: .*backslash/],
  ['continued from the line before', `FOO=1 \\\nAPI_KEY=${V}\n`, /:3: API_KEY: .*continues the line before/],
  ['declare', `declare -x API_KEY=${V}\n`, /:2: API_KEY: .*shell command/],
  ['KEY+=', `API_KEY=${V}\nAPI_KEY+=more\n`, /:3: API_KEY: API_KEY\+= appends/],
  ['conflicting definitions', `API_KEY=${V}\nAPI_KEY=${V}x\n`, /:3: API_KEY: .*again, with another value than line 2/],
  ['text after the value', `API_KEY=${V} other\n`, /:2: API_KEY: text follows the value/],
  ['a quote that does not end on its line', `API_KEY="${V}\n"\n`, /:2: API_KEY: .*does not end on the same line/],
  ['CRLF line endings', `API_KEY=${V}\r\n`, /:2: API_KEY: .*carriage return/],
  ['two assignments on one line', `FOO=1;API_KEY=${V}\n`, /:2: API_KEY: .*line of another key/],
];

for (const [name, old, message] of REFUSED) {
  test(`refused by write-env and by preflight: ${name}`, () => {
    const text = `# old\n${old}`;
    const r = writeEnv(text);
    assert.equal(r.code, 11, r.stdout + r.stderr);
    assert.equal(r.after, text, 'the old .env is unchanged');
    const err = String(parseRecords(r.stdout).find((x) => x.kind === 'error')?.message);
    assert.match(err, message);
    assert.ok(!r.stdout.includes(V) && !r.stderr.includes(V), 'no value in any output');
    const check = preflightSecretsCheck(text);
    assert.equal(check?.ok, false);
    assert.match(String(check?.detail), message);
    assert.ok(!String(check?.detail).includes(V));
  });
}

function preflightSecretsCheck(text: string): Record<string, unknown> | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'pulse-pre-'));
  try {
    writeFileSync(join(dir, '.env'), text);
    const inputs = { PULSE_RECIPE_DIR: dir, PULSE_RECIPE_START: 'start.sh', PULSE_RECIPE_STOP: 'stop.sh', PULSE_CONTAINER: 'c', PULSE_ENV_PATH: join(dir, '.env'), PULSE_PORT: '1', PULSE_PROBE_HOST: '127.0.0.1', PULSE_IMAGE: '', PULSE_HF_HOME: '', PULSE_MODEL: '', PULSE_CHAT_TEMPLATE: '', PULSE_MTP_DRAFT_VOCAB: '', PULSE_MOUNTS: '', PULSE_MKDIRS: '' };
    const r = spawnSync('bash', ['-s'], { input: scriptText('preflight', inputs), encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
    return parseRecords(r.stdout).find((x) => x.kind === 'check' && x.name === 'env-secrets');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
