/**
 * Rendering a profile for a node: a pure function of (profile, node, recipe, overlay, time) → the recipe .env
 * text, its key map and identity, the merged mounts and the directives. No I/O: the dry-run prints exactly this.
 */
import type { EnvIdentity, PlanMount } from '../model/index.js';
import { sha256OfLines, type EnvHeader } from '../config/env-header.js';
import { PulseError } from '../errors.js';
import { utc } from '../format.js';
import { pairText, parseDockerArgs, type DockerPair } from '../config/docker-args.js';
import { mergeDockerPairs } from '../config/merge-mounts.js';
import type { NodeConfig, RecipeConfig } from '../config/nodes.js';
import type { Overlay } from '../config/overlay.js';
import type { Profile, ProfileEntry } from '../config/profile.js';
import { MULTILINE_KEYS, NODE_KEYS, mkdirProblem, valueProblem } from '../config/profile-rules.js';
import { substitute } from '../config/substitute.js';

export { assignmentLines, envBodySha256, identityOf, parseEnvHeader, sameIdentity, type EnvHeader } from '../config/env-header.js';

/** Everything a render depends on; nothing else (no clock, no files). */
export interface RenderInput {
  profile: Profile;
  nodeName: string;
  node: NodeConfig;
  recipeName: string;
  recipe: RecipeConfig;
  overlay: Overlay | null;
  overlayWins: boolean;
  now: Date;
}

/** The rendered .env and what the plan takes from the render. */
export interface Rendered {
  text: string;
  values: Record<string, string>;
  identity: EnvIdentity;
  mounts: PlanMount[];
  replacements: string[];
  mkdirs: string[];
  proofs: string[];
  clientNotes: string[];
  renderedAt: string;
}


/** The {{name}} values for a node and recipe: node vars, then recipe vars (more specific wins), then recipeDir. */
export function varsFor(node: NodeConfig, recipe: RecipeConfig): Record<string, string> {
  return { ...node.vars, ...(recipe.vars ?? {}), recipeDir: recipe.dir };
}

function fill(template: string, vars: Record<string, string>, where: string): string {
  const r = substitute(template, vars);
  if (!r.ok) throw new PulseError('config', `${where}: unknown {{${r.unknown}}}; known: ${Object.keys(vars).join(', ')}`);
  return r.value;
}

/** Substitute one entry and check that the result still obeys the rules (a var cannot smuggle a `$` in). */
function renderEntry(p: Profile, e: ProfileEntry, vars: Record<string, string>): string {
  const where = `${p.file}:${e.line}`;
  let value = fill(e.value, vars, where);
  if ((MULTILINE_KEYS as readonly string[]).includes(e.key)) value = value.split(/\s+/).filter((w) => w !== '').join(' ');
  const problem = valueProblem(e.key, value, e.quoted);
  if (problem) throw new PulseError('config', `${where}: after {{name}} substitution, ${problem}`);
  return value;
}

function pairsOrThrow(text: string, where: string): DockerPair[] {
  const parsed = parseDockerArgs(text);
  if (!parsed.ok) throw new PulseError('config', `${where}: ${parsed.error}`);
  return parsed.pairs;
}

function nodeAssignments(node: NodeConfig): [string, string][] {
  return NODE_KEYS.flatMap((k): [string, string][] => {
    const v = node.env[k];
    return v === undefined ? [] : [[k, v]];
  });
}

/** Render `profile` for a node (pure). Throws PulseError('config') with the profile line or nodes.json path. */
export function renderEnv(input: RenderInput): Rendered {
  const { profile, node, recipe, overlay } = input;
  const vars = varsFor(node, recipe);
  const recipeWhere = `nodes.${input.nodeName}.recipes.${input.recipeName}.dockerArgs`;
  const assigned: [string, string][] = profile.entries.map((e) => [e.key, renderEntry(profile, e, vars)]);
  const dockerEntry = profile.entries.find((e) => e.key === 'EXTRA_DOCKER_ARGS');
  const merged = mergeDockerPairs({
    recipePairs: pairsOrThrow(fill(recipe.dockerArgs ?? '', vars, recipeWhere), recipeWhere),
    profilePairs: pairsOrThrow(assigned.find(([k]) => k === 'EXTRA_DOCKER_ARGS')?.[1] ?? '', profile.file),
    overlayPairs: overlay?.pairs ?? [],
    overlayWins: input.overlayWins,
    recipeWhere,
    profileWhere: `${profile.file}:${dockerEntry?.line ?? 1}`,
    overlayWhere: overlay ? `${overlay.dir}/docker-args.txt` : '(no overlay)',
  });
  const dockerValue = merged.pairs.map(pairText).join(' ');
  const body = assigned.map(([k, v]): [string, string] => (k === 'EXTRA_DOCKER_ARGS' ? [k, dockerValue] : [k, v]));
  if (!dockerEntry && overlay) body.push(['EXTRA_DOCKER_ARGS', dockerValue]);
  const all = [...nodeAssignments(node), ...body];
  const lines = all.map(([k, v]) => `${k}="${v}"`);
  const sha256 = sha256OfLines(lines);
  const overlayLine = overlay ? `${overlay.dir} overlay-sha256=${overlay.sha256}` : 'none';
  const renderedAt = utc(input.now); // as in `# pulse-rendered:` (2026-09-23T10:15:00Z)
  const header = headerLines({ profile: profile.name, node: input.nodeName, recipe: input.recipeName, overlay: overlayLine, rendered: renderedAt, sha256 });
  return {
    text: [...header, ...lines].map((l) => `${l}\n`).join(''),
    values: Object.fromEntries(all),
    identity: { sha256, profile: profile.name, overlay: overlayLine },
    mounts: merged.mounts,
    replacements: merged.replacements,
    mkdirs: renderMkdirs(profile, vars),
    proofs: [...profile.proofs],
    clientNotes: [...profile.clientNotes],
    renderedAt,
  };
}

/** The six header lines, exactly as the spec shows them. */
function headerLines(h: EnvHeader): string[] {
  return [
    `# pulse-profile: ${h.profile}`,
    `# pulse-node: ${h.node}`,
    `# pulse-recipe: ${h.recipe}`,
    `# pulse-overlay: ${h.overlay}`,
    `# pulse-rendered: ${h.rendered}`,
    `# pulse-sha256: ${h.sha256}`,
  ];
}

function renderMkdirs(profile: Profile, vars: Record<string, string>): string[] {
  const out: string[] = [];
  for (const m of profile.mkdirs) {
    const dir = fill(m.dir, vars, `${profile.file}:${m.line}`);
    const problem = mkdirProblem(dir);
    if (problem) throw new PulseError('config', `${profile.file}:${m.line}: after {{name}} substitution, ${problem}`);
    if (!out.includes(dir)) out.push(dir);
  }
  return out;
}
