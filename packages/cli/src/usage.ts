/** `kioku --help`. */
export const MAIN_USAGE = `kioku — move Kioku memory between backends, rebuild its vectors, look after it with a model,
serve it over MCP, look at it in a browser

Usage:
  kioku init    --store <backend>                                    (start a new, empty store)
  kioku migrate --from <backend> --to <backend> (--user <id> | --all-users) [--kinds <list>] [--dry-run]
  kioku export  --from <backend> (--user <id> | --all-users) [--kinds <list>] [--output <file>]
  kioku import  --to <backend> [--user <id>] [--kinds <list>] [--input <file>]
  kioku reembed --store <backend> --index <index> --embedder <embedder> (--user <id> | --all-users)
                [--kinds <list>] [--dimensions <n>] [--check | --dry-run]
  kioku dream   --store <backend> --user <id> [--dry-run | --apply <id> | --revert <id> | --list]
  kioku extract --store <backend> --user <id> --session <id> [--batch <n>] [--dry-run]
  kioku worker  --store <backend> [--users <ids>] [--poll <s>] [--once]                 (background work)
  kioku forget  --store <backend> --user <id> [--dry-run | --fact <id> | --suppressed | --revoke <hash>] [--json]
  kioku quarantine --store <backend> --user <id> [--confirm <id> | --drop <id>] [--json]   (review held memories)
  kioku users   --store <backend> [--json]                                             (who is in it)
  kioku stats   --store <backend> [--json]                         (records, sizes, pending work)
  kioku search  --store <backend> --user <id> [--agent <id>] [--limit <n>] [--json] <query>
  kioku mcp     --store <backend> --user <id> [--agent <id>] [--tools <list>] [--create] (MCP over stdio)
  kioku mcp     --store <backend> --http <host:port> --tokens <file> [--tools <list>] [--create] (HTTP)
  kioku mcp token --user <id> [--agent <id>]
  kioku studio  --store <backend> [--port <n>] [--read-only | --create]                (a local web page)
  kioku help [command]    kioku --version

Backends:
  json:<dir>                   a @kioku/store-json data directory (file:<dir> works too)
  sqlite:<file>                a @kioku/store-sqlite database file
  postgres://user@host/db      @kioku/store-postgres; ?schema=<name> picks the schema (default kioku)
  redis://host:6379/0          @kioku/store-redis; ?prefix=<p> picks the key prefix (default kioku:)
  Each needs its adapter package installed next to @kioku/cli (npm install @kioku/store-sqlite …).
  <scheme>:<location>          a third-party adapter: KIOKU_ADAPTERS=<package or path>[,…] names modules
                               that export storeAdapters = { <scheme>: (spec, context) => stores }

Kinds: facts, documents, plans, working, sessions, details (default: all six).
Vector kinds (reembed): facts, documents, details, transcript (default: all four).

Vector indexes (reembed):
  qdrant:http://host:6333      @kioku/store-qdrant; ?collection=<name> (default kioku_vectors); QDRANT_API_KEY
Embedders (reembed):
  openai:<model>               @kioku/openai (OPENAI_API_KEY, OPENAI_BASE_URL); --dimensions <n> for a model
                               whose vector size it does not know
  hashing[:<dimensions>]       @kioku/core's offline HashingEmbedder (default 256 dimensions)

A store that does not exist (a JSON directory, a SQLite file, a PostgreSQL schema without Kioku's tables)
is refused with NOT_FOUND and nothing is created, so a typo never reads or serves an empty memory. New
stores come from kioku init, from --create on mcp and studio, or as the target of migrate and import.

Examples:
  kioku init --store sqlite:./kioku.db
  kioku migrate --from json:./data --to sqlite:./kioku.db --all-users
  kioku migrate --from sqlite:./kioku.db --to postgres://kioku@db.internal/app --all-users
  kioku migrate --from json:./data --to postgres://localhost/app?schema=memory --user alice --kinds facts,sessions
  kioku export --from sqlite:./kioku.db --user alice > alice.json
  kioku import --to redis://localhost:6379 < alice.json
  kioku reembed --store sqlite:./kioku.db --index qdrant:http://localhost:6333 --embedder openai:text-embedding-3-small --all-users --check
  kioku mcp --store sqlite:./kioku.db --user alice
  kioku mcp --store postgres://localhost/app --http 127.0.0.1:8765 --tokens ./tokens.json --tools details,facts
  kioku studio --store sqlite:./kioku.db

The target's schema is created or upgraded first (setup()). Each kind's restore replaces the partitions
(a user's memory per agent, a thread's plan, a session…) the snapshot contains and leaves the rest alone,
so running the same command twice is harmless.

Exit codes: 0 done, 1 the operation failed (Kioku error code and message on stderr), 2 bad arguments,
3 reembed --check found vectors of another embedding model.
Set KIOKU_DEBUG=1 to print stack traces.`;

export const COMMAND_USAGE = {
  init: `kioku init --store <backend>

Starts a new, empty store: creates the JSON directory, the SQLite file or the PostgreSQL tables (in
?schema=, default kioku), or checks that Redis answers. On a store that already exists it only upgrades
the schema if it has to. Every other command that reads, erases or serves refuses a store that does not
exist (NOT_FOUND), so a typo never reads or serves an empty memory; mcp and studio take --create instead.

Options:
  --store <backend>    json:, sqlite:, postgres:// or redis://

Examples:
  kioku init --store sqlite:./kioku.db
  kioku init --store postgres://localhost/app?schema=memory`,
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
  dream: `kioku dream --store <backend> --user <id> [--agent <id>] [--model <name>] [--dry-run]
kioku dream --store <backend> --user <id> [--agent <id>] (--apply <id> | --revert <id> | --list)

Runs the dream over one user's memory — consolidation (merges, refined categories and tags, deletions,
anti-patterns from corrections), then preference inference from the conversations since the last dream,
then the fact limits when the app configured them — each pass a changeset printed as a diff. Without
--dry-run the changesets are applied (a fact changed since the pass read it is a conflict, left as it
is) and kept, so any of them can be reverted by id. The model is an OpenAI-compatible endpoint from the
environment (OPENAI_API_KEY, or OPENAI_BASE_URL for Ollama, vLLM, LM Studio; @kioku/openai installed).

Options:
  --store <backend>    the user's memory: json:, sqlite:, postgres://, redis://
  --user <id>          whose memory (only theirs is read or written)
  --agent <id>         the agent's partition of it
  --model <name>       the model (default OPENAI_MODEL, else gpt-4o-mini)
  --directives <dir>   dream.md / pref-dream.md in this directory replace the built-in instructions
  --dry-run            write nothing; keep the changesets as proposed, to apply after review
  --apply <id>         apply a proposed changeset (after --dry-run)
  --revert <id>        undo an applied changeset exactly
  --list               the kept changesets with their status
  --json               one JSON object instead of the text

Progress goes to stderr. Exit 1 when a pass failed, a change was a conflict, or another dream of the
user was running (another app instance): nothing of that pass was written.

Examples:
  kioku dream --store sqlite:./kioku.db --user alice --dry-run
  kioku dream --store sqlite:./kioku.db --user alice --apply k3J9xq2W
  kioku dream --store postgres://kioku@db/app --user alice --revert k3J9xq2W`,
  extract: `kioku extract --store <backend> --user <id> --session <id> [--agent <id>] [--model <name>] [--batch <n>] [--dry-run]

Extracts the durable facts of a stored conversation, a batch of turns per model call: only each turn's
user message and final answer are read (never tool results, memory blocks or the system prompt), and in
the same call the candidates are checked against the user's similar facts (add, update, delete or
nothing); each batch's changes are one changeset, applied and kept (revertible with kioku dream --revert
<id>). It reads only the turns past the session's extraction watermark (what the app's extraction or
kioku worker has not read yet) and advances it, so no turn is extracted twice; --dry-run and --batch 1
read the whole session and leave the watermark. The model comes from the environment as for kioku dream.

Options:
  --store <backend>    the user's memory
  --user <id>          whose memory
  --agent <id>         the agent's partition of it
  --session <id>       the session to read (one of the user's)
  --model <name>       the model (default OPENAI_MODEL, else gpt-4o-mini)
  --batch <n>          turns read per model call (default 8; 1 = turn by turn, one or two calls each)
  --dry-run            write nothing; keep the changesets as proposed (kioku dream --apply <id>)
  --json               the changesets as JSON

Example:
  kioku extract --store sqlite:./kioku.db --user alice --session 0195f3c2-…  --dry-run`,
  worker: `kioku worker --store <backend> [--model <name>] [--users <id,…>] [--poll <s>] [--passes <n>]
             [--grace <s>] [--lease-ttl <s>] [--holder <name>] [--once]

Does the background memory work the apps over this store left pending: the turns of each conversation
past its extraction watermark (the transcript is the outbox), user by user, each under the user's lease.
Any number of workers and app instances can run over one PostgreSQL or Redis: a user another holds is
skipped (printed once as busy) and each turn is extracted exactly once. One line per user worked on goes to
stdout. Runs until SIGTERM / SIGINT: the pass under way finishes (at most --grace seconds; then it is
abandoned, its turns stay pending and its lease expires on its own), the lease is released, and it
exits 0. A store that goes away (a restart) is retried, waiting longer each time, up to 30 s. The model
comes from the environment as for kioku dream.

Options:
  --store <backend>    the store the apps write: json:, sqlite:, postgres://, redis://
  --model <name>       the model (default OPENAI_MODEL, else gpt-4o-mini)
  --users <id,…>       only these users (every session of theirs is checked); default: every user
                       with work noted in the store's pending index
  --poll <s>           the wait after a round that found nothing to do (default 5)
  --passes <n>         extraction passes per round at most (default: until nothing is left)
  --grace <s>          how long a stop waits for the pass under way (default 30)
  --lease-ttl <s>      the users' leases' time to live: how soon another worker takes over the users
                       of one that died (default 120)
  --holder <name>      the name the leases carry (default worker-<host>-<pid>)
  --once               one round, then exit (for cron): exit 1 when a pass failed

Examples:
  kioku worker --store postgres://kioku@db/app
  kioku worker --store redis://cache:6379/0 --poll 2
  kioku worker --store sqlite:./kioku.db --once`,
  forget: `kioku forget --store <backend> --user <id> [--dry-run | --fact <id> [--agent <id>] | --suppressed | --revoke <hash>] [--json]

Erases everything of one user from the backend — facts, documents, plans, working memory, sessions
(transcripts, k-v maps, Kioku's kept changesets, feedback and conversation-log watermarks) and offloaded
details, under every agent — then scans every kind again and repeats until nothing is left. Prints the
erasure receipt: what was removed per kind and backend, when, and a sha256 digest of the removed ids.
Safe to run again (after a crash half-way, it finishes the job; on an erased user it removes nothing).
Vectors in an external index (Qdrant) are erased by the library's forgetUser with the bundle's index.

Options:
  --store <backend>    the user's memory
  --user <id>          whose memory
  --dry-run            remove nothing; print what would be removed (same counts and digest)
  --fact <id>          forget one fact (and the facts derived from it) instead of the user: its text
                       leaves the kept changesets and goes on the user's suppression list, so
                       extraction does not learn it again (--agent <id>: the fact's agent)
  --suppressed         list the suppression list: keyed hashes and dates, never text
  --revoke <hash>      lift one suppression
  --json               the receipt (or the result) as one JSON object

Exit 1 with STORAGE when writes for the user keep arriving (stop the app's sessions, then run it again).

Examples:
  kioku forget --store sqlite:./kioku.db --user alice --dry-run
  kioku forget --store postgres://kioku@db/app --user alice --json
  kioku forget --store sqlite:./kioku.db --user alice --fact 3f2a9c1d7e4b
  kioku forget --store sqlite:./kioku.db --user alice --suppressed`,
  quarantine: `kioku quarantine --store <backend> --user <id> [--agent <id>] [--confirm <id> | --drop <id>] [--json]

Lists the user's memories held for confirmation: a tool's output, a model's write, or text the user pasted
or quoted ("from text you pasted") that reads like instructions to an AI, with the rules that fired and
the words they matched. The agent never sees them until they are confirmed.

Options:
  --store <backend>    the user's memory
  --user <id>          whose memory
  --agent <id>         the memories of one agent
  --confirm <id>       trust the memory from now on (the mark is kept in provenance.confirmed)
  --drop <id>          delete the memory
  --json               the held memories as one JSON array

Examples:
  kioku quarantine --store sqlite:./kioku.db --user alice
  kioku quarantine --store sqlite:./kioku.db --user alice --confirm 3f2a9c1d7e4b`,
  users: `kioku users --store <backend> [--json]

Lists every user in the store with their records per kind (facts, documents, plans, working, sessions,
details). Reads only; a store that does not exist is refused (NOT_FOUND), never created.

Options:
  --store <backend>    the memory to look into
  --json               one JSON object: { users: [{ userId, records: { facts, … } }] }

Examples:
  kioku users --store sqlite:./kioku.db
  kioku users --store postgres://kioku@db/app --json`,
  stats: `kioku stats --store <backend> [--json]

What the store holds: the number of users; records and their size (bytes of their JSON) per kind; the
quarantined facts recall skips until someone confirms them; the sessions whose turns extraction has not
read yet (what kioku worker has to do), and since when the oldest waits. Reads only.

Options:
  --store <backend>    the memory to look into
  --json               one JSON object: { users, kinds: { facts: { records, bytes }, … },
                       quarantinedFacts, pendingSessions, oldestPending }

Examples:
  kioku stats --store sqlite:./kioku.db
  kioku stats --store redis://cache:6379/0 --json`,
  search: `kioku search --store <backend> --user <id> [--agent <id>] [--limit <n>] [--json] <query>

The facts the store's search returns for a query — what recall reads before it drops quarantined facts —
best first, each with its score (comparable within one list), id, category, trust (trusted, confirmed or
quarantined with the detector's rules, and where it came from) and text. Reads only.

Options:
  --store <backend>    the memory to look into
  --user <id>          whose facts
  --agent <id>         the agent's facts as recall sees them (the user's shared facts and the agent's)
  --limit <n>          at most this many facts (default 8, recall's default)
  --json               one JSON object: { query, userId, hits: [{ id, score, trust, source, category, content }] }

Examples:
  kioku search --store sqlite:./kioku.db --user alice "which units does she like?"
  kioku search --store postgres://kioku@db/app --user alice --limit 20 --json deploy`,
  mcp: `kioku mcp --store <backend> (--user <id> | --http <host:port> --tokens <file>) [options]

Serves the memory in --store to MCP clients (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf …)
with @kioku/mcp. Whose memory a call reads and writes is never a tool argument:
  over stdio (the default) it is --user (and --agent) for the life of the process;
  over HTTP (--http) each request's bearer token names one user (and agent) in --tokens.
Runs until stdin closes (stdio) or SIGINT / SIGTERM. Messages go to stderr; over stdio, stdout is only MCP.

Options:
  --store <backend>        json:, sqlite:, postgres:// or redis:// (its schema upgraded if it has to be).
                           One that does not exist is refused (NOT_FOUND): a typo never serves an empty
                           memory. Redis is not checked (a server is a store).
  --create                 start a new, empty store when --store names none (or run kioku init once)
  --user <id>              the user (stdio; or HTTP on a loopback address without tokens)
  --agent <id>             partitions the user's facts and working memory per agent
  --thread <id>            the plan's thread and the working-memory namespace session/<id> (default mcp)
  --tools <list>           comma-separated toolsets (default details):
                             details  store_memory, retrieve_memory, search_memory (details and facts)
                             facts    save_memory, update_memory, delete_memory, list_memory_categories
                             plans    get_plan, create_plan, update_plan_step, add_plan_step,
                                      add_context_note, complete_plan
                             working  save_to_working_memory, get_from_working_memory,
                                      list_working_memory, search_working_memory
  --http <host:port>       serve Streamable HTTP at http://<host:port>/mcp (stateless) instead of stdio;
                           port 0 picks a free one. A non-loopback address needs --tokens.
  --tokens <file>          {"tokens":[{"user":"alice","agent":"claude","token":"…"}, {"user":"bob","sha256":"…"}]}
                           tokens of at least 32 random characters, each listed once
  --allow-origin <origin>  a browser origin that may call (repeatable); other Origin headers get 403
  --allow-host <name>      a Host header name to accept besides the loopback ones (repeatable)
  --max-body <size>        largest request (default 4m); larger ones get HTTP 413
  --max-output <size>      largest tool result or resource (default 1m); larger ones are an error
  --index, --embedder      hybrid search, as in reembed (e.g. --index qdrant:http://localhost:6333
                           --embedder openai:text-embedding-3-small)
  --enrich <model>         after save_memory answers (at once, the user's words stored as given), expand
                           each saved memory into focused entries with this model in the background
                           (OpenAI-compatible: OPENAI_BASE_URL and/or OPENAI_API_KEY)

kioku mcp token --user <id> [--agent <id>] [--thread <id>] prints a new token and its tokens-file entry.

Examples:
  kioku mcp --store sqlite:./kioku.db --user alice
  kioku mcp --store sqlite:./new.db --user alice --create
  kioku mcp token --user alice --agent cursor
  kioku mcp --store postgres://localhost/app --http 127.0.0.1:8765 --tokens ./tokens.json --tools details,facts`,
  studio: `kioku studio --store <backend> [--port <n>] [--read-only] [options]

Serves Kioku Studio (@kioku/studio), a web page over the memory in --store: every user with what they
hold, their facts, documents, sessions, plans, working memory and offloaded details; search with its
ranking explained; the changesets of the memory passes to apply or revert; the quarantine queue; forgetting
a fact, a session or a user with a dry run and a receipt; the token ledger of recorded turns.
Prints the address with a random access token on stdout; runs until SIGINT / SIGTERM.

Options:
  --store <backend>        json:, sqlite:, postgres:// or redis:// (its schema upgraded if it has to be,
                           except with --read-only). One that does not exist is refused (NOT_FOUND).
  --create                 start a new, empty store when --store names none (or run kioku init once)
  --port <n>               port on 127.0.0.1 (default 4983; 0 picks a free one)
  --read-only              show everything, change nothing (every POST is refused)
  --host <address>         listen elsewhere than 127.0.0.1; a non-loopback address needs --allow-remote
  --allow-remote           allow a non-loopback --host: anyone who reaches it with the token can erase memory
  --allow-host <name>      a Host header name to accept besides the loopback ones (repeatable)
  --index, --embedder      hybrid search, as in reembed: search then shows each fact's vector rank

Examples:
  kioku studio --store sqlite:./kioku.db
  kioku studio --store sqlite:./new.db --create
  kioku studio --store postgres://localhost/app --read-only --port 8080`,
} as const;

export type Command = keyof typeof COMMAND_USAGE;

/** The command names, in the order the help lists them. */
export const COMMANDS = Object.keys(COMMAND_USAGE) as Command[];
