#!/usr/bin/env node
// tests/e2e/sse_client.js - an independent Server-Sent Events client for
// tests/e2e/sse.sh, built on the `eventsource` npm package (v4, pinned in
// tests/package.json), so the server is checked against a real client's
// parsing, Last-Event-ID and reconnection rules rather than our own.
//
//   node sse_client.js es URL OUTFILE [--auth "Bearer KEY"] [--seconds N]
//       Opens an EventSource on URL and appends one JSON line per
//       happening to OUTFILE: {"ev":"open"}, {"ev":"error","msg":...},
//       {"ev":"<event name>","id":"<lastEventId>","data":"<raw data>"}.
//       Reconnects on its own (server's retry: hint) and resumes with
//       Last-Event-ID like a browser.  Exits after N seconds (default 60)
//       or on SIGTERM.
//
//   node sse_client.js stall HOST PORT PATH [--auth "Bearer KEY"] [--seconds N]
//       A raw TCP client that sends the request and then never reads:
//       the server must drop it once its output buffer is full.  Prints
//       "stalled" once the request is sent; on SIGUSR1 it reads again and
//       prints "closed <bytes>" when the stream ends (or "timeout <bytes>").
'use strict';

const fs = require('fs');
const net = require('net');

function opt(args, name, def) {
    const i = args.indexOf(name);
    if (i < 0 || i + 1 >= args.length) return def;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
}

function runEventSource(args) {
    const { EventSource } = require('eventsource');
    const auth = opt(args, '--auth', null);
    const seconds = Number(opt(args, '--seconds', '60'));
    const [url, out] = args;
    if (!url || !out) throw new Error('usage: es URL OUTFILE');
    const write = (o) => fs.appendFileSync(out, JSON.stringify(o) + '\n');
    const es = new EventSource(url, {
        fetch: (input, init) => {
            const headers = Object.assign({}, init.headers);
            if (auth) headers.Authorization = auth;
            return fetch(input, Object.assign({}, init, { headers }));
        },
    });
    es.onopen = () => write({ ev: 'open' });
    es.onerror = (e) => write({ ev: 'error', msg: String(e && (e.message || e.code) || '') });
    for (const name of ['connected', 'threat', 'heartbeat', 'scan']) {
        es.addEventListener(name, (e) => write({ ev: name, id: e.lastEventId, data: e.data }));
    }
    const stop = () => {
        es.close();
        process.exit(0);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    setTimeout(stop, seconds * 1000);
}

function runStall(args) {
    const auth = opt(args, '--auth', null);
    const seconds = Number(opt(args, '--seconds', '60'));
    const [host, port, path] = args;
    let bytes = 0;
    const sock = net.connect(Number(port), host, () => {
        let req = `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAccept: text/event-stream\r\n`;
        if (auth) req += `Authorization: ${auth}\r\n`;
        sock.write(req + '\r\n');
        sock.pause(); // never read: the kernel buffers fill, then the server's
        console.log('stalled');
    });
    sock.on('data', (d) => {
        bytes += d.length;
    });
    // SIGUSR1: start reading again and report how the stream ended (a
    // dropped client sees the connection closed after what was queued).
    process.on('SIGUSR1', () => sock.resume());
    sock.on('close', () => {
        console.log(`closed ${bytes}`);
        process.exit(0);
    });
    sock.on('error', () => {});
    setTimeout(() => {
        console.log(`timeout ${bytes}`);
        process.exit(1);
    }, seconds * 1000);
}

const args = process.argv.slice(2);
const mode = args.shift();
if (mode === 'es') runEventSource(args);
else if (mode === 'stall') runStall(args);
else {
    console.error('usage: sse_client.js es|stall ...');
    process.exit(2);
}
