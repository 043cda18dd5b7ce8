// Shared contract of the Node.js driver checks (see tests/drivers/README.md): each check prints
// `key=value` once its value is exactly the expected one; a wrong value ends the process with
// exit code 1 and `FAIL key: got ... want ...` on stderr.
'use strict';

const PARAM_VALUES = [42, 'h\u00e9llo', '12.50', new Date(Date.UTC(2024, 0, 2, 3, 4, 5)), Buffer.from([0, 255]), null];
const PARAMS_EXPECTED = '42|h\u00e9llo|12.50|1704164645|00ff|null';
const TXN_QTYS = [1, 2, 3];
const BATCH_QTYS = [10, 11, 12, 13, 14];

function args(variants) {
  const [url, mode, tenant, tag, variant] = process.argv.slice(2);
  if (!url || !['transaction', 'session'].includes(mode) || !tenant || !tag ||
      (variants ? !variants.includes(variant) : variant !== undefined)) {
    console.error(`usage: ${process.argv[1]} URL transaction|session TENANT TAG${variants ? ' ' + variants.join('|') : ''}`);
    process.exit(2);
  }
  return { url, mode, tenant: BigInt(tenant), tag, variant };
}

function formatParams(row) {
  const [n, t, num, ts, b, nul] = row;
  return [String(n), t, String(num), String(Math.floor(ts.getTime() / 1000)), Buffer.from(b).toString('hex'),
    nul === null ? 'null' : JSON.stringify(nul)].join('|');
}

function put(key, got, want) {
  const g = typeof got === 'string' ? got : JSON.stringify(got);
  const w = typeof want === 'string' ? want : JSON.stringify(want);
  if (g !== w) {
    console.error(`FAIL ${key}: got ${g} want ${w}`);
    process.exit(1);
  }
  console.log(`${key}=${g}`);
}

function fail(err) {
  console.error(`FAIL: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
}

module.exports = { PARAM_VALUES, PARAMS_EXPECTED, TXN_QTYS, BATCH_QTYS, args, formatParams, put, fail };
