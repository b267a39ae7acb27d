#!/usr/bin/env node
// tests/e2e/ddb_detect.js - DynamoDB Local helper for ddb_detect.sh: writes
// products and scans laid out as the API writes them, and summarises what
// the detector wrote.
//
//   node ddb_detect.js URL TABLE geo PREFIX N       N products PREFIX-<i>, each scanned from
//                                                   US, FR, JP within an hour (one geographic alert)
//   node ddb_detect.js URL TABLE burst PID          one product scanned 12 times in 22 minutes
//                                                   (one burst alert, count 3)
//   node ddb_detect.js URL TABLE orphan PID         one tampered scan of PID, a product
//                                                   that does not exist (yet): parked
//   node ddb_detect.js URL TABLE product PID        writes PID's META (scanCount 0)
//   node ddb_detect.js URL TABLE counts PID BRAND   prints {"scanCount","brandScans","dlq"}
//   node ddb_detect.js URL TABLE stats BRAND        prints {"geo","burst","counts":{type:[...]},
//                                                   "threatCount","opslog","leases":[...]}
'use strict';
const path = require('path');
const { DynamoDBClient, PutItemCommand, ScanCommand } = require(
    path.join(__dirname, '..', 'node_modules', '@aws-sdk', 'client-dynamodb'));

const [url, table, cmd, ...args] = process.argv.slice(2);
const client = new DynamoDBClient({
    endpoint: url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
});
const BRAND = 'b-e2e';
const T0 = Date.parse('2026-06-20T10:00:00.000Z');

function av(v) {
    if (typeof v === 'string') return { S: v };
    if (typeof v === 'number') return { N: String(v) };
    if (typeof v === 'boolean') return { BOOL: v };
    throw new Error('unsupported value');
}

function put(item) {
    const m = {};
    for (const [k, v] of Object.entries(item)) m[k] = av(v);
    return client.send(new PutItemCommand({ TableName: table, Item: m }));
}

function iso(ms) {
    return new Date(ms).toISOString();
}

async function product(pid) {
    await put({
        PK: `PRODUCT#${pid}`, SK: 'META', GSI1PK: `BRAND#${BRAND}`,
        GSI1SK: 'PRODUCT#2026-06-01T00:00:00.000Z', productId: pid, brandId: BRAND,
        name: 'E2E product', createdAt: '2026-06-01T00:00:00.000Z', status: 'active',
        scanCount: 0,
    });
}

let scanNo = 0;
async function scan(pid, ms, country, result = 'authentic') {
    const ts = iso(ms);
    const id = `${process.pid.toString(16)}${(++scanNo).toString(16).padStart(6, '0')}`;
    await put({
        PK: `PRODUCT#${pid}`, SK: `SCAN#${ts}#${id}`, productId: pid, timestamp: ts,
        ip: '198.51.100.1', country, city: 'Somewhere', userAgent: 'Mozilla/5.0',
        result, scanId: id,
    });
}

async function scanAll() {
    const items = [];
    let start;
    do {
        const r = await client.send(new ScanCommand({
            TableName: table, ExclusiveStartKey: start, ConsistentRead: true }));
        items.push(...r.Items);
        start = r.LastEvaluatedKey;
    } while (start);
    return items;
}

async function main() {
    if (cmd === 'geo') {
        const [prefix, n] = [args[0], parseInt(args[1], 10)];
        for (let i = 0; i < n; i++) await product(`${prefix}-${i}`);
        const cc = ['US', 'FR', 'JP'];
        for (let c = 0; c < 3; c++) {
            const jobs = [];
            for (let i = 0; i < n; i++) jobs.push(scan(`${prefix}-${i}`, T0 + c * 600000 + i, cc[c]));
            await Promise.all(jobs);
        }
    } else if (cmd === 'burst') {
        await product(args[0]);
        for (let i = 0; i < 12; i++) await scan(args[0], T0 + i * 120000, 'US');
    } else if (cmd === 'orphan') {
        await scan(args[0], T0, 'US', 'suspicious');
    } else if (cmd === 'product') {
        await product(args[0]);
    } else if (cmd === 'counts') {
        const items = await scanAll();
        const out = { scanCount: null, brandScans: null, dlq: 0 };
        for (const it of items) {
            const pk = it.PK.S, sk = it.SK.S;
            if (pk === `PRODUCT#${args[0]}` && sk === 'META' && it.scanCount)
                out.scanCount = Number(it.scanCount.N);
            else if (pk === `BRAND#${args[1]}` && sk === 'STATS' && it.scanCount)
                out.brandScans = Number(it.scanCount.N);
            else if (pk.startsWith('DLQ#'))
                out.dlq++;
        }
        process.stdout.write(JSON.stringify(out) + '\n');
    } else if (cmd === 'stats') {
        const items = await scanAll();
        const out = { geo: 0, burst: 0, counts: {}, threatCount: 0, opslog: 0, leases: [] };
        for (const it of items) {
            const pk = it.PK.S;
            if (pk.startsWith('THREAT#')) {
                const type = it.type.S;
                if (type === 'geographic_anomaly') out.geo++;
                if (type === 'burst_scan') out.burst++;
                (out.counts[type] = out.counts[type] || []).push(Number(it.count.N));
            } else if (pk === `BRAND#${args[0]}` && it.SK.S === 'STATS') {
                out.threatCount = Number(it.threatCount.N);
            } else if (pk.startsWith('OPS_LOG#')) {
                out.opslog++;
            } else if (pk.startsWith('LEASE#') && it.shardId) {
                out.leases.push({ shard: it.shardId.S, owner: it.owner.S,
                    expiresAt: Number(it.expiresAt.N) });
            }
        }
        process.stdout.write(JSON.stringify(out) + '\n');
    } else {
        throw new Error(`unknown command ${cmd}`);
    }
}

main().catch((e) => {
    process.stderr.write(`ddb_detect.js: ${e.stack || e}\n`);
    process.exit(1);
});
