/**
 * The worker image (Dockerfile, .dockerignore), checked without a Docker engine: pinned base images whose node
 * satisfies package.json, every COPY source present and not ignored, no site data or secret in the build context,
 * and an entry point that runs the same CLI `pulse worker` as everywhere else.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { envOf, imageTag, loadCompose, mountsOf } from './compose-file.js';
import { REPO_ROOT } from '../helpers/paths.js';

const dockerfile = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
const ignore = readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };

/** Instructions, with continuation lines joined. */
const instructions = dockerfile.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
const froms = instructions.filter((l) => /^FROM\s/i.test(l)).map((l) => l.split(/\s+/)[1]!);

function ignored(rel: string): boolean {
  const parts = rel.split('/');
  return ignore.some((pat) => parts.some((_p, i) => parts.slice(0, i + 1).join('/') === pat.replace(/\/$/, '')));
}

test('base images are pinned node releases that satisfy package.json engines', () => {
  assert.ok(froms.length >= 2, 'a build stage and a runtime stage');
  const [minMajor, minMinor] = (/>=\s*(\d+)\.(\d+)/.exec(pkg.engines.node) ?? []).slice(1).map(Number);
  for (const from of froms) {
    const { repo, tag } = imageTag(from);
    assert.equal(repo, 'node');
    const m = /^(\d+)\.(\d+)\.(\d+)-bookworm-slim$/.exec(tag);
    assert.ok(m, `${from}: pin an exact node release on Debian bookworm (glibc for the Temporal core bridge)`);
    const [major, minor] = [Number(m[1]), Number(m[2])];
    assert.ok(major > minMajor! || (major === minMajor && minor >= minMinor!), `${from} is older than engines ${pkg.engines.node}`);
  }
  assert.equal(new Set(froms).size, 1, 'build and runtime stages use the same node');
});

test('every COPY source exists and is not excluded by .dockerignore', () => {
  const copies = instructions.filter((l) => /^COPY\s/i.test(l) && !/--from=/.test(l));
  assert.ok(copies.length > 0);
  for (const c of copies) {
    const args = c.split(/\s+/).slice(1).filter((a) => !a.startsWith('--'));
    for (const src of args.slice(0, -1)) {
      assert.ok(existsSync(path.join(REPO_ROOT, src)), `COPY ${src}: missing`);
      assert.ok(!ignored(src), `COPY ${src}: excluded by .dockerignore`);
    }
  }
});

test('the build context leaves out site data, secrets and local builds', () => {
  for (const p of ['.git', 'node_modules', 'dist', '.tools', 'test-output', 'runtime/nodes.json', 'deploy/compose/secrets', 'deploy/compose/ssh', '.env']) {
    assert.ok(ignored(p), `.dockerignore must exclude ${p}`);
  }
  // The runtime data the activities read must reach the image.
  for (const p of ['runtime/scripts', 'runtime/qwen38']) {
    if (existsSync(path.join(REPO_ROOT, p))) assert.ok(!ignored(p), `${p} must be in the image`);
  }
});

/** Bare module specifiers that production sources import at run time (type-only imports are erased). */
function runtimeImports(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const src = readFileSync(file, 'utf8');
    const specs = [
      ...[...src.matchAll(/^\s*import\s+(?!type\s)[^'"]*?from\s+'([^']+)'/gm)].map((m) => m[1]!),
      ...[...src.matchAll(/^\s*import\s+'([^']+)'/gm)].map((m) => m[1]!),
      ...[...src.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!),
    ];
    for (const spec of specs) if (!spec.startsWith('.') && !spec.startsWith('node:')) found.set(spec, path.relative(REPO_ROOT, file));
  }
  return found;
}

test('production code imports only packages the runtime stage installs (npm ci --omit=dev)', () => {
  const deps = new Set(Object.keys((pkg as { dependencies?: Record<string, string> }).dependencies ?? {}));
  const builtins = new Set(builtinModules);
  for (const dir of ['cli', 'worker', 'activities', 'runtime', 'workflows']) {
    for (const [spec, file] of runtimeImports(path.join(REPO_ROOT, dir))) {
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
      if (builtins.has(name)) continue;
      // build-bundle.ts runs in the build stage only (webpack through @temporalio/worker, a dependency anyway).
      assert.ok(deps.has(name), `${file} imports ${spec}, which is not in package.json dependencies`);
    }
  }
});

// What the image runs (its build steps, USER, ENTRYPOINT) is not restated here as regexes of the Dockerfile: that could
// only fail when the Dockerfile is edited, never when the image misbehaves, and the image cannot be built here (its
// pinned base images come from a registry). What two files must agree on stays: compose's command and state dir.
test('docker-compose.yml runs the image\'s entry point with `worker`, and the image\'s state dir is compose\'s volume, owned by its user', () => {
  const entry = instructions.filter((l) => /^ENTRYPOINT\s/.test(l)).at(-1) ?? '';
  assert.match(entry, /bin\/pulse-cli"\]$/, 'the entry point is the CLI, so compose\'s command is its arguments');
  const user = instructions.filter((l) => /^USER\s/.test(l)).at(-1)?.split(/\s+/)[1] ?? '';
  assert.ok(user !== '' && user !== 'root' && user !== '0', `the image runs as a user of its own (USER ${user})`);
  // compose's command must be arguments of that entry point.
  const { compose } = loadCompose(REPO_ROOT);
  const worker = Object.values(compose.services).find((s) => s['build']);
  assert.ok(worker);
  assert.equal((worker['command'] as string[])[0], 'worker');
  // The state dir: the image's default is compose's, and the image creates the volume's mount point owned by
  // its user, so a fresh named volume starts writable for the worker.
  const stateDir = envOf(worker)['PULSE_STATE_DIR'];
  assert.ok(instructions.includes(`ENV PULSE_STATE_DIR=${stateDir}`), `ENV PULSE_STATE_DIR=${stateDir}`);
  const volume = mountsOf(worker).find((m) => m.type === 'volume');
  assert.ok(volume && stateDir?.startsWith(`${volume.target}/`));
  const mk = instructions.find((l) => /^RUN mkdir -p /.test(l)) ?? '';
  assert.ok(mk.includes(stateDir!) && mk.includes(`chown -R ${user}:${user} ${volume.target}`), mk);
});
