ALTER TABLE "session_transcript" ADD COLUMN "turn_id" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "transcript_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "kv_ord" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "pending_mark" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "pending_since" timestamp (3) with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "session_transcript_turn_idx" ON "session_transcript" USING btree ("user_id","agent_id","session_id","turn_id") WHERE "session_transcript"."turn_id" is not null;--> statement-breakpoint
CREATE INDEX "sessions_pending_idx" ON "sessions" USING btree ("pending_since") WHERE "sessions"."pending_since" is not null;--> statement-breakpoint
-- Hand-written below: sessions written before this migration take up their transcript and k-v positions.
UPDATE "sessions" AS s SET
  "transcript_seq" = coalesce((SELECT max(t."seq") FROM "session_transcript" AS t
    WHERE t."user_id" = s."user_id" AND t."agent_id" = s."agent_id" AND t."session_id" = s."id"), 0),
  "kv_ord" = coalesce((SELECT max(k."ord") FROM "session_kv" AS k
    WHERE k."user_id" = s."user_id" AND k."agent_id" = s."agent_id" AND k."session_id" = s."id"), 0);
