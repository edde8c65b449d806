import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint, hostFieldMatches, knownTypes, lookupName, verifyHostKey } from '../../runtime/node/known-hosts.js';
import { parseSshG } from '../../runtime/node/ssh-config.js';

let dir = '';
const keys: Record<string, { line: string; blob: Buffer }> = {};

function keygen(name: string, type = 'ed25519'): { line: string; blob: Buffer } {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', file]);
  const line = readFileSync(`${file}.pub`, 'utf8').trim();
  return { line, blob: Buffer.from(line.split(' ')[1] ?? '', 'base64') };
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'pulse-kh-'));
  keys.a = keygen('a');
  keys.b = keygen('b');
  keys.r = keygen('r', 'rsa');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const kh = (name: string, text: string): string => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const typeAndKey = (k: { line: string }): string => k.line.split(' ').slice(0, 2).join(' ');

test('a plain entry accepts the right key, and a changed key is refused naming the file and fingerprint', () => {
  const f = kh('plain', `# comment\n\nspark2,10.0.0.2 ${typeAndKey(keys.a!)}\n`);
  assert.deepEqual(verifyHostKey(keys.a!.blob, 'spark2', 22, [f], 'ask'), { ok: true, warning: null });
  const v = verifyHostKey(keys.b!.blob, 'spark2', 22, [f], 'no');
  assert.equal(v.ok, false);
  assert.ok(!v.ok && v.reason.includes('HOST KEY CHANGED') && v.reason.includes(`${f}:3`) && v.reason.includes(fingerprint(keys.b!.blob)));
});

test('an unknown host is refused, unless the user config says StrictHostKeyChecking no (with a warning)', () => {
  const f = kh('other', `elsewhere ${typeAndKey(keys.a!)}\n`);
  const v = verifyHostKey(keys.a!.blob, 'spark3', 22, [f, join(dir, 'missing')], 'yes');
  assert.ok(!v.ok && v.reason.startsWith('unknown host key for spark3') && v.reason.includes(f) && v.reason.includes(fingerprint(keys.a!.blob)));
  assert.equal(verifyHostKey(keys.a!.blob, 'spark3', 22, [f], 'ask').ok, false);
  const ok = verifyHostKey(keys.a!.blob, 'spark3', 22, [f], 'no');
  assert.ok(ok.ok && ok.warning?.includes('StrictHostKeyChecking'));
});

test('hashed entries and [host]:port entries match as OpenSSH does', () => {
  const f = kh('hashed', `127.0.0.5 ${typeAndKey(keys.a!)}\n[127.0.0.6]:2222 ${typeAndKey(keys.b!)}\n`);
  execFileSync('ssh-keygen', ['-q', '-H', '-f', f]);
  const text = readFileSync(f, 'utf8');
  assert.ok(text.startsWith('|1|') && !text.includes('127.0.0'));
  assert.equal(verifyHostKey(keys.a!.blob, '127.0.0.5', 22, [f], 'yes').ok, true);
  assert.equal(verifyHostKey(keys.b!.blob, '127.0.0.6', 2222, [f], 'yes').ok, true);
  assert.equal(verifyHostKey(keys.b!.blob, '127.0.0.6', 22, [f], 'yes').ok, false);
  assert.equal(verifyHostKey(keys.a!.blob, '127.0.0.6', 2222, [f], 'no').ok, false, 'changed key under a hashed entry');
  assert.deepEqual(knownTypes([f], '127.0.0.6', 2222), ['ssh-ed25519']);
});

test('@revoked refuses; @cert-authority lines are ignored; patterns and negation', () => {
  const f = kh('marked', `@revoked * ${typeAndKey(keys.a!)}\n@cert-authority * ${typeAndKey(keys.b!)}\n`);
  const v = verifyHostKey(keys.a!.blob, 'x', 22, [f], 'no');
  assert.ok(!v.ok && v.reason.includes('@revoked'));
  assert.equal(verifyHostKey(keys.b!.blob, 'x', 22, [f], 'yes').ok, false);
  assert.equal(hostFieldMatches('spark*,!spark9', 'spark2'), true);
  assert.equal(hostFieldMatches('spark*,!spark9', 'spark9'), false);
  assert.equal(hostFieldMatches('spark?', 'SPARK1'), true);
  assert.equal(lookupName('h', 2222), '[h]:2222');
});

test('an RSA key of the same host does not confuse the ed25519 check', () => {
  const f = kh('multi', `h ${typeAndKey(keys.r!)}\nh ${typeAndKey(keys.a!)}\n`);
  assert.equal(verifyHostKey(keys.a!.blob, 'h', 22, [f], 'yes').ok, true);
  assert.equal(verifyHostKey(keys.r!.blob, 'h', 22, [f], 'yes').ok, true);
  assert.equal(verifyHostKey(keys.b!.blob, 'h', 22, [f], 'no').ok, false);
});

test('ssh -G output is parsed into the settings pulse uses', () => {
  const s = parseSshG('spark2', [
    'user ops', 'hostname 127.0.0.9', 'port 2222', 'identityfile ~/.ssh/id_ed25519', 'identityfile /k2',
    'proxyjump bastion', 'stricthostkeychecking No', 'userknownhostsfile ~/.ssh/known_hosts /kh2',
    'globalknownhostsfile /etc/ssh/ssh_known_hosts', 'connecttimeout 7', 'proxycommand none', 'identitiesonly yes',
  ].join('\n'));
  assert.equal(s.user, 'ops');
  assert.equal(s.hostname, '127.0.0.9');
  assert.equal(s.port, 2222);
  assert.equal(s.identityFiles.length, 2);
  assert.ok(!s.identityFiles[0]!.startsWith('~'));
  assert.deepEqual(s.proxyJump, ['bastion']);
  assert.equal(s.proxyCommand, null);
  assert.equal(s.strictHostKeyChecking, 'no');
  assert.equal(s.knownHostsFiles.length, 3);
  assert.equal(s.connectTimeoutS, 7);
  assert.equal(s.identitiesOnly, true);
});
