CREATE TABLE `kioku_details` (
	`seq` integer PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`id` text NOT NULL,
	`agent_id` text,
	`thread_id` text,
	`type` text NOT NULL,
	`description` text NOT NULL,
	`summary` text,
	`content` text NOT NULL,
	`token_count` integer NOT NULL,
	`metadata` text NOT NULL,
	`created_at` text NOT NULL,
	`active` integer NOT NULL,
	`search_terms` text NOT NULL,
	`search_length` integer NOT NULL,
	`search_scope` text GENERATED ALWAYS AS ('p' || hex("user_id")) VIRTUAL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `kioku_details_id` ON `kioku_details` (`user_id`,`id`);--> statement-breakpoint
CREATE INDEX `kioku_details_user` ON `kioku_details` (`user_id`);--> statement-breakpoint
CREATE TABLE `kioku_document_chunks` (
	`seq` integer PRIMARY KEY NOT NULL,
	`document_seq` integer NOT NULL,
	`user_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`chunk_index` integer NOT NULL,
	`text` text NOT NULL,
	`token_count` integer NOT NULL,
	`search_terms` text NOT NULL,
	`search_length` integer NOT NULL,
	`search_scope` text GENERATED ALWAYS AS ('p' || hex("user_id" || '/' || "agent_id")) VIRTUAL,
	FOREIGN KEY (`document_seq`) REFERENCES `kioku_documents`(`seq`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `kioku_document_chunks_index` ON `kioku_document_chunks` (`document_seq`,`chunk_index`);--> statement-breakpoint
CREATE TABLE `kioku_documents` (
	`seq` integer PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`id` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`tags` text NOT NULL,
	`source` text NOT NULL,
	`text` text NOT NULL,
	`token_count` integer NOT NULL,
	`metadata` text NOT NULL,
	`added_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `kioku_documents_id` ON `kioku_documents` (`user_id`,`agent_id`,`id`);--> statement-breakpoint
CREATE TABLE `kioku_facts` (
	`seq` integer PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`id` text NOT NULL,
	`title` text,
	`content` text NOT NULL,
	`category` text NOT NULL,
	`tags` text NOT NULL,
	`metadata` text NOT NULL,
	`provenance` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`search_terms` text NOT NULL,
	`search_length` integer NOT NULL,
	`search_scope` text GENERATED ALWAYS AS ('p' || hex("user_id" || '/' || "agent_id")) VIRTUAL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `kioku_facts_id` ON `kioku_facts` (`user_id`,`agent_id`,`id`);--> statement-breakpoint
CREATE INDEX `kioku_facts_created` ON `kioku_facts` (`user_id`,`agent_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `kioku_facts_updated` ON `kioku_facts` (`user_id`,`agent_id`,`updated_at`);--> statement-breakpoint
CREATE INDEX `kioku_facts_category` ON `kioku_facts` (`user_id`,`agent_id`,`category`);--> statement-breakpoint
CREATE TABLE `kioku_meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `kioku_plans` (
	`seq` integer PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`id` text NOT NULL,
	`goal` text NOT NULL,
	`steps` text NOT NULL,
	`context_notes` text NOT NULL,
	`is_complete` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`completed_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `kioku_plans_thread` ON `kioku_plans` (`user_id`,`agent_id`,`thread_id`);--> statement-breakpoint
CREATE TABLE `kioku_search_stats` (
	`table_name` text NOT NULL,
	`scope` text NOT NULL,
	`rows` integer NOT NULL,
	`terms` integer NOT NULL,
	PRIMARY KEY(`table_name`, `scope`)
);
--> statement-breakpoint
CREATE TABLE `kioku_session_kv` (
	`seq` integer PRIMARY KEY NOT NULL,
	`session_seq` integer NOT NULL,
	`position` integer NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`ts` text NOT NULL,
	FOREIGN KEY (`session_seq`) REFERENCES `kioku_sessions`(`seq`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `kioku_session_kv_key` ON `kioku_session_kv` (`session_seq`,`key`);--> statement-breakpoint
CREATE INDEX `kioku_session_kv_position` ON `kioku_session_kv` (`session_seq`,`position`);--> statement-breakpoint
CREATE TABLE `kioku_session_transcript` (
	`seq` integer PRIMARY KEY NOT NULL,
	`session_seq` integer NOT NULL,
	`position` integer NOT NULL,
	`role` text NOT NULL,
	`content` text NOT NULL,
	`tool_calls` text,
	`tool_call_id` text,
	`name` text,
	`ts` text NOT NULL,
	FOREIGN KEY (`session_seq`) REFERENCES `kioku_sessions`(`seq`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `kioku_session_transcript_position` ON `kioku_session_transcript` (`session_seq`,`position`);--> statement-breakpoint
CREATE TABLE `kioku_sessions` (
	`seq` integer PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`id` text NOT NULL,
	`store_types` text NOT NULL,
	`title` text,
	`metadata` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `kioku_sessions_id` ON `kioku_sessions` (`user_id`,`agent_id`,`id`);--> statement-breakpoint
CREATE TABLE `kioku_working` (
	`seq` integer PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`key` text NOT NULL,
	`namespace` text NOT NULL,
	`value` text NOT NULL,
	`stored_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`expires_ms` integer NOT NULL,
	`category` text,
	`tags` text NOT NULL,
	`search_terms` text NOT NULL,
	`search_length` integer NOT NULL,
	`search_scope` text GENERATED ALWAYS AS ('p' || hex("user_id" || '/' || "agent_id")) VIRTUAL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `kioku_working_key` ON `kioku_working` (`user_id`,`agent_id`,`key`);--> statement-breakpoint
CREATE INDEX `kioku_working_namespace` ON `kioku_working` (`user_id`,`agent_id`,`namespace`);--> statement-breakpoint
CREATE INDEX `kioku_working_expiry` ON `kioku_working` (`expires_ms`);