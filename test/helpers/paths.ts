/** The repo root, from dist/test/helpers/paths.js: the one place a test finds the checkout (scripts, fixtures, bin/). */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
