/**
 * Reading an overlay folder built by overlays/qwen38/build.sh: docker-args.txt (pairs, over one or more lines,
 * `#` comment lines) and manifest.json (kept verbatim in the node state).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PulseError } from '../errors.js';
import { displayPath } from '../paths.js';
import { wordProblem } from './safe.js';
import { duplicateMountTarget, parseDockerArgs, type DockerPair } from './docker-args.js';

/** A read and checked overlay folder. */
export interface Overlay {
  /** Absolute path of the overlay folder (as written into `# pulse-overlay:`). */
  dir: string;
  pairs: DockerPair[];
  /** overlaySha256(docker-args.txt bytes, manifest.json bytes). */
  sha256: string;
  manifest: unknown;
}

/**
 * overlay-sha256: sha256 over the exact bytes of docker-args.txt immediately followed by the exact bytes of
 * manifest.json (no separator, no normalisation), hex. Any change to either file changes it.
 */
export function overlaySha256(dockerArgs: Uint8Array, manifest: Uint8Array): string {
  return createHash('sha256').update(dockerArgs).update(manifest).digest('hex');
}

/** The pairs of a docker-args.txt text; errors name `file` and the line of the bad word (`file:line: ...`). */
export function parseOverlayArgs(text: string, file: string): DockerPair[] {
  const lines = text.split('\n').map((l) => (l.trimStart().startsWith('#') ? '' : l));
  const parsed = parseDockerArgs(lines.join('\n'));
  if (!parsed.ok) {
    // The line that holds word number `parsed.word` (words split on white space, as parseDockerArgs splits them).
    const lineOfWord: number[] = lines.flatMap((l, i) => l.split(/\s+/).filter((w) => w !== '').map(() => i + 1));
    const line = lineOfWord[Math.min(parsed.word, lineOfWord.length - 1)] ?? 1;
    throw new PulseError('config', `${file}:${line}: ${parsed.error}`);
  }
  const dup = duplicateMountTarget(parsed.pairs);
  if (dup !== null) throw new PulseError('config', `${file}: two mounts on the same target ${dup}`);
  return parsed.pairs;
}

function readBytes(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    const what = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : (e as Error).message;
    throw new PulseError('config', `${displayPath(file)}: ${what}`, {
      hint: 'build an overlay with overlays/qwen38/build.sh --out DIR --set NAMES',
      cause: e,
    });
  }
}

/** Read and check the overlay in `dir`. */
export function readOverlay(dir: string): Overlay {
  const abs = path.resolve(dir);
  const argsFile = path.join(abs, 'docker-args.txt');
  const manifestFile = path.join(abs, 'manifest.json');
  // The folder goes into the .env header and the plan that node scripts receive: the same word rule as any value.
  const bad = wordProblem(abs);
  if (bad) throw new PulseError('config', `--overlay ${JSON.stringify(abs)}: the folder path ${bad}`);
  const args = readBytes(argsFile);
  const manifestBytes = readBytes(manifestFile);
  let manifest: unknown;
  try {
    manifest = JSON.parse(manifestBytes.toString('utf8'));
  } catch (e) {
    throw new PulseError('config', `${displayPath(manifestFile)}: not valid JSON: ${(e as Error).message}`);
  }
  const pairs = parseOverlayArgs(args.toString('utf8'), displayPath(argsFile));
  return { dir: abs, pairs, sha256: overlaySha256(args, manifestBytes), manifest };
}
