/** The key and value rules of a profile (spec "Profiles"), shared by the parser and the render re-check. */
import { parseDockerArgs } from './docker-args.js';
import { pasteProblem, wordProblem } from './safe.js';

/** Keys that come from nodes.json `env`: a profile cannot set them. */
export const NODE_KEYS = ['HF_HOME', 'BIND', 'PORT', 'REQUIRE_IDLE_GPU'] as const;
/** Keys a profile must never set: secrets stay in the node .env, the container name belongs to the recipe. */
export const FORBIDDEN_KEYS = ['HF_TOKEN', 'API_KEY', 'VLLM_API_KEY', 'TP1_CONTAINER_NAME'] as const;
/**
 * Shell variables that change how bash itself runs start.sh when the .env is sourced (word splitting, command
 * lookup, startup files, the dynamic loader). The recipe never reads them as settings, so a profile cannot set them.
 */
export const SHELL_KEYS = ['IFS', 'PATH', 'BASH_ENV', 'ENV', 'SHELLOPTS', 'BASHOPTS', 'CDPATH', 'GLOBIGNORE', 'PS4', 'PROMPT_COMMAND', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT'] as const;
/** The only keys whose value may span more than one line. */
export const MULTILINE_KEYS = ['EXTRA_DOCKER_ARGS', 'EXTRA_VLLM_ARGS'] as const;
/** The recipe key set of docs/ARCHITECTURE.md ("Recipe .env keys"); a runnable single-Spark profile sets them all. */
export const RECIPE_KEYS = [
  'IMAGE',
  'MODEL',
  'SERVED_MODEL_NAME',
  'MAX_MODEL_LEN',
  'MAX_NUM_SEQS',
  'MAX_NUM_BATCHED_TOKENS',
  'GPU_MEMORY_UTILIZATION',
  'KV_CACHE_DTYPE',
  'MTP_K',
  'MTP_DRAFT_VOCAB',
  'CHAT_TEMPLATE',
  'READY_TIMEOUT_S',
  'MEMWATCH_RELIEF',
  'MEMWATCH_FLOOR_GIB',
  'EXTRA_DOCKER_ARGS',
  'EXTRA_VLLM_ARGS',
] as const;

/**
 * Why a profile that pulse may run (not `# pulse-runnable: false`) cannot: the recipe keys it leaves unset, for which
 * start.sh would silently use its own defaults (different from .env.sample). Null when it sets them all, or is
 * render-only.
 */
export function recipeKeysProblem(keys: readonly string[], runnable: boolean): string | null {
  if (!runnable) return null;
  const missing = RECIPE_KEYS.filter((k) => !keys.includes(k));
  if (missing.length === 0) return null;
  return `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set: a runnable profile sets every recipe key (start.sh would use its own default); set ${missing.length === 1 ? 'it' : 'them'}, or mark the profile # pulse-runnable: false`;
}

/** Why `key` may not appear in a profile, or null. */
export function keyProblem(key: string): string | null {
  if ((NODE_KEYS as readonly string[]).includes(key)) return `${key} is a node key: set it in nodes.json env, not in a profile`;
  if ((FORBIDDEN_KEYS as readonly string[]).includes(key)) {
    return key === 'TP1_CONTAINER_NAME'
      ? 'TP1_CONTAINER_NAME is not allowed: the container name belongs to the recipe'
      : `${key} is not allowed in a profile: put it in the node .env`;
  }
  if ((SHELL_KEYS as readonly string[]).includes(key) || key.startsWith('BASH_FUNC_')) {
    return `${key} is a shell variable that changes how bash runs start.sh; a profile cannot set it`;
  }
  return null;
}

/** Why a (substituted) value of `key` breaks the rules, or null. `quoted`: it was written in double quotes. */
export function valueProblem(key: string, value: string, quoted: boolean): string | null {
  const multi = (MULTILINE_KEYS as readonly string[]).includes(key);
  if (!multi && /[\n\r]/.test(value)) return `${key}: only EXTRA_DOCKER_ARGS and EXTRA_VLLM_ARGS can use more than one line`;
  const charProblem = quoted ? pasteProblem(value.replace(/[\n\r]/g, ' ')) : wordProblem(value);
  if (charProblem) return `${key}: the ${quoted ? 'double-quoted' : 'unquoted'} value ${charProblem}`;
  if (key === 'EXTRA_DOCKER_ARGS') {
    const parsed = parseDockerArgs(value);
    if (!parsed.ok) return `EXTRA_DOCKER_ARGS: ${parsed.error}`;
  }
  if (key === 'EXTRA_VLLM_ARGS' && value.split(/\s+/).some((w) => w === '--api-key' || w.startsWith('--api-key='))) {
    return 'EXTRA_VLLM_ARGS: --api-key is not allowed; put the key in the node .env as API_KEY';
  }
  return null;
}

/** Why a pulse-mkdir path (substituted) is unsafe, or null. */
export function mkdirProblem(dir: string): string | null {
  const p = wordProblem(dir);
  if (p) return `pulse-mkdir: the path ${p}`;
  if (!dir.startsWith('/')) return `pulse-mkdir: "${dir}" must be an absolute path on the node`;
  return null;
}
