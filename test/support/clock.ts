/** A clock tests move by hand. */
export interface TestClock {
  (): Date;
  advance(seconds: number): void;
  set(date: Date): void;
}

export function testClock(start = new Date()): TestClock {
  let now = start.getTime();
  const clock = (() => new Date(now)) as TestClock;
  clock.advance = (seconds) => {
    now += seconds * 1000;
  };
  clock.set = (date) => {
    now = date.getTime();
  };
  return clock;
}
