/**
 * Logs refused connections, at most `burst` lines per `windowMs`: a flood of bad clients must
 * not flood the job's log (nor cost a write per connection). What was held back is counted and
 * reported with the next line that gets through.
 */
export class RefusalLog {
  private windowStart = 0;
  private inWindow = 0;
  private suppressed = 0;

  constructor(
    private readonly log: (message: string) => void,
    private readonly burst = 10,
    private readonly windowMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  refused(message: string): void {
    const now = this.now();
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.inWindow >= this.burst) {
      this.suppressed++;
      return;
    }
    this.inWindow++;
    const held = this.suppressed;
    this.suppressed = 0;
    this.log(held > 0 ? `${message} (and ${held} more refusal(s) not logged)` : message);
  }
}
