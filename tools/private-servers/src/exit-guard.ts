/*
 * A server started here outlives the process that started it unless someone stops it (pg_ctl daemonizes
 * PostgreSQL; a killed parent leaves its children). Each server registers a synchronous last-resort stop,
 * run when the process exits however it exits short of SIGKILL: a test runner that dies, a bench
 * interrupted by Ctrl-C (the bench stops its servers properly first; this is the net under it).
 */

const stops = new Set<() => void>();
let installed = false;

/** Register `stop` (synchronous, must not throw) to run at process exit; returns the unregister function. */
export function stopAtExit(stop: () => void): () => void {
  if (!installed) {
    installed = true;
    process.once('exit', () => {
      for (const s of stops) {
        try {
          s();
        } catch {
          // Best effort: the process is exiting.
        }
      }
    });
  }
  stops.add(stop);
  return () => stops.delete(stop);
}
