// postgres.js through shardwire, with prepared statements (`prepare`) or without
// (`noprepare`: unnamed statements): parameters, a statement reused, `.simple()`, a transaction,
// a multi-row insert, an error, a cursor, COPY both ways. A rolled-back transaction is checked by
// postgresjs_rollback_check.js (it fails through shardwire today).
// Usage: node postgresjs_check.js URL MODE TENANT TAG prepare|noprepare
'use strict';
const { pipeline } = require('stream/promises');
const { Readable } = require('stream');
const postgres = require('postgres');
const { PARAM_VALUES, PARAMS_EXPECTED, TXN_QTYS, BATCH_QTYS, args, formatParams, put, fail } = require('./driver_check');

async function main() {
  const { url, mode, tenant, tag, variant } = args(['prepare', 'noprepare']);
  const sql = postgres(url, { max: 1, prepare: variant === 'prepare', connect_timeout: 10, onnotice: () => {} });
  const first = (await sql`SELECT 1 AS v`)[0].v;  // postgres.js connects on its first query
  put('connect', 'ok', 'ok');
  put('select1', first, 1);
  put('simple', (await sql`SELECT 2 AS v; SELECT 3 AS v`.simple()).map(r => Number(r[0].v)), [2, 3]);

  const [a, b, c, d, e, f] = PARAM_VALUES;
  const p = await sql`SELECT ${a}::int, ${b}::text, ${c}::numeric, ${d}::timestamptz, ${e}::bytea, ${f}::text`.values();
  put('params', formatParams(p[0]), PARAMS_EXPECTED);

  let total = 0;
  for (let i = 1; i <= 7; ++i) total += (await sql`SELECT ${i}::int * 2 AS v`)[0].v;
  put('prepared', total, 56);

  const t = tenant.toString();
  await sql.begin(async tx => {
    for (const [i, qty] of TXN_QTYS.entries())
      await tx`INSERT INTO orders (tenant_id, note, qty) VALUES (${t}, ${`${tag}-txn-${i}`}, ${qty})`;
  });
  put('txn', TXN_QTYS.length, 3);

  const rows = BATCH_QTYS.map((qty, i) => ({ tenant_id: t, note: `${tag}-batch-${i}`, qty }));
  await sql.begin(async tx => { await tx`INSERT INTO orders ${tx(rows, 'tenant_id', 'note', 'qty')}`; });
  put('batch', BATCH_QTYS.length, 5);

  const counts = [];
  for (let i = 0; i < 6; ++i)
    counts.push(Number((await sql`SELECT count(*) AS n FROM orders WHERE tenant_id = ${t} AND note LIKE ${tag + '-%'}`)[0].n));
  put('keyed', counts.join(','), '8,8,8,8,8,8');

  try {
    await sql`SELECT * FROM no_such_table_for_drivers`;
    put('error', 'none', '42P01');
  } catch (err) {
    put('error', err.code, '42P01');
  }
  put('after_error', (await sql`SELECT 1 AS v`)[0].v, 1);

  let sum = 0;
  await sql.begin(async tx => {
    await tx`SELECT qty FROM orders WHERE tenant_id = ${t} AND note LIKE ${tag + '-%'} ORDER BY qty`
      .cursor(2, batch => { for (const r of batch) sum += r.qty; });
  });
  put('cursor', sum, 66);

  const table = `copy_${tag}`;
  await sql`DROP TABLE IF EXISTS ${sql(table)}`;
  await sql`CREATE TABLE ${sql(table)} (id int, note text)`;
  await pipeline(Readable.from(['1\ta\n', '2\tb\n', '3\tc\n']), await sql`COPY ${sql(table)} (id, note) FROM STDIN`.writable());
  put('copy_in', Number((await sql`SELECT count(*) AS n FROM ${sql(table)}`)[0].n), 3);
  let out = '';
  for await (const chunk of await sql`COPY (SELECT id, note FROM ${sql(table)} ORDER BY id) TO STDOUT`.readable())
    out += chunk.toString();
  put('copy_out', out.trim().split('\n').map(l => l.replace('\t', '|')).join(','), '1|a,2|b,3|c');

  if (mode === 'session') {
    const pids = new Set();
    for (let i = 0; i < 3; ++i) pids.add((await sql`SELECT pg_backend_pid() AS p`)[0].p);
    put('session_pid', pids.size === 1 ? 'stable' : 'changed', 'stable');
  }
  await sql.end({ timeout: 5 });
  console.log('done');
}

main().catch(fail);
