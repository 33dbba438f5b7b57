/**
 * The session store's statements that a turn runs, as SQL text built once per schema and run as prepared
 * statements (`sql.unsafe(text, values, { prepare: true })`): drizzle would build the text again on every
 * call, and a transaction of separate statements costs a round trip each where these need one.
 */
export interface SessionStatements {
  /**
   * $1 user, $2 agent, $3 session, $4 entries kept, $5 1 to mark pending (else 0), $6 time, $7 entries
   * (JSON: n, role, content, tool_calls, tool_call_id, name, turn_id), $8 cap. The session row's update
   * takes its lock and re-reads it (so the positions follow every committed append) and returns the new
   * newest position; no row: the session is not the caller's. Positions are dense, so the cap is one
   * comparison, whatever this statement's snapshot saw. A pending session keeps every entry (the outbox
   * drops nothing its workers have not read): `clearPending` applies the cap.
   */
  append: string;
  /** $1 user, $2 agent, $3 session. Locks the session row and takes the next k-v order. */
  lockKv: string;
  /**
   * After `lockKv` in the same transaction: $4 key, $5 value, $6 time, $7 expected version (null for
   * none), $8 cap. Sets the key at its current version + 1 when the expected one matches (0: no entry)
   * and evicts the oldest other keys past the cap; returns `written` (null: nothing written) and
   * `current` (the version before, null for none).
   */
  kvSet: string;
  /**
   * $1 user, $2 agent, $3 session, $4 n. The session's last n entries (with `seq`, in no set order); when it
   * has none, one row of nulls if the session is the caller's; no row when it is not. One statement where
   * reading the session after an empty read takes a second; the session's row is read only then.
   */
  transcriptLast: string;
  /** $1 limit. Every pending session, the longest waiting first. */
  pending: string;
  /** $1 user, $2 agent, $3 limit. One user's (+ agent's) pending sessions, the longest waiting first. */
  pendingOf: string;
  /**
   * $1 user, $2 agent, $3 session, $4 mark, $5 cap. Returns the row when cleared, and then evicts the entries
   * past the cap that the appends kept while the session was pending.
   */
  clearPending: string;
}

export function sessionStatements(schema: string): SessionStatements {
  const sessions = `"${schema}"."sessions"`;
  const transcript = `"${schema}"."session_transcript"`;
  const kv = `"${schema}"."session_kv"`;
  const ofSession = 'user_id = $1 and agent_id = $2 and session_id = $3';
  const pendingColumns = `select user_id, agent_id, id, pending_mark::text as mark, pending_since::text as since
    from ${sessions}`;
  // Ties in code-unit order, as core sorts (`byWaiting`), whatever the database's collation.
  const waiting = 'order by pending_since, user_id collate "C", agent_id collate "C", id collate "C"';
  return {
    append: `with s as (
        update ${sessions} set
          transcript_seq = transcript_seq + $4::bigint,
          pending_mark = pending_mark + $5::int,
          pending_since = case when $5::int = 1 then coalesce(pending_since, $6::timestamptz) else pending_since end
        where user_id = $1 and agent_id = $2 and id = $3
        returning transcript_seq, pending_since
      ), added as (
        insert into ${transcript}
          (user_id, agent_id, session_id, seq, role, content, tool_calls, tool_call_id, name, ts, turn_id)
        select $1, $2, $3, s.transcript_seq - $4::bigint + e.n, e.role, e.content, e.tool_calls, e.tool_call_id,
          e.name, $6::timestamptz, e.turn_id
        from s, json_to_recordset($7::json) as e(n bigint, role text, content text, tool_calls json,
          tool_call_id text, name text, turn_id text)
      ), evicted as (
        delete from ${transcript} as t
        where t.user_id = $1 and t.agent_id = $2 and t.session_id = $3
          -- A bound computed once (pending: 0, nothing) is the index range's end; joined to \`s\`, it was a
          -- filter the planner applied to every entry of the session.
          and t.seq <= (select case when s.pending_since is null then s.transcript_seq - $8::bigint else 0 end
            from s)
      )
      select transcript_seq from s`,
    lockKv: `update ${sessions} set kv_ord = kv_ord + 1 where user_id = $1 and agent_id = $2 and id = $3
      returning kv_ord`,
    kvSet: `with s as (
        select kv_ord from ${sessions} where user_id = $1 and agent_id = $2 and id = $3
      ), current as (
        select version from ${kv} where ${ofSession} and key = $4
      ), written as (
        insert into ${kv} (user_id, agent_id, session_id, key, value, ts, ord, version)
        select $1, $2, $3, $4, $5, $6::timestamptz, s.kv_ord, coalesce((select version from current), 0) + 1
        from s
        where $7::int is null or $7::int = coalesce((select version from current), 0)
        on conflict (user_id, agent_id, session_id, key) do update
          set value = excluded.value, ts = excluded.ts, ord = excluded.ord, version = excluded.version
        returning version
      ), evicted as (
        delete from ${kv}
        where ${ofSession} and key <> $4 and exists (select 1 from written)
          and ord <= (select ord from ${kv} where ${ofSession} and key <> $4
                      order by ord desc offset $8::int - 1 limit 1)
      )
      select (select version from written) as written, (select version from current) as current`,
    // Ordered by the column, qualified: a bare `seq` would name the text output column (`'99' > '600'`).
    transcriptLast: `with last as (
        select t.seq::text as seq, role, content, tool_calls::text as tool_calls, tool_call_id, name,
          ts::text as ts, turn_id
        from ${transcript} as t where ${ofSession} order by t.seq desc limit $4
      )
      select * from last
      union all
      select null, null, null, null, null, null, null, null from ${sessions}
      where user_id = $1 and agent_id = $2 and id = $3 and not exists (select from last)`,
    pending: `${pendingColumns} where pending_since is not null ${waiting} limit $1`,
    pendingOf: `${pendingColumns} where user_id = $1 and agent_id = $2 and pending_since is not null
      ${waiting} limit $3`,
    clearPending: `with s as (
        update ${sessions} set pending_since = null
        where user_id = $1 and agent_id = $2 and id = $3 and pending_mark = $4 and pending_since is not null
        returning id, transcript_seq
      ), evicted as (
        delete from ${transcript} as t
        where t.user_id = $1 and t.agent_id = $2 and t.session_id = $3
          and t.seq <= (select s.transcript_seq - $5::bigint from s)
      )
      select id from s`,
  };
}
