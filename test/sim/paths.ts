/**
 * Where everything of one simulated node lives. All paths are absolute, so the node scripts (which run on the same
 * machine, inside the node's sshd mount namespace) see exactly the files the test sees.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../helpers/paths.js';

/** The compiled sim entry points (docker, vLLM, nvidia-smi) live next to this module in dist/. */
export const SIM_DIST = path.dirname(fileURLToPath(import.meta.url));
/** Bash assets (recipe lookalike, sudo) are not copied to dist/: read them from the source tree. */
export const SIM_ASSETS = path.join(REPO_ROOT, 'test/sim/assets');

export const RECIPE_NAME = 'qwen38-flash';
export const CONTAINER_NAME = 'vllm-qwen38';
export const MODEL_ID = 'Qwen/Qwen3.8-Flash-Next';
export const MODEL_REV = '5f1c0a9e3b7d2c4f8a6e1b0d9c3f7a2e5b8d4c1f';
/** The image the shipped profiles use, and the recipe's built-in default (both "pulled" on every node). */
export const PROFILE_IMAGE = 'vllm-qwen38:spark-tuning-c840e30';
export const DEFAULT_IMAGE = 'vllm-qwen38:spark-tuning-a41f2e7';
export const PROBE_IMAGE = 'nvidia/cuda:13.0.1-base-ubuntu24.04';

/** The paths of one node's tree under the sim dir. */
export interface NodePaths {
  root: string;
  recipeDir: string;
  envPath: string;
  logsDir: string;
  hfHome: string;
  modelSnapshot: string;
  tritonCache: string;
  captureDir: string;
  /** The two-node recipe (render-only tp2 profile); installed on the first node only. */
  dualRecipeDir: string;
  mtpShardR2: string;
  binDir: string;
  dockerDir: string;
  /** Sim bookkeeping: controls, counters, request log, meminfo source. */
  state: string;
  meminfo: string;
  watermark: string;
  sshDir: string;
  /** This node's own ~/.local/state/pulse (bind-mounted over the ssh user's in the node's mount namespace). */
  homeState: string;
}

/** Computes the tree of node `name` under `simDir`. */
export function nodePaths(simDir: string, name: string): NodePaths {
  const root = path.join(simDir, 'nodes', name);
  const recipeDir = path.join(root, 'recipes', RECIPE_NAME);
  const hfHome = path.join(root, 'hf');
  const repoDir = `models--${MODEL_ID.replace('/', '--')}`;
  const state = path.join(root, 'sim');
  return {
    root,
    recipeDir,
    envPath: path.join(recipeDir, '.env'),
    logsDir: path.join(recipeDir, 'logs'),
    hfHome,
    modelSnapshot: path.join(hfHome, 'hub', repoDir, 'snapshots', MODEL_REV),
    tritonCache: path.join(root, 'cache', 'triton'),
    captureDir: path.join(root, 'capture'),
    dualRecipeDir: path.join(root, 'recipes', 'qwen38-dual'),
    mtpShardR2: path.join(root, 'models', 'qwen38-mtp-shard-r2.safetensors'),
    binDir: path.join(root, 'bin'),
    dockerDir: path.join(root, 'docker'),
    state,
    meminfo: path.join(state, 'meminfo'),
    watermark: path.join(state, 'watermark_scale_factor'),
    sshDir: path.join(root, 'ssh'),
    homeState: path.join(root, 'home', '.local', 'state', 'pulse'),
  };
}
