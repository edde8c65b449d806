/**
 * Reading an overlay folder built by overlays/qwen38/build.sh: docker-args.txt (pairs, over one or more lines,
 * `#` comment lines) and manifest.json (kept verbatim in the node state).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PulseError } from '../errors.js';
import { displayPath } from '../state/paths.js';
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
  /** docker-args.txt and manifest.json as text: they travel in the plan, so a worker that has no overlay folder can
   * check the pairs with the same rules and the overlay-sha256 against them (runtime/plan/plan-check.ts). */
  argsText: string;
  manifestText: string;
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

/** The bytes of a file as UTF-8 text; a file that is not valid UTF-8 could not travel in the plan unchanged. */
function utf8(bytes: Buffer, file: string): string {
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) throw new PulseError('config', `${displayPath(file)}: not valid UTF-8`);
  return text;
}

/**
 * Check an overlay from its folder path and its two files' texts: readOverlay (the CLI) and the worker's re-check
 * of a plan (the folder may not exist on the worker host) share these rules. `where` names the files in errors.
 */
export function overlayOf(dir: string, argsText: string, manifestText: string, where = { args: 'docker-args.txt', manifest: 'manifest.json' }): Overlay {
  // The folder goes into the .env header and the plan that node scripts receive: the same word rule as any value.
  const bad = wordProblem(dir);
  if (bad || !path.isAbsolute(dir)) throw new PulseError('config', `--overlay ${JSON.stringify(dir)}: the folder path ${bad ?? 'is not absolute'}`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(manifestText);
  } catch (e) {
    throw new PulseError('config', `${where.manifest}: not valid JSON: ${(e as Error).message}`);
  }
  const pairs = parseOverlayArgs(argsText, where.args);
  const sha256 = overlaySha256(Buffer.from(argsText, 'utf8'), Buffer.from(manifestText, 'utf8'));
  return { dir, pairs, sha256, manifest, argsText, manifestText };
}

/** Read and check the overlay in `dir`. */
export function readOverlay(dir: string): Overlay {
  const abs = path.resolve(dir);
  const bad = wordProblem(abs);
  if (bad) throw new PulseError('config', `--overlay ${JSON.stringify(abs)}: the folder path ${bad}`);
  const argsFile = path.join(abs, 'docker-args.txt');
  const manifestFile = path.join(abs, 'manifest.json');
  const args = utf8(readBytes(argsFile), argsFile);
  const manifestText = utf8(readBytes(manifestFile), manifestFile);
  return overlayOf(abs, args, manifestText, { args: displayPath(argsFile), manifest: displayPath(manifestFile) });
}
