/**
 * A `--import` preload that moves this process's wall clock (Date.now, new Date()) by $PULSE_TEST_CLOCK_SKEW_MS,
 * as on a controller host whose NTP is off. The fault suite starts a `pulse worker` with it to resume a wait that
 * another worker began: the monotonic clock (performance.now) is left alone, as it is on a real skewed host.
 */
const skewMs = Number(process.env['PULSE_TEST_CLOCK_SKEW_MS'] ?? 0);
const RealDate = Date;

class SkewedDate extends RealDate {
  constructor(...args: unknown[]) {
    if (args.length === 0) super(RealDate.now() + skewMs);
    else super(...(args as [string | number | Date]));
  }

  static override now(): number {
    return RealDate.now() + skewMs;
  }
}

globalThis.Date = SkewedDate as DateConstructor;
