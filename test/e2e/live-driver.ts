/**
 * Drives the real ProgressPrinter on this process's stdout, for the pseudo-terminal tests (live-line.test.ts):
 * a header, a step line, then N wait updates of a long (~130-column) line. Arguments: N, the update after which it
 * waits (up to 5 s) for a terminal resize (0: none), and a file it creates when done (the live line stays shown).
 */
import { writeFileSync } from 'node:fs';
import { ProgressPrinter } from '../../cli/progress-printer.js';

const [count = '100', pauseAt = '0', doneFile = ''] = process.argv.slice(2);
const p = new ProgressPrinter(process.stdout);
p.line('up best on spark2: workflow pulse-model-spark2 (run 0b6a4e1c-7e8d-4f1a-9a51-3d1f2c9e8b77)');
p.stepStarted('7/9 readiness on spark2');
const answer = 'HTTP 503 Service Unavailable: {"object":"error","message":"The server is still loading the model weights","code":503}';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// LIVE_DRIVER_PHASE=1: the server's phase (loading weights i/100) and an estimate of 15 min from 5 earlier starts.
const phased = process.env['LIVE_DRIVER_PHASE'] === '1';
if (phased) p.readinessEstimate({ estimateS: 900, samples: 5, basis: 'identity' });
for (let i = 1; i <= Number(count); i++) {
  const phase = phased ? { phase: { id: 'weights' as const, words: `loading weights ${i}/${count}`, done: i, total: Number(count) } } : {};
  p.waitProgress({ step: 'readiness', attempt: i, lastAnswer: answer, elapsedS: i * 5, timeoutS: 2100, ...phase });
  await sleep(2);
  if (i === Number(pauseAt)) {
    const resized = new Promise((r) => process.stdout.once('resize', r));
    writeFileSync(`${doneFile}.paused`, '');
    await Promise.race([resized, sleep(5000)]);
    await sleep(50);
  }
}
if (doneFile) writeFileSync(doneFile, String(process.stdout.columns));
await sleep(Number(process.env['LIVE_DRIVER_LINGER_MS'] ?? 0));
