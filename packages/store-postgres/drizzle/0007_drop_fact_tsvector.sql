DROP INDEX "facts_search_idx";--> statement-breakpoint
ALTER TABLE "facts" DROP COLUMN "search";