// Preloaded into the Prisma CLI: its WASM schema engine leaves 10 s / 60 s timers pending after the command
// has finished, which keeps the process alive for up to a minute. Long timers must not hold the process open.
const originalSetTimeout = global.setTimeout;
global.setTimeout = function (fn, ms, ...rest) {
  const timer = originalSetTimeout.call(this, fn, ms, ...rest);
  if (ms >= 10000 && timer && typeof timer.unref === 'function') timer.unref();
  return timer;
};
