/**
 * Additive increase, multiplicative decrease of the number of requests in flight. Repeated
 * 429/503 answers halve it (at most once per cool-down, so one burst of throttles does not
 * collapse it to 1); each run of healthy answers as long as the current limit adds one back, up
 * to the configured maximum.
 */
export class AdaptiveConcurrency {
  private current: number;
  private successes = 0;
  private lastDecrease = -Infinity;

  constructor(
    private readonly max: number,
    private readonly onChange: (value: number) => void,
    private readonly now: () => number = Date.now,
    private readonly coolDownMs = 1_000,
  ) {
    this.current = max;
  }

  get value(): number {
    return this.current;
  }

  throttled(): void {
    const now = this.now();
    this.successes = 0;
    if (now - this.lastDecrease < this.coolDownMs || this.current === 1) return;
    this.lastDecrease = now;
    this.set(Math.max(1, Math.floor(this.current / 2)));
  }

  succeeded(): void {
    if (this.current >= this.max) return;
    this.successes++;
    if (this.successes >= this.current) {
      this.successes = 0;
      this.set(this.current + 1);
    }
  }

  private set(value: number): void {
    if (value === this.current) return;
    this.current = value;
    this.onChange(value);
  }
}
