/** The row shapes bench:store prints: the SQL adapters' rows, whose shape the other adapters' rows take too. */

export type SqlAdapter = 'postgres';

export interface Figures {
  writesPerS: number;
  readsPerS: number;
  /** Median time of one write / one read, in µs (the overhead ratios use these). */
  writeP50Us: number;
  readP50Us: number;
  searchP50: number;
  searchP95: number;
  searchMean: number;
  /** Searches each right after a write of the same side (what an application interleaves), in ms. */
  afterWriteP50: number;
  afterWriteP95: number;
}

export interface SqlRow extends Figures {
  adapter: SqlAdapter;
  size: number;
  /** Users the prefill is spread over (`--users`; SQL adapters only). */
  users?: number;
  writes: number;
  firstSearchMs: number;
  prefillMs: number;
  /** Database size on disk after the run (table + indexes), in MB. */
  diskMb: number;
  raw: Figures;
  /** The fact block's read (mode `all`; first page newest-updated + count), ms per read, adapter and raw. */
  dynamicRead?: DynamicRead;
}

export interface DynamicRead {
  facts: number;
  p50: number;
  p95: number;
  rawP50: number;
  rawP95: number;
  /** Adapter median ÷ raw median (as for reads: an occasional slow call would swamp a mean). */
  ratio: number;
}
