// ddb_throttle_proxy.js - a fault-injecting HTTP proxy in front of DynamoDB
// (Local) for tests/e2e/ddb_store.sh: answers a share of the calls with a
// ThrottlingException (HTTP 400, nothing forwarded) and forwards the rest.
//
//   node ddb_throttle_proxy.js TARGET_URL SHARE
//
// Listens on a free loopback port and prints it on stdout.  GET /__stats
// answers {"throttled":N,"forwarded":M}.  The choice is a fixed pseudo-random
// sequence, so runs are repeatable.
'use strict';
const http = require('http');

const target = new URL(process.argv[2]);
const share = Number(process.argv[3] || '0.3');
let seed = 12345;
let throttled = 0;
let forwarded = 0;

function rand() {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/__stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ throttled, forwarded }));
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (rand() < share) {
      throttled++;
      const msg = JSON.stringify({
        __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
        message: 'Rate of requests exceeds the allowed throughput.',
      });
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(msg);
      return;
    }
    forwarded++;
    // Headers unchanged: the signature covers Host (DynamoDB Local does not check it).
    const headers = req.headers;
    const up = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (ur) => {
        res.writeHead(ur.statusCode, ur.headers);
        ur.pipe(res);
      }
    );
    up.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    up.end(body);
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(server.address().port + '\n');
});
process.on('SIGTERM', () => process.exit(0));
