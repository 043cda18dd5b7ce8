// node-postgres (pg, pg-cursor) through shardwire: parameters, a named prepared statement reused,
// a transaction, a batch of inserts, an error, a cursor. pg has no COPY of its own.
// Usage: node pg_check.js URL MODE TENANT TAG
'use strict';
const { Client } = require('pg');
const Cursor = require('pg-cursor');
const { PARAM_VALUES, PARAMS_EXPECTED, TXN_QTYS, BATCH_QTYS, args, formatParams, put, fail } = require('./driver_check');

async function main() {
  const { url, mode, tenant, tag } = args();
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 10000 });
  await client.connect();
  put('connect', 'ok', 'ok');
  put('select1', (await client.query('SELECT 1 AS v')).rows[0].v, 1);

  const p = await client.query({
    text: 'SELECT $1::int, $2::text, $3::numeric, $4::timestamptz, $5::bytea, $6::text',
    values: PARAM_VALUES, rowMode: 'array',
  });
  put('params', formatParams(p.rows[0]), PARAMS_EXPECTED);

  let total = 0;
  for (let i = 1; i <= 7; ++i)
    total += (await client.query({ name: 'twice', text: 'SELECT $1::int * 2 AS v', values: [i] })).rows[0].v;
  put('prepared', total, 56);

  const insert = 'INSERT INTO orders (tenant_id, note, qty) VALUES ($1, $2, $3)';
  await client.query('BEGIN');
  for (const [i, qty] of TXN_QTYS.entries())
    await client.query({ name: 'ins', text: insert, values: [tenant.toString(), `${tag}-txn-${i}`, qty] });
  await client.query('COMMIT');
  put('txn', TXN_QTYS.length, 3);

  // pg queues these and sends each as soon as the previous one completes.
  await client.query('BEGIN');
  await Promise.all(BATCH_QTYS.map((qty, i) =>
    client.query({ name: 'ins', text: insert, values: [tenant.toString(), `${tag}-batch-${i}`, qty] })));
  await client.query('COMMIT');
  put('batch', BATCH_QTYS.length, 5);

  await client.query('BEGIN');
  await client.query({ name: 'ins', text: insert, values: [tenant.toString(), `${tag}-rollback`, 100] });
  await client.query('ROLLBACK');
  put('rollback', Number((await client.query('SELECT count(*) AS n FROM orders WHERE tenant_id = $1 AND note = $2', [tenant.toString(), `${tag}-rollback`])).rows[0].n), 0);

  const counts = [];
  for (let i = 0; i < 6; ++i)
    counts.push(Number((await client.query({ name: 'keyed', text: 'SELECT count(*) AS n FROM orders WHERE tenant_id = $1 AND note LIKE $2', values: [tenant.toString(), `${tag}-%`] })).rows[0].n));
  put('keyed', counts.join(','), '8,8,8,8,8,8');

  try {
    await client.query('SELECT * FROM no_such_table_for_drivers');
    put('error', 'none', '42P01');
  } catch (e) {
    put('error', e.code, '42P01');
  }
  put('after_error', (await client.query('SELECT 1 AS v')).rows[0].v, 1);

  await client.query('BEGIN');
  const cursor = client.query(new Cursor('SELECT qty FROM orders WHERE tenant_id = $1 AND note LIKE $2 ORDER BY qty', [tenant.toString(), `${tag}-%`]));
  let sum = 0;
  for (;;) {
    const rows = await cursor.read(2);
    if (rows.length === 0) break;
    for (const r of rows) sum += r.qty;
  }
  await cursor.close();
  await client.query('COMMIT');
  put('cursor', sum, 66);

  if (mode === 'session') {
    const pids = new Set();
    for (let i = 0; i < 3; ++i) pids.add((await client.query('SELECT pg_backend_pid() AS p')).rows[0].p);
    put('session_pid', pids.size === 1 ? 'stable' : 'changed', 'stable');
  }
  await client.end();
  console.log('done');
}

main().catch(fail);
