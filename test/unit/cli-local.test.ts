/**
 * The local-only commands through the real CLI (`node bin/pulse-cli ...`): each refusal exits non-zero with one
 * clear line, the dry-run prints the .env, the steps and the notes, writes nothing, and loads neither the Temporal
 * SDK nor ssh2.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';

const cli = path.join(REPO_ROOT, 'bin/pulse-cli');
const fleet = path.join(REPO_ROOT, 'test/fixtures/nodes/fleet.json');
const fixtureProfiles = path.join(REPO_ROOT, 'test/fixtures/profiles');
const sandbox = mkdtempSync(path.join(os.tmpdir(), 'pulse-cli-local-'));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function pulse(args: string[], env: Record<string, string> = {}): Run {
  const r = spawnSync(process.execPath, [cli, '--nodes', fleet, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    // A dead Temporal address and a sandboxed state dir/HOME: a refusal must come before any of them is used.
    env: { ...process.env, HOME: sandbox, XDG_STATE_HOME: path.join(sandbox, 'state'), PULSE_STATE_DIR: path.join(sandbox, 'pulse'), TEMPORAL_ADDRESS: '127.0.0.1:1', PULSE_PROFILES_DIR: '', ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const REFUSED = 4;

const refusals: { name: string; args: string[]; env?: Record<string, string>; line: RegExp }[] = [
  { name: 'render-only profile on a real up', args: ['model', 'up', 'tp2', '--node', 'spark1', '--yes'], line: /^pulse: profile tp2 is render-only \(pulse-runnable: false\)/ },
  { name: 'experimental profile (dry-run)', args: ['model', 'up', 'exp', '--node', 'spark2', '--dry-run'], env: { PULSE_PROFILES_DIR: fixtureProfiles }, line: /^pulse: profile exp is experimental .*--experimental/ },
  { name: 'experimental profile (real up)', args: ['model', 'up', 'exp', '--node', 'spark2'], env: { PULSE_PROFILES_DIR: fixtureProfiles }, line: /^pulse: profile exp is experimental/ },
  { name: 'protected node on a real up', args: ['model', 'up', 'best', '--node', 'spark1'], line: /^pulse: node spark1 is protected; add --yes/ },
  { name: 'protected node on down', args: ['model', 'down', '--node', 'spark1'], line: /^pulse: node spark1 is protected; add --yes/ },
];

for (const c of refusals) {
  test(`cli refuses: ${c.name}`, () => {
    const r = pulse(c.args, c.env);
    assert.equal(r.code, REFUSED, r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0] ?? '', c.line);
    assert.equal(r.stdout, '');
  });
}

test('cli: dry-run shows a render-only profile, and a protected node without --yes', () => {
  const r = pulse(['model', 'up', 'tp2', '--node', 'spark1', '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^# pulse-profile: tp2$/m);
  assert.match(r.stdout, /^TP_WORKER_HOST="spark2"$/m);
  assert.match(r.stdout, /render-only profile/);
  assert.match(r.stdout, /protected node: a real up needs --yes/);
});

test('cli: experimental profile with --experimental dry-runs', () => {
  const r = pulse(['model', 'up', 'exp', '--node', 'spark2', '--dry-run', '--experimental'], { PULSE_PROFILES_DIR: fixtureProfiles });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^# pulse-profile: exp$/m);
});

test('cli: a missing nodes.json is a config error that says to copy the example', () => {
  const r = spawnSync(process.execPath, [cli, '--nodes', path.join(sandbox, 'none.json'), 'model', 'profiles'], { encoding: 'utf8' });
  assert.equal(r.status, 3);
  assert.match(r.stderr, /none\.json: not found\n\s+copy runtime\/nodes\.example\.json to runtime\/nodes\.json/);
});

test('cli: PULSE_NODES picks the nodes.json when --nodes is absent', () => {
  const r = spawnSync(process.execPath, [cli, 'model', 'profiles', '--json'], { encoding: 'utf8', env: { ...process.env, PULSE_NODES: fleet } });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual((JSON.parse(r.stdout) as { nodes: { name: string }[] }).nodes.map((n) => n.name), ['spark1', 'spark2', 'spark3']);
});

test('cli: profiles --json lists profiles and nodes with the spec columns', () => {
  const r = pulse(['model', 'profiles', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const data = JSON.parse(r.stdout) as { profiles: Record<string, unknown>[]; nodes: Record<string, unknown>[] };
  assert.deepEqual(data.profiles.map((p) => p['name']), ['best', 'capture', 'datagen', 'tp2']);
  assert.deepEqual(data.profiles.find((p) => p['name'] === 'tp2'), {
    name: 'tp2',
    recipe: 'qwen38-dual',
    status: 'stable',
    runnable: false,
    description: 'Draft: TP 2 over spark1 + spark2 (recipe qwen38-dual); render-only',
  });
  assert.deepEqual(data.nodes[1], { name: 'spark2', host: 'ssh', ssh: 'spark2', protected: false, gatewayUrl: 'http://203.0.113.2:8001/v1' });
  const text = pulse(['model', 'profiles']);
  assert.match(text.stdout, /^tp2\s+qwen38-dual\s+stable\s+render-only\s+Draft/m);
  assert.match(text.stdout, /^spark1\s+local\s+-\s+yes\s+http:\/\/127\.0\.0\.1:8000\/v1$/m);
});

test('cli: dry-run prints the .env, every step script, the replacements and the client note; writes nothing', () => {
  const r = pulse(['model', 'up', 'capture', '--node', 'spark2', '--dry-run', '--overlay', path.join(REPO_ROOT, 'test/fixtures/overlays/wins'), '--overlay-wins']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^# pulse-overlay: \S+\/test\/fixtures\/overlays\/wins overlay-sha256=[0-9a-f]{64}$/m);
  for (const step of ['preflight', 'mkdir', 'stop', 'memory', 'write-env', 'start', 'readiness', 'verify']) assert.match(r.stdout, new RegExp(`\\[${step}\\] ====`));
  assert.match(r.stdout, /NOTE: each request needs a unique cache_salt and the header X-Request-Id: cap-<row>/);
  assert.match(r.stdout, /step 9\. write the node state and the gateway backend file/);
  assert.match(r.stdout, /endpoint spark2: http:\/\/203\.0\.113\.2:8001\/v1 \(unreachable from the gateway host/);
  const wins = pulse(['model', 'up', 'best', '--node', 'spark2', '--dry-run', '--overlay', path.join(REPO_ROOT, 'test/fixtures/overlays/wins'), '--overlay-wins']);
  assert.match(wins.stdout, /overlay mount \/srv\/shard-r3:\/root\/\.cache\/huggingface\/mtp-shard-r2 replaces profile mount \/srv\/shard-r2:/);
  assert.deepEqual(readdirSync(sandbox), [], 'no file written (state dir, HOME)');
});

test('cli: dry-run prints the shared prelude once, each step\'s own part, and ends with the plan\'s summary', () => {
  const r = pulse(['model', 'up', 'capture', '--node', 'spark2', '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  const prelude = readFileSync(path.join(REPO_ROOT, 'runtime/scripts/prelude.sh'), 'utf8');
  // every step sends the prelude first: printed once, as its own section, not once per step
  assert.equal(r.stdout.split('\npulse_redact_output() {\n').length - 1, 1, 'the prelude is printed once');
  assert.ok(r.stdout.includes(`sent first in every step's script below (${prelude.split('\n').length - 1} lines) ====\n${prelude}`));
  const sections = r.stdout.split(/^==== /m).slice(1);
  const steps = sections.filter((s) => /^step \d\. .*\[(?!publish)[a-z-]+\] ====\n/.test(s));
  assert.equal(steps.length, 9);
  for (const s of steps) assert.match(s, /^.* ====\n\{\n# ---- prelude: runtime\/scripts\/prelude\.sh, printed once above ----\n/);
  // the summary is last, so it is what the screen shows when the dry-run ends (the notes inside it)
  const last = sections.at(-1) ?? '';
  assert.match(last, /^summary ====\ndry-run: up capture on spark2 \(ssh spark2\); nothing runs/);
  assert.match(last, /^readiness: wait up to \d+ s for \/v1\/models on 127\.0\.0\.1:8001$/m);
  assert.match(last, /^steps: preflight, mkdir, drain, stop, memory, write-env, start, readiness, verify, publish$/m);
  assert.match(last, /NOTE: each request needs a unique cache_salt/);
  const lines = r.stdout.split('\n').length;
  assert.ok(lines < 2 * (prelude.split('\n').length + 1000), `${lines} lines`);
});

test('cli: an overlay conflict without --overlay-wins is a config error', () => {
  const r = pulse(['model', 'up', 'best', '--node', 'spark2', '--dry-run', '--overlay', path.join(REPO_ROOT, 'test/fixtures/overlays/wins')]);
  assert.equal(r.code, 3);
  assert.match(r.stderr, /which the profile mounts too/);
  assert.match(r.stderr, /--overlay-wins/);
});

test('cli: dry-run --json is the plan, and the options change it as the spec says', () => {
  const r = pulse(['model', 'up', 'best', '--node', 'spark1', '--dry-run', '--json', '--timeout-s', '99', '--min-mem-gib', '80', '--restart', '--yes']);
  assert.equal(r.code, 0, r.stderr);
  const plan = JSON.parse(r.stdout) as { action: string; readiness: { timeoutS: number }; memory: { gateGiB: number }; restart: boolean; confirmed: boolean; profile: string };
  assert.deepEqual([plan.action, plan.profile, plan.readiness.timeoutS, plan.memory.gateGiB, plan.restart, plan.confirmed], ['up', 'best', 99, 80, true, true]);
});

test('cli: the dry-run loads neither @temporalio/* nor ssh2', () => {
  const log = path.join(os.tmpdir(), `pulse-loaded-${process.pid}.txt`);
  const hooks = path.join(os.tmpdir(), `pulse-hooks-${process.pid}.mjs`);
  writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + '\\n'); return r; }\n`);
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`file://${hooks}`)});`;
  try {
    writeFileSync(log, '');
    const r = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, cli, '--nodes', fleet, 'model', 'up', 'best', '--node', 'spark2', '--dry-run'], { encoding: 'utf8', env: { ...process.env, PULSE_PROFILES_DIR: '' } });
    assert.equal(r.status, 0, r.stderr);
    const loaded = readFileSync(log, 'utf8');
    assert.match(loaded, /dist\/cli\/commands\/dry-run\.js/, 'the hook saw the command module');
    assert.doesNotMatch(loaded, /@temporalio|node_modules\/ssh2/);
  } finally {
    rmSync(log, { force: true });
    rmSync(hooks, { force: true });
  }
});

test.after(() => rmSync(sandbox, { recursive: true, force: true }));

test('cli: --dry-run --preflight runs the read-only step 1 on the (local) node; a Docker daemon that does not answer is one failed check beside the others, exit 14', () => {
  // DOCKER_HOST names a socket nobody serves, so the local node's daemon never answers, on any machine
  const r = pulse(['model', 'up', 'best', '--node', 'spark1', '--dry-run', '--preflight'], { DOCKER_HOST: `unix://${path.join(sandbox, 'no-docker.sock')}` });
  assert.equal(r.code, 14, r.stderr);
  assert.match(r.stdout, /==== preflight \(read-only, ran on the node\) ====/);
  assert.match(r.stdout, /FAIL recipe-dir: .*\/srv\/recipes\/flash/);
  assert.match(r.stdout, /FAIL docker-daemon: the Docker daemon does not answer: /);
  assert.match(r.stdout, /preflight: FAILED/);
});

test('cli: --preflight without --dry-run is a usage error', () => {
  const r = pulse(['model', 'up', 'best', '--node', 'spark2', '--preflight']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--preflight works only with --dry-run/);
});

test('cli: a profile or an overlay with -e VLLM_API_KEY= is a config error that never shows the key', () => {
  // vLLM reads VLLM_API_KEY when --api-key is absent: in the container it would be a secret in workflow history
  // and make every probe (which sends the node .env API_KEY) answer 401.
  const dir = mkdtempSync(path.join(sandbox, 'vllm-key-'));
  const best = readFileSync(path.join(REPO_ROOT, 'runtime/qwen38/profiles/best.env'), 'utf8');
  writeFileSync(path.join(dir, 'best.env'), best.replace('  -e VLLM_MTP_DRAFT_FP8=1\n', '  -e VLLM_MTP_DRAFT_FP8=1\n  -e VLLM_API_KEY=sk-profile-SECRET\n'));
  const prof = pulse(['model', 'up', 'best', '--node', 'spark2', '--dry-run'], { PULSE_PROFILES_DIR: dir });
  assert.equal(prof.code, 3, prof.stderr);
  assert.match(prof.stderr, /-e VLLM_API_KEY= is not allowed: put the key in the node \.env as API_KEY/);
  const overlay = mkdtempSync(path.join(sandbox, 'vllm-key-overlay-'));
  writeFileSync(path.join(overlay, 'docker-args.txt'), '-e VLLM_API_KEY=sk-overlay-SECRET\n');
  writeFileSync(path.join(overlay, 'manifest.json'), '{"sets":["key"]}\n');
  const ov = pulse(['model', 'up', 'best', '--node', 'spark2', '--dry-run', '--overlay', overlay]);
  assert.equal(ov.code, 3, ov.stderr);
  assert.match(ov.stderr, /VLLM_API_KEY= is not allowed/);
  for (const out of [prof.stdout, prof.stderr, ov.stdout, ov.stderr]) assert.doesNotMatch(out, /SECRET/);
  writeFileSync(path.join(dir, 'best.env'), `${best}VLLM_API_KEY=sk-key-SECRET\n`);
  const key = pulse(['model', 'up', 'best', '--node', 'spark2', '--dry-run'], { PULSE_PROFILES_DIR: dir });
  assert.equal(key.code, 3, key.stderr);
  assert.match(key.stderr, /VLLM_API_KEY is not allowed in a profile/);
  assert.doesNotMatch(key.stdout + key.stderr, /SECRET/);
});

test('a reader that goes away (dry-run | head -1) ends the CLI quietly: no EPIPE stack, exit 0', () => {
  const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${cli}" --nodes "${fleet}" model up best --node spark2 --dry-run | head -c 20`], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, HOME: sandbox, PULSE_STATE_DIR: path.join(sandbox, 'pulse'), PULSE_PROFILES_DIR: '' },
  });
  assert.equal(r.stdout, 'dry-run: up best on ');
  assert.doesNotMatch(r.stderr, /EPIPE|Error|at /, r.stderr);
  assert.equal(r.status, 0, r.stderr);
});
