// postgres.js through shardwire: sql.begin with tx.prepare(gid) ends with PREPARE TRANSACTION sent
// as Parse/Describe/Bind/Execute/Sync. The transaction ran on one shard, so shardwire prepares it
// there: the insert is not visible, the connection is idle (the next query is answered, not left
// waiting in an open transaction), and ROLLBACK PREPARED (extended protocol) finds the gid and
// leaves nothing prepared.
// Usage: node postgresjs_prepare_txn_check.js URL MODE TENANT TAG prepare|noprepare
'use strict';
const postgres = require('postgres');
const { args, put, fail } = require('./driver_check');

async function main() {
  const { url, tenant, tag, variant } = args(['prepare', 'noprepare']);
  const sql = postgres(url, { max: 1, prepare: variant === 'prepare', connect_timeout: 10, onnotice: () => {} });
  await sql`SELECT 1`;
  put('connect', 'ok', 'ok');
  const t = tenant.toString();
  const prepared = await sql.begin(async tx => {
    await tx`INSERT INTO orders (tenant_id, note, qty) VALUES (${t}, ${tag + '-prepared'}, 100)`;
    tx.prepare(tag + '_gid');
  }).then(() => 'prepared', err => err.code || String(err));
  put('prepare_txn', prepared, 'prepared');
  // Bounded: a transaction left open made postgres.js wait for this answer forever.
  const answered = await Promise.race([
    sql`SELECT count(*) AS n FROM orders WHERE tenant_id = ${t} AND note = ${tag + '-prepared'}`.then(r => Number(r[0].n)),
    new Promise(resolve => setTimeout(() => resolve('timeout'), 5000).unref()),
  ]);
  put('rollback', answered, 0);
  await sql.unsafe(`ROLLBACK PREPARED '${tag}_gid'`);
  put('prepared_xacts', (await sql`SELECT count(*) AS n FROM pg_prepared_xacts WHERE gid = ${tag + '_gid'}`)[0].n, '0');
  await sql.end({ timeout: 2 });
  console.log('done');
}

main().catch(fail);
