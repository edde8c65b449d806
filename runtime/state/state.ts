/**
 * pulse's local state: $PULSE_STATE_DIR/nodes/<node>.json (the last up or down on each node) and, through
 * gateway.ts, $PULSE_STATE_DIR/gateway-backends.json. Files are 0600, directories 0700, every write is atomic and
 * taken under the state dir's lock (state-files.ts). No secret is ever stored: writeNodeState redacts any
 * `API_KEY=`/`HF_TOKEN=` value that slipped into a string field (an error line, a log tail).
 */
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PulseError } from '../errors.js';
import { redactSecrets } from '../secrets.js';
import { readFileOrNull, withStateLock, writeFileAtomic } from './state-files.js';
import { checkStateDir } from './state-dir.js';
import type { NodeState, NodeStateKind } from '../model/index.js';

const KINDS: readonly NodeStateKind[] = ['up', 'down', 'failed', 'starting'];
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** $PULSE_STATE_DIR, else $XDG_STATE_HOME/pulse/runtime, else ~/.local/state/pulse/runtime. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['PULSE_STATE_DIR'];
  if (explicit) return path.resolve(explicit);
  const xdg = env['XDG_STATE_HOME'];
  // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'pulse', 'runtime');
  return path.join(env['HOME'] || os.homedir(), '.local', 'state', 'pulse', 'runtime');
}

/**
 * defaultStateDir, refused (one line saying how to fix it, runtime/state/state-dir.ts) when another local user owns
 * it or can write it, or one of its folders; what every command and worker uses. A missing dir passes (nothing to trust).
 */
export function trustedStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = defaultStateDir(env);
  checkStateDir(dir);
  return dir;
}

/** The state file of one node; refuses a node name that could escape nodes/. */
export function nodeStatePath(stateDir: string, node: string): string {
  if (!NODE_NAME.test(node)) throw new PulseError('usage', `invalid node name "${node}" (letters, digits, . _ - only)`);
  return path.join(stateDir, 'nodes', `${node}.json`);
}

/** A copy of the state in which every secret `KEY=…` value inside a string is replaced (runtime/secrets.ts). */
function redact(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]));
  }
  return value;
}

/** Write nodes/<node>.json atomically under the state lock. Returns the file path. */
export async function writeNodeState(stateDir: string, state: NodeState): Promise<string> {
  const file = nodeStatePath(stateDir, state.node);
  checkState(state, file);
  const text = `${JSON.stringify(redact(state), null, 2)}\n`;
  await withStateLock(stateDir, () => writeFileAtomic(file, text));
  return file;
}

function checkState(value: unknown, file: string): asserts value is NodeState {
  const v = value as Partial<NodeState> | null;
  const bad = (why: string): never => {
    throw new PulseError('config', `${file}: ${why}`, { hint: 'remove the file; the next up or down writes it again' });
  };
  if (!v || typeof v !== 'object' || Array.isArray(v)) bad('not a JSON object');
  if (typeof v?.node !== 'string' || !NODE_NAME.test(v.node)) bad('node: expected a node name');
  if (!KINDS.includes(v?.state as NodeStateKind)) bad(`state: expected one of ${KINDS.join(', ')}`);
  if (v?.action !== 'up' && v?.action !== 'down') bad('action: expected up or down');
  if (typeof v?.at !== 'string') bad('at: expected an ISO time');
}

/** Parse one state file's text; a damaged file is a config error naming the file. */
export function parseNodeState(text: string, file: string): NodeState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new PulseError('config', `${file}: not valid JSON`, { hint: 'remove the file; the next up or down writes it again' });
  }
  checkState(value, file);
  return value;
}

/** The saved state of one node, or null when pulse has never written one. Readers need no lock. */
export function readNodeStateSync(stateDir: string, node: string): NodeState | null {
  const file = nodeStatePath(stateDir, node);
  const text = readFileOrNull(file);
  if (text === null) return null;
  const state = parseNodeState(text, file);
  if (state.node !== node) throw new PulseError('config', `${file}: holds the state of node "${state.node}"`);
  return state;
}

/** The saved state of one node, or null when pulse has never written one. */
export async function readNodeState(stateDir: string, node: string): Promise<NodeState | null> {
  return readNodeStateSync(stateDir, node);
}

/** Every readable node state, and a one-line problem for each damaged state file, keyed by node name. */
export function scanNodeStates(stateDir: string): { states: Record<string, NodeState>; damaged: Record<string, string> } {
  const states: Record<string, NodeState> = {};
  const damaged: Record<string, string> = {};
  let names: string[];
  try {
    names = readdirSync(path.join(stateDir, 'nodes'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { states, damaged };
    throw err;
  }
  for (const name of names.sort()) {
    const m = /^(.+)\.json$/.exec(name);
    if (!m?.[1] || !NODE_NAME.test(m[1])) continue; // temp files, foreign files
    try {
      const state = readNodeStateSync(stateDir, m[1]);
      if (state) states[m[1]] = state;
    } catch (e) {
      damaged[m[1]] = (e as Error).message;
    }
  }
  return { states, damaged };
}

/** Every saved node state, keyed by node name (temp files and non-.json entries are ignored; a damaged file throws). */
export function readAllNodeStatesSync(stateDir: string): Record<string, NodeState> {
  const { states, damaged } = scanNodeStates(stateDir);
  const first = Object.values(damaged)[0];
  if (first !== undefined) throw new PulseError('config', first, { hint: 'remove the file; the next up or down writes it again' });
  return states;
}

/** Every saved node state, keyed by node name. */
export async function readAllNodeStates(stateDir: string): Promise<Record<string, NodeState>> {
  return readAllNodeStatesSync(stateDir);
}
