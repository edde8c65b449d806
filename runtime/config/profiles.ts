/** Loading the shipped profiles (runtime/qwen38/profiles/*.env) and looking one up by name. */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { PulseError } from '../errors.js';
import { unknownName } from '../suggest.js';
import { displayPath, profilesDir } from '../state/paths.js';
import { parseProfile, type Profile } from './profile.js';
import { recipeKeysProblem } from './profile-rules.js';

/**
 * Every `*.env` in `dir`, parsed, sorted by name. A bad profile fails the whole load with its file:line, and so does
 * a runnable one that leaves a recipe key unset.
 */
export function loadProfiles(dir: string = profilesDir()): Map<string, Profile> {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.env')).sort();
  } catch (e) {
    throw new PulseError('config', `${displayPath(dir)}: cannot list the profiles: ${(e as Error).message}`, { cause: e });
  }
  const out = new Map<string, Profile>();
  for (const f of files) {
    const full = path.join(dir, f);
    // The name travels into commands, workflow search attributes and the .env header.
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(path.basename(f, '.env'))) {
      throw new PulseError('config', `${displayPath(full)}: a profile file name holds only letters, digits and _ . - (before .env)`);
    }
    const profile = parseProfile(readFileSync(full, 'utf8'), displayPath(full));
    // Checked on the whole file, after its lines: a fragment parsed alone (tests, the render re-check) is not a profile.
    const incomplete = recipeKeysProblem(profile.entries.map((e) => e.key), profile.runnable);
    if (incomplete) throw new PulseError('config', `${displayPath(full)}: ${incomplete}`);
    out.set(path.basename(f, '.env'), profile);
  }
  return out;
}

/** The profile named `name`, or a config error that lists the known profiles and the closest one. */
export function profileOf(profiles: ReadonlyMap<string, Profile>, name: string): Profile {
  const p = profiles.get(name);
  if (!p) throw new PulseError('config', unknownName('profile', name, [...profiles.keys()]));
  return p;
}
