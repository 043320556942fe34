// How much the V8 heap may grow between two full collections, set once per process.
//
// V8 sizes the next full-GC limit from how fast old objects have been allocated: a server whose old
// space barely grows (caches filled, then steady) gets its minimum, 1.1 × the live heap plus the young
// generation's size. Uploads and downloads allocate many short-lived buffers, and with a limit that
// close V8 started incremental marking again as soon as each full collection ended: in `pnpm bench`,
// 8–10 full collections a second of a 70–100 MB heap during transfers, 35–75 % of the gateway's main
// thread, and the local store's transfers at 0.5–0.7 of a bare server's. A fixed factor of 2 ended
// them (10 in a run where V8's own factor made 227; the transfers at 1.5–1.7 of the bare server's).
// Lower fixed factors end them too, but cap V8 where it would grow the heap further on its own: under
// the search's many short-lived rows, 1.35 made some runs collect every 0.45 s and the search's p95
// 2–3.4× the bare server's. Memory: the heap V8 keeps committed grows with the limit, ≈ 1.3 KiB per
// cached instance at factor 2 (4.1 KiB in all, against a budget of 5; docs/performance.md).
import v8 from 'node:v8';

/** The heap may double before a full collection (V8 picks between 1.1 and 4 on its own). */
const HEAP_GROWING_PERCENT = 100;

/** Applies HEAP_GROWING_PERCENT to this process; V8 reads it each time it sets the next limit. */
export function setHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
