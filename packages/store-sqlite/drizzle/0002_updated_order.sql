DROP INDEX `kioku_facts_updated`;--> statement-breakpoint
CREATE INDEX `kioku_facts_updated` ON `kioku_facts` (`user_id`,`agent_id`,"updated_at" desc,"created_at" desc,`id`);