/** `{{name}}` placeholders of profiles and recipe dockerArgs, filled from the node's and the recipe's vars. */

const PLACEHOLDER = /\{\{([A-Za-z][A-Za-z0-9_]*)\}\}/g;
/** A valid var name (nodes.json `vars` keys, `{{name}}`). */
export const VAR_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Why `text` has a malformed placeholder (a `{{` or `}}` that is not `{{name}}`), or null. */
export function placeholderProblem(text: string): string | null {
  const rest = text.replace(PLACEHOLDER, '');
  if (rest.includes('{{') || rest.includes('}}')) return 'has a malformed placeholder; write {{name}} with a name of letters, digits and _';
  return null;
}

/** The placeholder names used in `text`, in order. */
export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '');
}

/** `text` with every placeholder replaced by `fill(name)` (used to check a template's shape before render). */
export function fillPlaceholders(text: string, fill: (name: string) => string): string {
  return text.replace(PLACEHOLDER, (_m, name: string) => fill(name));
}

export type Substituted = { ok: true; value: string } | { ok: false; unknown: string };

/** `text` with every `{{name}}` filled from `vars`; the first unknown name fails the whole substitution. */
export function substitute(text: string, vars: Readonly<Record<string, string>>): Substituted {
  for (const name of placeholdersIn(text)) {
    if (!Object.hasOwn(vars, name)) return { ok: false, unknown: name };
  }
  return { ok: true, value: fillPlaceholders(text, (name) => vars[name] ?? '') };
}
