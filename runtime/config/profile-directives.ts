/** The `# pulse-*` directives of a profile (spec "Directives"). */
import { placeholderProblem, fillPlaceholders } from './substitute.js';
import { mkdirProblem } from './profile-rules.js';
import { textProblem } from './safe.js';

/** The values of a profile's directives. */
export interface Directives {
  /** pulse-recipe (required): the recipe in the node's recipes. */
  recipe: string;
  status: 'stable' | 'experimental';
  /** pulse-runnable: false makes the profile render-only. */
  runnable: boolean;
  description: string;
  /** pulse-mkdir templates with their lines (substituted at render). */
  mkdirs: { dir: string; line: number }[];
  proofs: string[];
  clientNotes: string[];
}

/** A directive error on one profile line. */
export class DirectiveLineError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/** Directives before any line set them (recipe empty = missing). */
export function emptyDirectives(): Directives {
  return { recipe: '', status: 'stable', runnable: true, description: '', mkdirs: [], proofs: [], clientNotes: [] };
}

const ONCE = new Set(['recipe', 'status', 'runnable', 'description']);
const KNOWN = ['recipe', 'status', 'runnable', 'description', 'mkdir', 'proof', 'client'];

function need(ok: boolean, line: number, message: string): void {
  if (!ok) throw new DirectiveLineError(line, message);
}

function text(name: string, value: string, line: number): string {
  need(value !== '', line, `pulse-${name}: needs a value`);
  const p = textProblem(value);
  need(p === null, line, `pulse-${name}: the text ${p ?? ''}`);
  return value;
}

/** Apply `# pulse-<name>: value` on `line` to `d`; unknown or repeated directives are errors. */
export function applyDirective(d: Directives, name: string, value: string, line: number, seen = seenOf(d)): void {
  need(KNOWN.includes(name), line, `unknown directive pulse-${name}; known: ${KNOWN.map((k) => `pulse-${k}`).join(', ')}`);
  need(!(ONCE.has(name) && seen.has(name)), line, `pulse-${name} occurs more than one time`);
  seen.add(name);
  switch (name) {
    case 'recipe':
      need(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(value), line, `pulse-recipe: "${value}" is not a recipe name`);
      d.recipe = value;
      return;
    case 'status':
      need(value === 'stable' || value === 'experimental', line, `pulse-status: must be stable or experimental, got "${value}"`);
      d.status = value as Directives['status'];
      return;
    case 'runnable':
      need(value === 'true' || value === 'false', line, `pulse-runnable: must be true or false, got "${value}"`);
      d.runnable = value === 'true';
      return;
    case 'description':
      d.description = text(name, value, line);
      return;
    case 'mkdir': {
      const bad = placeholderProblem(value) ?? mkdirProblem(fillPlaceholders(value, () => '/pulse-var'));
      need(bad === null, line, bad?.startsWith('pulse-mkdir') ? bad : `pulse-mkdir: the path ${bad ?? ''}`);
      d.mkdirs.push({ dir: value, line });
      return;
    }
    case 'proof':
      d.proofs.push(text(name, value, line));
      return;
    default:
      d.clientNotes.push(text(name, value, line));
  }
}

/** Which once-only directives `d` already holds, tracked per parse (WeakMap keeps Directives a plain object). */
const seenSets = new WeakMap<Directives, Set<string>>();
function seenOf(d: Directives): Set<string> {
  let s = seenSets.get(d);
  if (!s) seenSets.set(d, (s = new Set()));
  return s;
}
