/** The six memory kinds, in the order Kioku lists them everywhere (CLI, snapshots, docs). */
export const STORE_KINDS = ['facts', 'documents', 'plans', 'working', 'sessions', 'details'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];
