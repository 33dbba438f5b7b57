CREATE TABLE "fact_terms" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"term" text NOT NULL,
	"df" bigint NOT NULL,
	CONSTRAINT "fact_terms_pk" PRIMARY KEY("user_id","agent_id","term")
);
--> statement-breakpoint
ALTER TABLE "fact_counts" ADD COLUMN "terms" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "facts" ADD COLUMN "search_terms" text;--> statement-breakpoint
ALTER TABLE "facts" ADD COLUMN "search_length" integer;--> statement-breakpoint
CREATE INDEX "facts_terms_idx" ON "facts" USING gin (string_to_array("search_terms", ' '));--> statement-breakpoint
CREATE INDEX "facts_unanalysed_idx" ON "facts" USING btree ("user_id") WHERE "facts"."search_terms" is null;