export {
  type PgvectorTestServer,
  type PgvectorTestServerOptions,
  startPgvectorTestServer,
} from './server.js';
