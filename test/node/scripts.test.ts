/** Node scripts run directly with bash (no sim): .env parsing, write-env on a full disk, exit-code mapping. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failureOf } from '../../runtime/node/outcome.js';
import { parseRecords } from '../../runtime/node/records.js';
import { readScript, scriptText } from '../../runtime/node/script.js';
import { shellQuote } from '../../runtime/node/quote.js';
import type { RemoteResult } from '../../runtime/node/types.js';
import { REPO_ROOT } from '../helpers/paths.js';

function bash(script: string, wrap: string[] = []): { code: number | null; stdout: string; stderr: string } {
  const [cmd, ...args] = wrap.length ? wrap : ['bash', '-s'];
  const r = spawnSync(cmd as string, args, { input: script, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('pulse_env_get reads values without executing the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pulse-env-'));
  try {
    const marker = join(dir, 'executed');
    const env = join(dir, '.env');
    writeFileSync(env, [
      '# comment', `A=$(touch ${marker})`, `B="\`touch ${marker}\`"`, "C='single $HOME'", 'export D=plain # trailing comment',
      'E="multi', '  line"', '  F=indented', 'not an assignment', 'G=', '',
    ].join('\n'));
    const get = (k: string): string => bash(`${readScript('prelude')}\n{ pulse_env_get ${k} ${shellQuote(env)} && echo '|0'; } || echo '|1'`).stdout.replace(/^@pulse .*\n/, '');
    assert.equal(get('A'), `$(touch ${marker})|0\n`);
    assert.equal(get('B'), `\`touch ${marker}\`|0\n`);
    assert.equal(get('C'), 'single $HOME|0\n');
    assert.equal(get('D'), 'plain|0\n');
    assert.equal(get('E'), 'multi\n  line|0\n');
    assert.equal(get('F'), 'indented|0\n');
    assert.equal(get('G'), '|0\n');
    assert.equal(get('MISSING'), '|1\n');
    const keys = bash(`${readScript('prelude')}\npulse_env_keys ${shellQuote(env)}`).stdout.split('\n').filter((l) => l && !l.startsWith('@pulse'));
    assert.deepEqual(keys, ['A', 'B', 'C', 'D', 'E', 'F', 'G']);
    assert.equal(existsSync(marker), false, 'nothing in the .env ran');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('write-env on a full disk fails with exit 11 and leaves the old .env and no temp file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pulse-full-'));
  try {
    const env = join(dir, '.env');
    const old = '# pulse-profile: old\nA="1"\nAPI_KEY=secret-full-disk\n';
    const big = `# pulse-profile: new\n# pulse-overlay: none\n# pulse-sha256: x\nBIG="${'x'.repeat(64 * 1024)}"\n`;
    const inputs = {
      PULSE_ENV_PATH: env, PULSE_NEW_ENV_B64: Buffer.from(big).toString('base64'), PULSE_NEW_SHA256: 'x',
      PULSE_NEW_PROFILE: 'new', PULSE_NEW_OVERLAY: 'none', PULSE_STAMP: '20260923T101500Z',
    };
    // A 32 KiB tmpfs in a private mount namespace holds the recipe dir: the new text (64 KiB) cannot fit.
    const setup = `mount -t tmpfs -o size=32k tmpfs ${shellQuote(dir)} && printf %s ${shellQuote(old)} > ${shellQuote(env)} && bash -s; rc=$?; cat ${shellQuote(env)} > ${shellQuote(`${dir}.after`)}; ls -A ${shellQuote(dir)} > ${shellQuote(`${dir}.ls`)}; umount ${shellQuote(dir)}; exit $rc`;
    const r = bash(scriptText('write-env', inputs), ['unshare', '-m', 'bash', '-c', setup]);
    assert.equal(r.code, 11, r.stderr);
    assert.equal(readFileSync(`${dir}.after`, 'utf8'), old);
    assert.deepEqual(readFileSync(`${dir}.ls`, 'utf8').split('\n').filter(Boolean), ['.env'], 'no temp file, no backup left');
    const recs = parseRecords(r.stdout);
    assert.match(String(recs.find((x) => x.kind === 'error')?.message), /disk full\?.*old \.env is unchanged/);
    assert.ok(!r.stdout.includes('secret-full-disk') && !r.stderr.includes('secret-full-disk'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.after`, { force: true });
    rmSync(`${dir}.ls`, { force: true });
  }
});

test('exit codes map to PulseError kinds with node, step, meaning and stderr tail', () => {
  const base: RemoteResult = { node: 'spark2', step: 'stop', exitCode: 0, signal: null, records: [], stderrTail: '', rawRecords: [], durationMs: 1 };
  assert.equal(failureOf(base), null);
  const kinds = [[10, 'refused'], [11, 'precondition'], [12, 'temporary'], [13, 'not-ready'], [1, 'script'], [127, 'script']] as const;
  for (const [code, kind] of kinds) assert.equal(failureOf({ ...base, exitCode: code })?.kind, kind, String(code));
  const e = failureOf({ ...base, exitCode: 1, stderrTail: 'a\nb\nstop.sh: boom\n', records: [{ kind: 'error', message: 'stop.sh exited 1' }] });
  assert.equal(e?.message, 'spark2: step stop: the script failed (shell status 1): stop.sh exited 1: stderr: a | b | stop.sh: boom');
  assert.match(failureOf({ ...base, exitCode: null, signal: 'SIGKILL' })?.message ?? '', /killed by SIGKILL/);
  assert.match(failureOf({ ...base, exitCode: 11, records: [{ kind: 'error', message: 'image missing' }] })?.message ?? '', /^spark2: step stop: precondition failed: image missing$/);
});

test('prelude reports the process group first, and the exit-code constants match SCRIPT_EXIT', () => {
  const r = bash(`${readScript('prelude')}\necho "$PULSE_EXIT_REFUSED $PULSE_EXIT_PRECONDITION $PULSE_EXIT_TEMPORARY $PULSE_EXIT_NOT_READY"`);
  const recs = parseRecords(r.stdout);
  assert.equal(recs[0]?.kind, 'pgid');
  assert.equal(typeof recs[0]?.pgid, 'number');
  assert.match(r.stdout, /10 11 12 13/);
});

test('node scripts are found from the source tree also through an npm-link style symlink', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pulse-link-'));
  try {
    symlinkSync(REPO_ROOT, join(dir, 'pulse'));
    const mod = join(dir, 'pulse/dist/runtime/node/script.js');
    const code = `import(${JSON.stringify(mod)}).then((m) => process.stdout.write(m.scriptsDir()))`;
    for (const flags of [[], ['--preserve-symlinks', '--preserve-symlinks-main']]) {
      const out = spawnSync(process.execPath, [...flags, '-e', code], { encoding: 'utf8', cwd: dir });
      assert.equal(out.stdout, join(realpathSync(REPO_ROOT), 'runtime/scripts'), out.stderr);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a script cut short in transit runs nothing (the whole script is one brace group)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pulse-cut-'));
  try {
    const target = join(dir, 'made');
    const text = scriptText('mkdir', { PULSE_MKDIRS: target });
    const cut = bash(text.slice(0, text.length - 3));
    assert.notEqual(cut.code, 0);
    assert.equal(existsSync(target), false);
    assert.equal(parseRecords(cut.stdout).length, 0, 'not even the prelude ran');
    const whole = bash(text);
    assert.equal(whole.code, 0, whole.stderr);
    assert.equal(existsSync(target), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('port.sh: a listener on the port is listed and its holder named, secret flag values hidden; /proc/net/tcp as the kernel writes it', async () => {
  const net = await import('node:net');
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const lib = `${readScript('prelude')}\n${readScript('port')}\n`;
    const holder = `perl -e 'sleep 30' -- --api-key sk-one --hf-token=hf_two HF_TOKEN=three --model m`;
    const out = bash(`${lib}${holder} & p=$!; sleep 0.2\npulse_port_listeners ${port} 127.0.0.1 | cut -f3\npulse_port_listeners ${port} 10.9.9.9 | wc -l\n` +
      `pulse_port_words ${port} '' | grep -c 'held by pid ${process.pid} '\npulse_pid_words $p; echo; kill $p`).stdout.replace(/^@pulse .*\n/, '');
    const [addr, other, named, words] = out.split('\n');
    assert.equal(addr, '127.0.0.1');
    assert.equal(other, '0', 'a socket on 127.0.0.1 does not cover another address');
    assert.equal(named, '1', out);
    assert.match(words ?? '', /^pid \d+ \(uid \d+: perl -e sleep 30 -- --api-key <redacted> --hf-token=<redacted> HF_TOKEN=<redacted> --model m\)$/);
  } finally {
    server.close();
  }
});
