/**
 * Assembles the exact text sent to `bash -s`: prelude, exported inputs, step body. The .sh files are not copied to
 * dist/, so they are read from the source tree, found from this module's real location (works under `npm link`).
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PulseError } from '../errors.js';
import { exportsBlock } from './quote.js';
import type { StepName } from './types.js';

let scriptsDirCache: string | null = null;

/** Directory holding runtime/scripts/*.sh: walk up from this module until it appears (dist/ or source tree). */
export function scriptsDir(): string {
  if (scriptsDirCache !== null) return scriptsDirCache;
  let dir = dirname(realpathSync(fileURLToPath(import.meta.url)));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'runtime', 'scripts');
    if (existsSync(join(candidate, 'prelude.sh'))) return (scriptsDirCache = candidate);
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new PulseError('internal', 'cannot find runtime/scripts/prelude.sh above the pulse installation');
}

/** The text of runtime/scripts/<name>.sh. */
export function readScript(name: string): string {
  const file = join(scriptsDir(), `${name}.sh`);
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new PulseError('internal', `cannot read node script ${file}`, { cause: e });
  }
}

/** Helper files a step's body uses besides the prelude: port.sh (who listens on the server's port). */
const LIBRARIES: Partial<Record<StepName, string[]>> = { start: ['port'], verify: ['port'] };

/** The line that stands for the prelude in a step's own part (the dry-run prints the prelude once, before the steps). */
export const PRELUDE_MARK = '# ---- prelude: runtime/scripts/prelude.sh, printed once above ----';

/**
 * The full script of a step: prelude, the step's libraries, then `export` lines, then `pulse_redact_output` (the
 * node's secrets are redacted from all output from here on) and `pulse_sweep_temps` (write-env's temp files that a
 * killed step left in the recipe's dir go), then the step body, all in one `{ ... }` group. bash
 * parses a group completely before it runs any of it, so a script cut short by a dropped link runs nothing, and a
 * command that reads stdin can never swallow the rest of the script.
 */
export function scriptText(step: StepName, env: Record<string, string> = {}): string {
  return assemble(step, env, readScript('prelude'));
}

/** The same script with PRELUDE_MARK in place of the prelude: what is the step's own, for a reader of the dry-run. */
export function scriptOwnText(step: StepName, env: Record<string, string> = {}): string {
  return assemble(step, env, PRELUDE_MARK);
}

function assemble(step: StepName, env: Record<string, string>, prelude: string): string {
  const libs = (LIBRARIES[step] ?? []).map((lib) => `# ---- library: ${lib} ----\n${readScript(lib)}\n`).join('');
  const body = `${prelude}
${libs}# ---- inputs ----
${exportsBlock(env)}
pulse_redact_output
pulse_sweep_temps
# ---- step: ${step} ----
${readScript(step)}`;
  return `{\n${body}${body.endsWith('\n') ? '' : '\n'}}\n`;
}
