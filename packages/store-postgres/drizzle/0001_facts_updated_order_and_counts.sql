CREATE TABLE "fact_counts" (
	"user_id" text NOT NULL,
	"agent_id" text DEFAULT '' NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "fact_counts_pk" PRIMARY KEY("user_id","agent_id")
);
--> statement-breakpoint
DROP INDEX "facts_updated_idx";--> statement-breakpoint
CREATE INDEX "facts_updated_idx" ON "facts" USING btree ("user_id","agent_id","updated_at" DESC NULLS FIRST,"created_at" DESC NULLS FIRST,"id" collate "C");