/** `kioku --help`. */
export const MAIN_USAGE = `kioku — move Kioku memory between backends

Usage:
  kioku migrate --from <backend> --to <backend> (--user <id> | --all-users) [--kinds <list>] [--dry-run]
  kioku export  --from <backend> (--user <id> | --all-users) [--kinds <list>] [--output <file>]
  kioku import  --to <backend> [--user <id>] [--kinds <list>] [--input <file>]
  kioku help [command]    kioku --version

Backends:
  json:<dir>                   a @kioku/store-json data directory (file:<dir> works too)
  sqlite:<file>                a @kioku/store-sqlite database file
  postgres://user@host/db      @kioku/store-postgres; ?schema=<name> picks the schema (default kioku)
  redis://host:6379/0          @kioku/store-redis; ?prefix=<p> picks the key prefix (default kioku:)
  Each needs its adapter package installed next to @kioku/cli (npm install @kioku/store-sqlite …).

Kinds: facts, documents, plans, working, sessions, details (default: all six).

Examples:
  kioku migrate --from json:./data --to sqlite:./kioku.db --all-users
  kioku migrate --from sqlite:./kioku.db --to postgres://kioku@db.internal/app --all-users
  kioku migrate --from json:./data --to postgres://localhost/app?schema=memory --user alice --kinds facts,sessions
  kioku export --from sqlite:./kioku.db --user alice > alice.json
  kioku import --to redis://localhost:6379 < alice.json

The target's schema is created or upgraded first (setup()). Each kind's restore replaces the partitions
(a user's memory per agent, a thread's plan, a session…) the snapshot contains and leaves the rest alone,
so running the same command twice is harmless.

Exit codes: 0 done, 1 the operation failed (Kioku error code and message on stderr), 2 bad arguments.
Set KIOKU_DEBUG=1 to print stack traces.`;

export const COMMAND_USAGE = {
  migrate: `kioku migrate --from <backend> --to <backend> (--user <id> | --all-users) [options]

Copies memory from one backend to another through snapshots: reads every kind from --from first, then
runs setup() on --to and restores kind by kind, printing how many records each kind copied.

Options:
  --from <backend>   where the memory is now (must exist)
  --to <backend>     where it goes (created or upgraded)
  --user <id>        copy one user's memory
  --all-users        copy every user's memory
  --kinds <list>     comma-separated subset of facts,documents,plans,working,sessions,details
  --dry-run          read and count, write nothing

Examples:
  kioku migrate --from json:./data --to sqlite:./kioku.db --all-users
  kioku migrate --from sqlite:./kioku.db --to postgres://kioku@localhost/app --user alice --kinds facts`,
  export: `kioku export --from <backend> (--user <id> | --all-users) [options] > bundle.json

Writes a bundle — { "format": "kioku.bundle", "schemaVersion": 1, "stores": { "facts": <snapshot>, … } } —
to stdout (or --output), and per-kind record counts to stderr.

Options:
  --from <backend>   where the memory is
  --user <id>        one user's memory
  --all-users        every user's memory
  --kinds <list>     comma-separated subset of facts,documents,plans,working,sessions,details
  --output <file>    write the bundle to a file instead of stdout (-o)

Example:
  kioku export --from json:./data --user alice > alice.json`,
  import: `kioku import --to <backend> [options] < bundle.json

Reads a bundle from stdin (or --input), validates all of it — nothing is written if any part is invalid
or of an unknown version — then runs setup() on --to and restores kind by kind. A single store snapshot
(format "kioku.snapshot") is accepted too.

Options:
  --to <backend>     where the memory goes
  --user <id>        refuse the bundle unless every record belongs to this user
  --kinds <list>     import only these kinds of the bundle
  --input <file>     read the bundle from a file instead of stdin (-i)

Example:
  kioku import --to sqlite:./kioku.db < alice.json`,
} as const;

export type Command = keyof typeof COMMAND_USAGE;
