/** `kioku --help`. */
export const MAIN_USAGE = `kioku — move Kioku memory between backends, rebuild its vectors

Usage:
  kioku migrate --from <backend> --to <backend> (--user <id> | --all-users) [--kinds <list>] [--dry-run]
  kioku export  --from <backend> (--user <id> | --all-users) [--kinds <list>] [--output <file>]
  kioku import  --to <backend> [--user <id>] [--kinds <list>] [--input <file>]
  kioku reembed --store <backend> --index <index> --embedder <embedder> (--user <id> | --all-users)
                [--kinds <list>] [--dimensions <n>] [--check | --dry-run]
  kioku help [command]    kioku --version

Backends:
  json:<dir>                   a @kioku/store-json data directory (file:<dir> works too)
  sqlite:<file>                a @kioku/store-sqlite database file
  postgres://user@host/db      @kioku/store-postgres; ?schema=<name> picks the schema (default kioku)
  redis://host:6379/0          @kioku/store-redis; ?prefix=<p> picks the key prefix (default kioku:)
  Each needs its adapter package installed next to @kioku/cli (npm install @kioku/store-sqlite …).

Kinds: facts, documents, plans, working, sessions, details (default: all six).
Vector kinds (reembed): facts, documents, details, transcript (default: all four).

Vector indexes (reembed):
  qdrant:http://host:6333      @kioku/store-qdrant; ?collection=<name> (default kioku_vectors); QDRANT_API_KEY
Embedders (reembed):
  openai:<model>               @kioku/openai (OPENAI_API_KEY, OPENAI_BASE_URL); --dimensions <n> for a model
                               whose vector size it does not know
  hashing[:<dimensions>]       @kioku/core's offline HashingEmbedder (default 256 dimensions)

Examples:
  kioku migrate --from json:./data --to sqlite:./kioku.db --all-users
  kioku migrate --from sqlite:./kioku.db --to postgres://kioku@db.internal/app --all-users
  kioku migrate --from json:./data --to postgres://localhost/app?schema=memory --user alice --kinds facts,sessions
  kioku export --from sqlite:./kioku.db --user alice > alice.json
  kioku import --to redis://localhost:6379 < alice.json
  kioku reembed --store sqlite:./kioku.db --index qdrant:http://localhost:6333 --embedder openai:text-embedding-3-small --all-users --check

The target's schema is created or upgraded first (setup()). Each kind's restore replaces the partitions
(a user's memory per agent, a thread's plan, a session…) the snapshot contains and leaves the rest alone,
so running the same command twice is harmless.

Exit codes: 0 done, 1 the operation failed (Kioku error code and message on stderr), 2 bad arguments,
3 reembed --check found vectors of another embedding model.
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
  reembed: `kioku reembed --store <backend> --index <index> --embedder <embedder> (--user <id> | --all-users) [options]

Rebuilds the vectors of hybrid recall with another embedding model, after a model change (hybrid
searches then fail with EmbeddingModelMismatchError, code CONFLICT). For each kind and each partition
(user + agent) of the store, the kind's vectors are removed from the index, whatever model made them,
then the store's records are embedded and written with the embedder's model id. Prints per kind the
records read, vectors written and partitions rebuilt. Other users' vectors are not touched.

Options:
  --store <backend>    where the records are (must exist): json:, sqlite:, postgres://, redis://
  --index <index>      the vector index: qdrant:http://host:6333[?collection=<name>] (created if missing)
  --embedder <spec>    the new model: openai:<model> or hashing[:<dimensions>]
  --dimensions <n>     vector size of an openai: model it does not know (or of hashing)
  --user <id>          one user's vectors
  --all-users          every user's vectors
  --kinds <list>       comma-separated subset of facts,documents,details,transcript (default: all four)
  --check              show which models made the index's vectors, per kind, next to the embedder's;
                       writes nothing; exit 3 when some were made by another model
  --dry-run            read the store and count what a rebuild would write; no embedding, the index is
                       not opened

A model of another vector size needs another collection (?collection=<name>); the application then uses
that collection too.

Examples:
  kioku reembed --store sqlite:./kioku.db --index qdrant:http://localhost:6333 --embedder openai:text-embedding-3-large --all-users --check
  kioku reembed --store sqlite:./kioku.db --index 'qdrant:http://localhost:6333?collection=kioku_3large' --embedder openai:text-embedding-3-large --all-users
  kioku reembed --store json:./data --index qdrant:http://localhost:6333 --embedder hashing:256 --user alice --kinds facts`,
} as const;

export type Command = keyof typeof COMMAND_USAGE;

/** The command names, in the order the help lists them. */
export const COMMANDS = Object.keys(COMMAND_USAGE) as Command[];
