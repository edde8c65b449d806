/**
 * Runs a unit's ExecStart= the way systemd would for a user unit, without systemd: specifiers (%h, %S) and
 * ${VAR} expanded from Environment= then EnvironmentFile= (the later wins), the command split on whitespace, the
 * process started in WorkingDirectory with exactly that environment. Enough for our two units, which use no
 * quoting; anything else is refused rather than guessed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { last, type UnitFile } from './unit-file.js';

export interface UserDirs {
  /** %h */
  home: string;
  /** %S ($XDG_STATE_HOME) */
  state: string;
}

function specifiers(s: string, dirs: UserDirs): string {
  return s.replace(/%(.)/g, (m, c: string) => {
    if (c === 'h') return dirs.home;
    if (c === 'S') return dirs.state;
    if (c === '%') return '%';
    throw new Error(`unit-exec: specifier ${m} is not supported here`);
  });
}

/** KEY=value lines of an environment file (systemd syntax: no expansion, # comments). */
export function readEnvFile(file: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const eq = t.indexOf('=');
    if (eq <= 0) throw new Error(`${file}: not KEY=value: ${t}`);
    env.set(t.slice(0, eq), t.slice(eq + 1));
  }
  return env;
}

/** The unit's environment: Environment= defaults, then the env file's values over them. */
export function unitEnvironment(unit: UnitFile, dirs: UserDirs, envFile: Map<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of unit.get('Service')?.get('Environment') ?? []) {
    const eq = e.indexOf('=');
    env[e.slice(0, eq)] = specifiers(e.slice(eq + 1), dirs);
  }
  for (const [k, v] of envFile) env[k] = v;
  return env;
}

/** ExecStart= as argv, after specifier and ${VAR} expansion. */
export function execArgv(unit: UnitFile, dirs: UserDirs, env: Record<string, string>): string[] {
  const raw = last(unit, 'Service', 'ExecStart');
  if (!raw) throw new Error('unit-exec: no ExecStart=');
  if (/["'\\]/.test(raw) || /^[-@:+!]/.test(raw)) throw new Error(`unit-exec: quoting or prefixes are not supported: ${raw}`);
  const expanded = specifiers(raw, dirs).replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    const v = env[name];
    if (v === undefined) throw new Error(`unit-exec: \${${name}} is not set by the unit or its environment file`);
    return v;
  });
  return expanded.split(/\s+/).filter(Boolean);
}

export interface UnitProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the unit's command (detached into its own process group, so a stop can reach every child). */
export function startUnit(unit: UnitFile, dirs: UserDirs, env: Record<string, string>): UnitProcess {
  const [cmd, ...args] = execArgv(unit, dirs, env);
  const cwd = specifiers(last(unit, 'Service', 'WorkingDirectory') ?? dirs.home, dirs);
  const child = spawn(cmd!, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20000)));
  child.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, output: () => out, exited };
}

/** Kills the whole process group; for cleanup after a failed test. */
export function killUnit(p: UnitProcess): void {
  if (p.child.pid !== undefined && p.child.exitCode === null && p.child.signalCode === null) {
    try {
      process.kill(-p.child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}
