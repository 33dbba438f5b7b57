ALTER TABLE `kioku_facts` ADD `version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `kioku_plans` ADD `version` integer DEFAULT 1 NOT NULL;