/** One entry for the CLI: load nodes.json, the profiles and an overlay the way every command does. */
import { resolveNodesPath } from '../state/paths.js';
import { loadNodesConfig, type NodesConfig } from './nodes.js';
import { readOverlay, type Overlay } from './overlay.js';
import type { Profile } from './profile.js';
import { loadProfiles } from './profiles.js';

export { loadNodesConfig, nodeOf, parseNodesConfig, targetOf, type NodeConfig, type NodesConfig, type RecipeConfig } from './nodes.js';
export { parseProfile, type Profile, type ProfileEntry } from './profile.js';
export { loadProfiles, profileOf } from './profiles.js';
export { readOverlay, overlaySha256, parseOverlayArgs, type Overlay } from './overlay.js';

/** What every command that plans needs: the checked config, the profiles and the overlay. */
export interface Inputs {
  config: NodesConfig;
  profiles: Map<string, Profile>;
  overlay: Overlay | null;
}

/** nodes.json (--nodes / PULSE_NODES / runtime/nodes.json), the profiles, and the --overlay folder if given. */
export function loadInputs(opts: { nodes?: string | undefined; overlay?: string | undefined }): Inputs {
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const profiles = loadProfiles();
  const overlay = opts.overlay !== undefined ? readOverlay(opts.overlay) : null;
  return { config, profiles, overlay };
}
