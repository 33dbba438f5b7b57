export { canStartPgBouncer, PrivatePgBouncer, type PrivatePgBouncerOptions } from './pgbouncer.js';
export { freePort } from './ports.js';
export {
  canStartPostgres,
  PrivatePostgres,
  type PrivatePostgresOptions,
  postgresBinDir,
} from './postgres.js';
export { PrivateRedis, type PrivateRedisOptions } from './redis.js';
