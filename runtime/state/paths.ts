/**
 * Where pulse finds its files: the repo root (resolved from this module's own location, so it works from dist/
 * and from a global `npm link`), the default nodes.json, the profiles folder.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cachedRoot: string | null = null;

/** The pulse repo root: the nearest folder above this module that holds package.json and runtime/. */
export function repoRoot(): string {
  if (cachedRoot !== null) return cachedRoot;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'runtime'))) break;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('pulse: cannot find the repo root above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
  cachedRoot = dir;
  return dir;
}

/** runtime/nodes.json in the repo (gitignored; copied from runtime/nodes.example.json). */
export function defaultNodesPath(): string {
  return path.join(repoRoot(), 'runtime', 'nodes.json');
}

/**
 * The nodes.json to use: --nodes FILE, else $PULSE_NODES, else runtime/nodes.json. A given path is kept as the
 * user wrote it (relative to the cwd), so errors name the file the way the user named it.
 */
export function resolveNodesPath(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = option ?? env['PULSE_NODES'];
  return chosen !== undefined && chosen !== '' ? chosen : defaultNodesPath();
}

/** How to name a file in an error: as given when relative; an absolute one relative to the cwd when below it. */
export function displayPath(file: string): string {
  if (!path.isAbsolute(file)) return file;
  const rel = path.relative(process.cwd(), file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/** The profiles folder: $PULSE_PROFILES_DIR (tests, sites with their own profiles), else the shipped qwen38 ones. */
export function profilesDir(env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env['PULSE_PROFILES_DIR'];
  return chosen !== undefined && chosen !== '' ? path.resolve(chosen) : path.join(repoRoot(), 'runtime', 'qwen38', 'profiles');
}
