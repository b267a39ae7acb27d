#!/usr/bin/env node
// tests/e2e/webhook_receiver.js - a tiny webhook receiver for webhooks.sh.
//
//   node webhook_receiver.js PORT_FILE LOG_FILE [FAIL_FIRST [PORT]]
//
// Listens on 127.0.0.1 (PORT, default an ephemeral one; written to PORT_FILE), appends one
// JSON line per request to LOG_FILE: {"method","path","headers","body","status","receivedAt"}
// (receivedAt: epoch ms, for bench/webhook_bench.sh).
// Answers 500 to the first FAIL_FIRST requests (default 0) and 200 after;
// any path starting with /always500 always gets 500, /slow waits 10 s.
'use strict';
const http = require('http');
const fs = require('fs');

const [portFile, logFile, failFirstArg, portArg] = process.argv.slice(2);
let failLeft = parseInt(failFirstArg || '0', 10);

const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
        if (req.url === '/warmup') { /* rx_start: not logged, counts nothing */
            res.writeHead(204);
            res.end();
            return;
        }
        let status = 200;
        if (req.url.startsWith('/always500')) status = 500;
        else if (failLeft > 0) { failLeft--; status = 500; }
        const rec = {
            method: req.method,
            path: req.url,
            headers: req.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            status,
            receivedAt: Date.now(),
        };
        fs.appendFileSync(logFile, JSON.stringify(rec) + '\n');
        const answer = () => {
            res.writeHead(status, {'Content-Type': 'application/json'});
            res.end(JSON.stringify({ok: status === 200}));
        };
        if (req.url.startsWith('/slow')) setTimeout(answer, 10000);
        else answer();
    });
});
server.listen(parseInt(portArg || '0', 10), '127.0.0.1', () => {
    fs.writeFileSync(portFile + '.tmp', String(server.address().port) + '\n');
    fs.renameSync(portFile + '.tmp', portFile);
});
process.on('SIGTERM', () => process.exit(0));
