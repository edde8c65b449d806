/**
 * The image every simulated node's engine runs the vLLM from: no registry is reachable, so it is a rootfs tar that
 * `docker import` turns into an image, as one would ship an image to an air-gapped node. The rootfs holds the
 * machine's node binary, perl (vLLM's socket bind step, vllm-bind.ts), bash and a few coreutils, the libraries ldd
 * names for them, and the compiled simulator (/opt/pulse-sim): `vllm` on the PATH runs the simulated server, and
 * /opt/pulse-sim/nvidia-smi is what the stand-in GPU hook shows as /usr/bin/nvidia-smi in a `--gpus` container.
 *
 * The tar is built once per content (compiled sim + binaries) under the temp dir and shared by every test process;
 * each node's daemon imports it under the profile's image name and tags the other names to the same image.
 */
import { execFile, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DOCKER_CLIENT } from './engine.js';
import type { Engine } from './engine.js';
import { DEFAULT_IMAGE, PROBE_IMAGE, PROFILE_IMAGE, SIM_DIST } from './paths.js';
import { BIND_PL } from './vllm-bind.js';

const execFileP = promisify(execFile);

/** Programs of the image (with their libraries): the vLLM's runtime, and what scripts run in a container. */
const PROGRAMS = [
  '/usr/bin/node', '/usr/bin/perl', '/bin/bash', '/bin/sh', '/bin/dash', '/bin/sleep', '/bin/cat', '/usr/bin/env',
  '/bin/true', '/bin/false', '/bin/ls', '/bin/echo', '/usr/bin/head', '/usr/bin/tail', '/bin/kill', '/usr/bin/printf',
  '/bin/mkdir', '/bin/rm', '/usr/bin/id', '/bin/ps', '/bin/grep', '/usr/bin/wc', '/usr/bin/seq', '/bin/date',
  '/usr/bin/tr', '/usr/bin/cut', '/usr/bin/sort', '/bin/touch', '/usr/bin/dirname', '/usr/bin/basename', '/bin/sed',
  '/usr/bin/awk', '/usr/bin/yes', '/bin/stat', '/bin/ln', '/bin/cp', '/bin/mv', '/bin/chmod', '/usr/bin/timeout',
].filter((p) => fs.existsSync(p));

/** Perl's own modules (Socket, Fcntl, strict: what the bind step uses) live in perl-base. */
const PERL_BASE = ['/usr/lib/x86_64-linux-gnu/perl-base', '/usr/lib/aarch64-linux-gnu/perl-base'].filter((p) => fs.existsSync(p));

/** The image's environment, as a CUDA-based vLLM image sets it (`docker import --change`). */
const IMAGE_ENV = [
  'PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  'NVIDIA_VISIBLE_DEVICES=all',
  'NVIDIA_DRIVER_CAPABILITIES=compute,utility',
];

/** Every image name a node has at start: the profiles' image, the recipe's default and the GPU probe's. */
export const NODE_IMAGES = [PROFILE_IMAGE, DEFAULT_IMAGE, PROBE_IMAGE];

const VLLM_ENTRY = `#!/bin/sh
# vllm (pulse simulator image): binds the server's socket as vLLM does (SO_REUSEPORT, before anything loads), then
# execs the simulated server in the same process.
exec /usr/bin/perl /opt/pulse-sim/bind.pl /usr/bin/node /opt/pulse-sim/vllm.js "$@"
`;

const NVIDIA_SMI_ENTRY = `#!/bin/sh
# nvidia-smi as the GPU hook shows it inside a --gpus container (pulse simulator image).
SIM_IN_CONTAINER=1 exec /usr/bin/node /opt/pulse-sim/nvidia-smi.js "$@"
`;

function simFiles(): string[] {
  return fs.readdirSync(SIM_DIST).filter((f) => f.endsWith('.js')).sort();
}

/** Content hash of what goes into the image (the sim's compiled code, the entry points, the binaries). */
function imageHash(): string {
  const h = crypto.createHash('sha256');
  for (const f of simFiles()) h.update(f).update(fs.readFileSync(path.join(SIM_DIST, f)));
  h.update(VLLM_ENTRY).update(NVIDIA_SMI_ENTRY).update(BIND_PL).update(IMAGE_ENV.join('\n'));
  for (const p of PROGRAMS) {
    const st = fs.statSync(fs.realpathSync(p));
    h.update(`${p}:${st.size}:${st.mtimeMs}`);
  }
  return h.digest('hex').slice(0, 16);
}

/** Libraries a program needs, as ldd names them. */
function libraries(program: string): string[] {
  try {
    const out = execFileSync('ldd', [program], { encoding: 'utf8' });
    return [...out.matchAll(/(\/[^\s]+)/g)].map((m) => m[1]!).filter((l) => fs.existsSync(l));
  } catch {
    return [];
  }
}

function copyInto(root: string, file: string): void {
  const dst = path.join(root, file);
  if (fs.existsSync(dst)) return;
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  fs.copyFileSync(fs.realpathSync(file), dst);
  fs.chmodSync(dst, fs.statSync(fs.realpathSync(file)).mode & 0o777);
}

/** Builds the rootfs tar (or finds it built); returns its path. */
export function buildImageTar(): string {
  const cache = path.join(os.tmpdir(), 'pulse-sim-image');
  fs.mkdirSync(cache, { recursive: true });
  const tar = path.join(cache, `rootfs-${imageHash()}.tar`);
  if (fs.existsSync(tar)) return tar;
  const root = fs.mkdtempSync(path.join(cache, 'build-'));
  try {
    for (const p of PROGRAMS) {
      copyInto(root, p);
      for (const lib of libraries(fs.realpathSync(p))) copyInto(root, lib);
    }
    for (const dir of PERL_BASE) fs.cpSync(dir, path.join(root, dir), { recursive: true, dereference: true });
    for (const d of ['etc', 'root', 'run/pulse-sim', 'proc', 'sys', 'dev', 'usr/local/bin', 'opt/pulse-sim']) fs.mkdirSync(path.join(root, d), { recursive: true });
    fs.mkdirSync(path.join(root, 'tmp'), { mode: 0o1777 });
    fs.chmodSync(path.join(root, 'tmp'), 0o1777);
    fs.writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
    fs.writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\n');
    const opt = path.join(root, 'opt/pulse-sim');
    for (const f of simFiles()) fs.copyFileSync(path.join(SIM_DIST, f), path.join(opt, f));
    fs.writeFileSync(path.join(opt, 'package.json'), '{"type":"module"}\n');
    fs.writeFileSync(path.join(opt, 'bind.pl'), BIND_PL);
    fs.writeFileSync(path.join(opt, 'nvidia-smi'), NVIDIA_SMI_ENTRY, { mode: 0o755 });
    fs.writeFileSync(path.join(root, 'usr/local/bin/vllm'), VLLM_ENTRY, { mode: 0o755 });
    const tmp = `${tar}.${process.pid}.tmp`;
    execFileSync('tar', ['-C', root, '--owner=0', '--group=0', '--numeric-owner', '-cf', tmp, '.']);
    fs.renameSync(tmp, tar);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  return tar;
}

/**
 * A data root with the image imported (its `image/` and `overlay2/` trees and the image id), made once per image
 * content by a dockerd of its own and shared by every node of every test process: a node's data root starts as
 * hard links to it (`cp -al`), which the daemon then treats as its own. An image layer is only ever read (the
 * containers' writes go to their own upper dirs) and the daemon replaces its metadata files by rename, never in
 * place, so no node can change another's copy; the databases the daemon writes in place (networks, volumes,
 * containerd) are not in the template and start empty on every node. Resolves with the template's dir.
 */
export async function imageTemplate(tar: string): Promise<string> {
  const dir = tar.replace(/\.tar$/, '.root');
  if (fs.existsSync(path.join(dir, 'image-id'))) return dir;
  const tmp = `${dir}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  const { Engine, enginePaths } = await import('./engine.js');
  const engine = new Engine(enginePaths(tmp), `pulse-sim/template-${process.pid}`, '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', {});
  try {
    await engine.start();
    const id = await importImage(engine, tar);
    await engine.stop();
    const keep = path.join(tmp, 'keep');
    fs.mkdirSync(keep);
    for (const d of ['image', 'overlay2']) fs.renameSync(path.join(tmp, 'data', d), path.join(keep, d));
    fs.writeFileSync(path.join(keep, 'image-id'), `${id}\n`);
    try {
      fs.renameSync(keep, dir);
    } catch {
      /* another process made it first: theirs is the same */
    }
  } finally {
    engine.kill();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** Seeds a node's (not yet started) data root from the template; returns the image id every node name points to. */
export function seedDataRoot(template: string, dataRoot: string): string {
  fs.mkdirSync(dataRoot, { recursive: true });
  execFileSync('cp', ['-al', path.join(template, 'image'), path.join(template, 'overlay2'), `${dataRoot}/`]);
  return fs.readFileSync(path.join(template, 'image-id'), 'utf8').trim();
}

/** Imports the image into a node's daemon under every name in `names` (the first import, the others tags). */
export async function importImage(engine: Engine, tar: string, names: string[] = NODE_IMAGES): Promise<string> {
  const [first, ...rest] = names;
  const changes = IMAGE_ENV.flatMap((e) => ['--change', `ENV ${e}`]);
  const { stdout } = await execFileP(DOCKER_CLIENT, ['--host', `unix://${engine.paths.sock}`, 'import', ...changes, tar, first!], { encoding: 'utf8' });
  const id = stdout.trim();
  for (const n of rest) await execFileP(DOCKER_CLIENT, ['--host', `unix://${engine.paths.sock}`, 'tag', id, n]);
  return id;
}

