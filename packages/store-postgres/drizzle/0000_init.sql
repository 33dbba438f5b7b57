CREATE TABLE "details" (
	"user_id" text NOT NULL,
	"id" text NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "details_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"agent_id" text DEFAULT '' NOT NULL,
	"thread_id" text DEFAULT '' NOT NULL,
	"type" text NOT NULL,
	"description" text NOT NULL,
	"summary" text,
	"content" text NOT NULL,
	"token_count" integer NOT NULL,
	"metadata" json NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"is_active" boolean NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, "description" || ' ' || coalesce("summary", '') || ' ' || replace("type", '_', ' ') || ' ' || left("content", 250000))) STORED NOT NULL,
	CONSTRAINT "details_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE TABLE "document_chunks" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"document_id" text NOT NULL,
	"chunk_index" integer NOT NULL,
	"text" text NOT NULL,
	"token_count" integer NOT NULL,
	"search" "tsvector" NOT NULL,
	CONSTRAINT "document_chunks_pk" PRIMARY KEY("user_id","agent_id","document_id","chunk_index")
);
--> statement-breakpoint
CREATE TABLE "documents" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"id" text NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "documents_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"title" text NOT NULL,
	"description" text,
	"tags" json NOT NULL,
	"tag_keys" text[] NOT NULL,
	"source" json NOT NULL,
	"text" text NOT NULL,
	"token_count" integer NOT NULL,
	"metadata" json NOT NULL,
	"added_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "documents_pk" PRIMARY KEY("user_id","agent_id","id")
);
--> statement-breakpoint
CREATE TABLE "facts" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"id" text NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "facts_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"title" text,
	"content" text NOT NULL,
	"category" text NOT NULL,
	"tags" json NOT NULL,
	"tag_keys" text[] NOT NULL,
	"metadata" json NOT NULL,
	"provenance" json NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, coalesce("title", '') || ' ' || left("content", 250000) || ' ' || regexp_replace("category", '[/_-]', ' ', 'g')) || to_tsvector('english'::regconfig, "tags")) STORED NOT NULL,
	CONSTRAINT "facts_pk" PRIMARY KEY("user_id","agent_id","id")
);
--> statement-breakpoint
CREATE TABLE "plans" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"thread_id" text NOT NULL,
	"id" text NOT NULL,
	"goal" text NOT NULL,
	"steps" json NOT NULL,
	"context_notes" json NOT NULL,
	"is_complete" boolean NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"completed_at" timestamp (3) with time zone,
	CONSTRAINT "plans_pk" PRIMARY KEY("user_id","agent_id","thread_id")
);
--> statement-breakpoint
CREATE TABLE "session_kv" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"session_id" text NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	"ts" timestamp (3) with time zone NOT NULL,
	"ord" bigint NOT NULL,
	CONSTRAINT "session_kv_pk" PRIMARY KEY("user_id","agent_id","session_id","key")
);
--> statement-breakpoint
CREATE TABLE "session_transcript" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"session_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"role" text NOT NULL,
	"content" text NOT NULL,
	"tool_calls" json,
	"tool_call_id" text,
	"name" text,
	"ts" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "session_transcript_pk" PRIMARY KEY("user_id","agent_id","session_id","seq")
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"id" text NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "sessions_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"store_types" json NOT NULL,
	"title" text,
	"metadata" json NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "sessions_pk" PRIMARY KEY("user_id","agent_id","id")
);
--> statement-breakpoint
CREATE TABLE "working_entries" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"key" text NOT NULL,
	"namespace" text GENERATED ALWAYS AS (split_part("key", '/', 1) || '/' || split_part("key", '/', 2)) STORED NOT NULL,
	"root" text GENERATED ALWAYS AS (split_part("key", '/', 1)) STORED NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "working_entries_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"value" text NOT NULL,
	"category" text,
	"tags" json NOT NULL,
	"tag_keys" text[] NOT NULL,
	"stored_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, regexp_replace("key", '[/_.-]', ' ', 'g') || ' ' || coalesce(regexp_replace("category", '[/_-]', ' ', 'g'), '') || ' ' || left("value", 250000)) || to_tsvector('english'::regconfig, "tags")) STORED NOT NULL,
	CONSTRAINT "working_entries_pk" PRIMARY KEY("user_id","agent_id","key")
);
--> statement-breakpoint
ALTER TABLE "document_chunks" ADD CONSTRAINT "document_chunks_document_fk" FOREIGN KEY ("user_id","agent_id","document_id") REFERENCES "public"."documents"("user_id","agent_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_kv" ADD CONSTRAINT "session_kv_session_fk" FOREIGN KEY ("user_id","agent_id","session_id") REFERENCES "public"."sessions"("user_id","agent_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_transcript" ADD CONSTRAINT "session_transcript_session_fk" FOREIGN KEY ("user_id","agent_id","session_id") REFERENCES "public"."sessions"("user_id","agent_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "details_seq_idx" ON "details" USING btree ("user_id","seq");--> statement-breakpoint
CREATE INDEX "details_search_idx" ON "details" USING gin ("search");--> statement-breakpoint
CREATE INDEX "document_chunks_search_idx" ON "document_chunks" USING gin ("search");--> statement-breakpoint
CREATE INDEX "documents_seq_idx" ON "documents" USING btree ("user_id","agent_id","seq");--> statement-breakpoint
CREATE INDEX "facts_created_idx" ON "facts" USING btree ("user_id","agent_id","created_at","seq");--> statement-breakpoint
CREATE INDEX "facts_updated_idx" ON "facts" USING btree ("user_id","agent_id","updated_at");--> statement-breakpoint
CREATE INDEX "facts_search_idx" ON "facts" USING gin ("search");--> statement-breakpoint
CREATE INDEX "session_kv_ord_idx" ON "session_kv" USING btree ("user_id","agent_id","session_id","ord");--> statement-breakpoint
CREATE INDEX "sessions_seq_idx" ON "sessions" USING btree ("user_id","agent_id","seq");--> statement-breakpoint
CREATE INDEX "working_entries_namespace_idx" ON "working_entries" USING btree ("user_id","agent_id","namespace","seq");--> statement-breakpoint
CREATE INDEX "working_entries_expires_idx" ON "working_entries" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "working_entries_search_idx" ON "working_entries" USING gin ("search");