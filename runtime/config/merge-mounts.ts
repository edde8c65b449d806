/**
 * Merging the docker pairs of the recipe, the profile and the overlay, with the spec's conflict rules:
 * a mount on a target the recipe mounts itself is always an error; an overlay mount on a profile mount's target
 * is an error unless --overlay-wins, and then it replaces the profile mount (and the plan shows it).
 */
import type { PlanMount } from '../model/index.js';
import { PulseError } from '../errors.js';
import { mountKey, pairText, type DockerPair } from './docker-args.js';

/** The three pair lists to merge and where each came from (for messages). */
export interface MergeInput {
  recipePairs: DockerPair[];
  profilePairs: DockerPair[];
  overlayPairs: DockerPair[];
  overlayWins: boolean;
  /** For messages: where each list came from. */
  recipeWhere: string;
  profileWhere: string;
  overlayWhere: string;
}

/** The merged EXTRA_DOCKER_ARGS pairs, every mount with its origin, and the --overlay-wins replacements. */
export interface Merged {
  /** Pairs of EXTRA_DOCKER_ARGS after the merge (profile order, then the overlay's). */
  pairs: DockerPair[];
  mounts: PlanMount[];
  replacements: string[];
}

function mountsOf(pairs: DockerPair[], from: PlanMount['from']): PlanMount[] {
  return pairs.flatMap((p) => (p.kind === 'mount' ? [{ src: p.src, dst: p.dst, mode: p.mode, from }] : []));
}

function refuseDuplicates(pairs: DockerPair[], where: string): void {
  const seen = new Set<string>();
  for (const m of mountsOf(pairs, 'profile')) {
    if (seen.has(mountKey(m.dst))) throw new PulseError('config', `${where}: two mounts on the same target ${m.dst}`);
    seen.add(mountKey(m.dst));
  }
}

function refuseRecipeTargets(pairs: DockerPair[], recipeTargets: Set<string>, where: string, recipeWhere: string): void {
  for (const m of mountsOf(pairs, 'profile')) {
    if (recipeTargets.has(mountKey(m.dst))) {
      throw new PulseError('config', `${where}: a mount on ${m.dst} is not allowed: the recipe mounts that path itself (${recipeWhere})`);
    }
  }
}

/** Merge the three pair lists; throws PulseError('config') on a conflict. */
export function mergeDockerPairs(input: MergeInput): Merged {
  const recipeTargets = new Set(mountsOf(input.recipePairs, 'node').map((m) => mountKey(m.dst)));
  refuseDuplicates(input.profilePairs, input.profileWhere);
  refuseRecipeTargets(input.profilePairs, recipeTargets, input.profileWhere, input.recipeWhere);
  refuseRecipeTargets(input.overlayPairs, recipeTargets, input.overlayWhere, input.recipeWhere);
  const overlayByTarget = new Map(mountsOf(input.overlayPairs, 'overlay').map((m) => [mountKey(m.dst), m]));
  const replacements: string[] = [];
  const kept = input.profilePairs.filter((p) => {
    if (p.kind !== 'mount') return true;
    const over = overlayByTarget.get(mountKey(p.dst));
    if (!over) return true;
    if (!input.overlayWins) {
      throw new PulseError('config', `${input.overlayWhere}: the overlay mounts ${over.dst}, which the profile mounts too (${pairText(p)})`, {
        hint: 'use --overlay-wins to let the overlay mount replace the profile mount',
      });
    }
    replacements.push(`overlay mount ${over.src}:${over.dst} replaces profile mount ${p.src}:${p.dst}`);
    return false;
  });
  const pairs = [...kept, ...input.overlayPairs];
  const mounts = [...mountsOf(input.recipePairs, 'node'), ...mountsOf(kept, 'profile'), ...mountsOf(input.overlayPairs, 'overlay')];
  return { pairs, mounts, replacements };
}
