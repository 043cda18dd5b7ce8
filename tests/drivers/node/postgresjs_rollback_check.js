// postgres.js through shardwire: a transaction (sql.begin) that throws rolls back and leaves no
// row. Fails through shardwire today in transaction pooling (see tests/drivers/README.md).
// Usage: node postgresjs_rollback_check.js URL MODE TENANT TAG prepare|noprepare
'use strict';
const postgres = require('postgres');
const { args, put, fail } = require('./driver_check');

async function main() {
  const { url, tenant, tag, variant } = args(['prepare', 'noprepare']);
  const sql = postgres(url, { max: 1, prepare: variant === 'prepare', connect_timeout: 10, onnotice: () => {} });
  await sql`SELECT 1`;
  put('connect', 'ok', 'ok');
  const t = tenant.toString();
  await sql.begin(async tx => {
    await tx`INSERT INTO orders (tenant_id, note, qty) VALUES (${t}, ${tag + '-rollback'}, 100)`;
    throw new Error('roll back');
  }).catch(err => { if (err.message !== 'roll back') throw err; });
  put('rollback', Number((await sql`SELECT count(*) AS n FROM orders WHERE tenant_id = ${t} AND note = ${tag + '-rollback'}`)[0].n), 0);
  await sql.end({ timeout: 5 });
  console.log('done');
}

main().catch(fail);
