/** `node --import` this to make any load of @temporalio/* or ssh2 fail (see deny-heavy-hooks.ts). */
import { register } from 'node:module';

register('./deny-heavy-hooks.js', import.meta.url);
